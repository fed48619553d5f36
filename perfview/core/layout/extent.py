"""Where a plot over time should start: past the empty time before anything happened.

A CUDA snapshot recorded from process start, or a memray capture of a slow import, can
spend 85 % of its span at zero before the activity people opened it for; drawn whole, the
activity is a sliver at the right edge (memory_viz starts at the first allocation). The plot
starts where the activity does and offers the whole recording back.
"""

from __future__ import annotations

import numpy as np

# Activity starts where the total first reaches this share of its peak…
ACTIVE_SHARE = 0.02
# …and leading time is trimmed only when it is at least this share of the span.
MIN_BLANK = 0.2
MARGIN = 0.02  # of the kept span, left before the activity so its first step shows


def busy_start(x: np.ndarray, total: np.ndarray) -> float | None:
    """The x a plot of `total` over increasing `x` should start at, or None to show it whole:
    just before `total` first reaches ACTIVE_SHARE of its peak, when the time before that is
    at least MIN_BLANK of the span."""
    x = np.asarray(x, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    if len(x) < 3 or len(total) != len(x):
        return None
    peak = float(np.nanmax(total))
    span = float(x[-1] - x[0])
    if not peak > 0 or not span > 0:
        return None
    first = int(np.argmax(total >= peak * ACTIVE_SHARE))
    start = float(x[max(first - 1, 0)])
    if start - float(x[0]) < MIN_BLANK * span:
        return None
    return max(float(x[0]), start - MARGIN * (float(x[-1]) - start))


__all__ = ["ACTIVE_SHARE", "MIN_BLANK", "busy_start"]
