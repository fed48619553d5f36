"""A big level's running end maximum kept one value in `STRIDE`, for culling it exactly.

Culling finds, per row, the first rect that can still reach past the window's left edge:
the first whose running maximum of x1 (within its row) exceeds it. Kept whole that maximum
is one float64 a rect: 8 of a big trace's level 0's bytes a slice (270 MB at 10 GB, one
rect per slice). Kept at the end of every `STRIDE`-rect block of a row (and at the row's
last rect) it is 1/16 of that, and the answer is still exact: the first block whose value
exceeds the edge holds the first rect that does, and within that block it is the first whose
own x1 exceeds the edge, since every rect before the block ends at or before it.

Levels under `SAMPLED_FROM` rects keep the whole maximum (`stride == 1`: the one-search
culling of many rows, `flame_cull._RowKeys`, reads it). A sampled level is culled by the
compiled `layout_kernels` step once its code is on disk, else row by row here; both give
`flame_cull._cull_index`'s answer to the index.
"""

from __future__ import annotations

import numpy as np

from perfview.core.layout.flame import Rects

STRIDE = 16  # rects per kept value of a sampled level's running end
SAMPLED_FROM = 200_000  # levels of this many rects keep one value in STRIDE (the kernels' size)


def stride_of(rects: Rects, end_max: np.ndarray) -> int:
    """How many rects each kept end value stands for: 1 when the maximum is whole (a
    sampled level with every row of 0-1 rects is whole too, and reads the same)."""
    return 1 if len(end_max) == len(rects) else STRIDE


def first_values(bounds: np.ndarray, stride: int) -> np.ndarray:
    """Where each row's kept values start (rows 0..max and the end): row r's are
    [first[r], first[r + 1])."""
    lengths = np.diff(bounds)
    out = np.zeros(len(bounds), dtype=np.int64)
    np.cumsum(-(-lengths // stride), out=out[1:])
    return out


def sampled_end_max(rects: Rects, bounds: np.ndarray, stride: int = STRIDE) -> np.ndarray:
    """The running maximum of x1 per row at the last rect of each `stride` block of a row,
    without the whole maximum ever made (a block's maximum, then a running one per row)."""
    first = first_values(bounds, stride)
    total = int(first[-1])
    if total == 0:
        return np.zeros(0, dtype=np.float64)
    counts = np.diff(first)
    row = np.repeat(np.arange(len(counts)), counts)
    starts = bounds[row] + (np.arange(total, dtype=np.int64) - first[row]) * stride
    out = np.maximum.reduceat(np.asarray(rects.x1, dtype=np.float64), starts)
    for r in np.flatnonzero(counts > 1):
        a, b = first[r], first[r + 1]
        np.maximum.accumulate(out[a:b], out=out[a:b])
    return out


def cull_rows(
    rects: Rects,
    bounds: np.ndarray,
    ends: np.ndarray,
    first: np.ndarray,
    x_lo: float,
    x_hi: float,
    r_lo: int,
    r_hi: int,
) -> np.ndarray:
    """Positions (sorted) of the rects overlapping [x_lo, x_hi] in rows r_lo..r_hi of a
    sampled level, row by row: `flame_cull._cull_index`'s answer."""
    x0, x1 = rects.x0, rects.x1
    parts = []
    for r in range(r_lo, r_hi + 1):
        a, b = int(bounds[r]), int(bounds[r + 1])
        if a == b:
            continue
        fa, fb = int(first[r]), int(first[r + 1])
        k = int(np.searchsorted(ends[fa:fb], x_lo, side="right"))
        if k == fb - fa:
            continue  # nothing in the row reaches past x_lo
        lo = a + k * STRIDE
        i = lo + int(np.argmax(x1[lo : min(lo + STRIDE, b)] > x_lo))
        j = a + int(np.searchsorted(x0[a:b], x_hi, side="right"))
        if j > i:
            parts.append(np.arange(i, j))
    if not parts:
        return np.zeros(0, dtype=np.int64)
    idx = np.concatenate(parts)
    keep = (x1[idx] >= x_lo) & (x0[idx] <= x_hi)
    return idx[keep]


__all__ = ["SAMPLED_FROM", "STRIDE", "cull_rows", "first_values", "sampled_end_max", "stride_of"]
