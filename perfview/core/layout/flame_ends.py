"""A big level's running end maximum kept one value in `STRIDE`, for culling it exactly.

Culling finds, per row, the first rect that can still reach past the window's left edge
(the first whose running maximum of x1 within its row exceeds it) and the last that starts
before its right edge. Kept whole, the running maximum is one float64 a rect: 8 of a big
trace's level 0's bytes a slice (270 MB at 10 GB, one rect per slice). A sampled level keeps,
for every `STRIDE`-rect block of a row, the running maximum at its last rect and the x0 of
its first (`end_max` of shape (2, blocks): 1 byte a slice), and the answer is still exact:
the first block whose kept end exceeds the left edge holds the first rect that does (within
it, the first whose own x1 does: every rect before the block ends at or before the edge),
and the last block starting by the right edge holds the last rect that does. Both searches
run over the kept values and then within one block, so a frame reads a few pages of a row's
rects, not the ~20 pages a binary search over the row's x0 maps (a level kept in a file map,
`store.layout_entries.spilled`, is resident only where read).

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


def stride_of(end_max: np.ndarray) -> int:
    """How many rects each kept end value stands for: 1 when the maximum is whole."""
    return STRIDE if end_max.ndim == 2 else 1


def first_values(bounds: np.ndarray, stride: int) -> np.ndarray:
    """Where each row's kept values start (rows 0..max and the end): row r's are
    [first[r], first[r + 1])."""
    lengths = np.diff(bounds)
    out = np.zeros(len(bounds), dtype=np.int64)
    np.cumsum(-(-lengths // stride), out=out[1:])
    return out


def sampled_end_max(rects: Rects, bounds: np.ndarray, stride: int = STRIDE) -> np.ndarray:
    """Per `stride`-rect block of each row: the running maximum of x1 at its last rect
    (row 0) and the x0 of its first (row 1), without the whole maximum ever made (a
    block's maximum, then a running one per row)."""
    first = first_values(bounds, stride)
    total = int(first[-1])
    out = np.zeros((2, total), dtype=np.float64)
    if total == 0:
        return out
    counts = np.diff(first)
    row = np.repeat(np.arange(len(counts)), counts)
    starts = bounds[row] + (np.arange(total, dtype=np.int64) - first[row]) * stride
    ends = out[0]
    ends[:] = np.maximum.reduceat(np.asarray(rects.x1, dtype=np.float64), starts)
    for r in np.flatnonzero(counts > 1):
        a, b = first[r], first[r + 1]
        np.maximum.accumulate(ends[a:b], out=ends[a:b])
    out[1] = np.asarray(rects.x0, dtype=np.float64)[starts]
    return out


def cull_rows(
    rects: Rects,
    bounds: np.ndarray,
    end_max: np.ndarray,
    first: np.ndarray,
    x_lo: float,
    x_hi: float,
    r_lo: int,
    r_hi: int,
) -> np.ndarray:
    """Positions (sorted) of the rects overlapping [x_lo, x_hi] in rows r_lo..r_hi of a
    sampled level, row by row: `flame_cull._cull_index`'s answer."""
    x0, x1 = rects.x0, rects.x1
    ends, starts = end_max[0], end_max[1]
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
        last = int(np.searchsorted(starts[fa:fb], x_hi, side="right")) - 1
        if last < 0:
            continue  # nothing in the row starts by x_hi
        lo = a + last * STRIDE
        j = lo + int(np.searchsorted(x0[lo : min(lo + STRIDE, b)], x_hi, side="right"))
        if j > i:
            parts.append(np.arange(i, j))
    if not parts:
        return np.zeros(0, dtype=np.int64)
    idx = np.concatenate(parts)
    keep = (x1[idx] >= x_lo) & (x0[idx] <= x_hi)
    return idx[keep]


__all__ = ["SAMPLED_FROM", "STRIDE", "cull_rows", "first_values", "sampled_end_max", "stride_of"]
