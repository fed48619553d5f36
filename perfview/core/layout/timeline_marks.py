"""Instant markers and counter tracks of the timeline: where each is drawn, what is under the
cursor. Pure geometry (rows and ns), so tests ask it questions without a display.

Instants: a thread-scoped instant ("s": "t") marks its own thread's track; a process-scoped
one spans every track of its process; a global one spans all the slice tracks. An instant whose
thread has no track of its own falls back to its process's tracks, then to all of them.

Counters: each series is a track with a value axis (its max at the top, its min or zero at the
bottom) and min/max in its label; `value_at` is the step value under the cursor (a counter
keeps its value until the next sample, as trace viewers draw it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.model import Timeline
from perfview.core.model.units import format_bytes


@dataclass(frozen=True)
class InstantMarks:
    """One vertical marker per instant: at `ts`, from row `top` down to row `bottom`."""

    ts: np.ndarray  # int64 ns
    top: np.ndarray  # float64 rows
    bottom: np.ndarray
    source: np.ndarray  # int64 row in Timeline.instants
    scope: np.ndarray  # object: "t", "p", "g"

    def __len__(self) -> int:
        return len(self.ts)


def _extents(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return frame.groupby(keys, sort=False).agg(top=("top", "min"), bottom=("bottom", "max"))


def instant_marks(
    timeline: Timeline,
    pids: np.ndarray,
    tids: np.ndarray,
    offset: np.ndarray,
    height: np.ndarray,
) -> InstantMarks:
    """Markers for `timeline.instants` on the drawn tracks: each track's process and thread
    (-1 for a collapsed process's summary track), first row and height
    (`core.track_arrange.Arrangement`)."""
    ins = timeline.instants
    n = len(ins)
    tracks = pd.DataFrame(
        {
            "pid": np.asarray(pids, dtype=np.int64),
            "tid": np.asarray(tids, dtype=np.int64),
            "top": np.asarray(offset, dtype=np.float64),
            "bottom": np.asarray(offset, dtype=np.float64) + np.asarray(height, dtype=np.float64),
        }
    )
    all_top = float(tracks["top"].min()) if len(tracks) else 0.0
    all_bottom = float(tracks["bottom"].max()) if len(tracks) else 1.0
    top = np.full(n, all_top)
    bottom = np.full(n, all_bottom)
    scope = ins["scope"].astype(str).to_numpy(dtype=object) if n else np.zeros(0, dtype=object)
    if n and len(tracks):
        pid = ins["pid"].to_numpy(dtype=np.int64)
        tid = ins["tid"].to_numpy(dtype=np.int64)
        by_proc = _extents(tracks, ["pid"])
        proc = by_proc.reindex(pid)
        has = (scope != "g") & proc["top"].notna().to_numpy()
        top[has] = proc["top"].to_numpy()[has]
        bottom[has] = proc["bottom"].to_numpy()[has]
        by_thread = _extents(tracks, ["pid", "tid"])
        thread = by_thread.reindex(pd.MultiIndex.from_arrays([pid, tid]))
        has = (scope == "t") & thread["top"].notna().to_numpy()
        top[has] = thread["top"].to_numpy()[has]
        bottom[has] = thread["bottom"].to_numpy()[has]
    return InstantMarks(
        ins["ts"].to_numpy(dtype=np.int64), top, bottom, np.arange(n, dtype=np.int64), scope
    )


def instant_at(marks: InstantMarks, x: float, y: float, tolerance: float) -> int:
    """Row in Timeline.instants of the marker at data point (x ns, y rows), or -1; the
    nearest in time wins. `tolerance` is in ns (a few pixels' worth)."""
    if not len(marks):
        return -1
    near = np.flatnonzero(
        (np.abs(marks.ts - x) <= tolerance) & (marks.top <= y) & (marks.bottom >= y)
    )
    if not len(near):
        return -1
    best = near[np.argmin(np.abs(marks.ts[near] - x))]
    return int(marks.source[best])


def value_at(ts: np.ndarray, values: np.ndarray, x: float) -> float | None:
    """The counter's value at time x: the last sample at or before x (None before the first)."""
    i = int(np.searchsorted(ts, x, side="right")) - 1
    if i < 0 or not len(values):
        return None
    return float(values[i])


def format_counter(value: float, is_bytes: bool = False) -> str:
    if is_bytes:
        return format_bytes(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.4g}"


def curve_axis(
    name: str, values: np.ndarray, top: float, rows: int, is_bytes: bool = False
) -> list[tuple[float, str]]:
    """Labels of a counter track for the left column: the name with its min – max range in the
    middle, the value axis's max at the top and its base (0, or the min when negative) at the
    bottom.

    The base is the same as `timeline_layout.curve_rows` draws at the track's bottom edge.
    """
    v = np.asarray(values, dtype=np.float64)
    finite = v[np.isfinite(v)]
    lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 0.0)
    base = min(lo, 0.0)
    span = f"{format_counter(lo, is_bytes)} – {format_counter(hi, is_bytes)}"
    # at the heights `curve_rows` draws them: the max 0.2 rows below the top, the base on
    # the bottom edge
    return [
        (top + 0.2, format_counter(hi, is_bytes)),
        (top + rows / 2, f"{name} ({span})"),
        (top + rows, format_counter(base, is_bytes)),
    ]


__all__ = [
    "InstantMarks",
    "curve_axis",
    "format_counter",
    "instant_at",
    "instant_marks",
    "value_at",
]
