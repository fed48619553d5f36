"""Compiled overlap rows and nesting for the trace loader (numba, cached on disk).

`perfview.core.analysis.intervals` solves both with sorting and counting in numpy, which needs no
compiled code but costs several sorts and searches per call. The loader already depends on
numba for its scanner, so here the same answers come from one linear pass with a stack per
row, which is what the numpy versions are defined to match (and tests check they do):

* `first_fit_rows`: the row of each slice such that every row nests (row 0 for everything
  that nests, first fit for the rest), as `intervals.assign_rows`;
* `nest_rows`: depth and parent of slices whose lanes nest properly, as `intervals.nest`.

A slice is open while start <= t < end (HTA's rule): one starting where another ends is its
sibling, and a zero-duration slice encloses nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def first_fit_rows(lane: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Row per slice (sorted by lane, start, -duration); each row's slices nest.

    Every row keeps a stack of open slices as a linked list through `below`; a slice goes to
    the first row whose innermost open slice (after closing those ended by its start) encloses
    it, or to a new row.
    """
    n = len(start)
    sub = np.zeros(n, dtype=np.int16)
    below = np.full(n, -1, dtype=np.int64)
    top = np.full(max(n, 1), -1, dtype=np.int64)  # per row: index of its innermost open slice
    rows = 0
    for k in range(n):
        if k == 0 or lane[k] != lane[k - 1]:
            for r in range(rows):
                top[r] = -1
            rows = 0
        s = start[k]
        e = end[k]
        placed = False
        for r in range(rows):
            t = top[r]
            while t >= 0 and end[t] <= s:
                t = below[t]
            top[r] = t
            if t < 0 or end[t] >= e:
                below[k] = t
                top[r] = k
                sub[k] = r
                placed = True
                break
        if not placed:
            below[k] = -1
            top[rows] = k
            sub[k] = rows
            rows += 1
    return sub


@njit(cache=True, nogil=True)
def nest_rows(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Depth (int16) and parent (-1 for roots) of slices sorted by (lane, start, -duration)
    whose lanes nest properly (as `first_fit_rows` makes them). Zero-duration slices get a
    parent but are never one."""
    n = len(start)
    depth = np.zeros(n, dtype=np.int16)
    parent = np.full(n, -1, dtype=np.int64)
    stack = np.empty(max(n, 1), dtype=np.int64)
    sp = 0
    for k in range(n):
        if k == 0 or lane[k] != lane[k - 1]:
            sp = 0
        s = start[k]
        while sp > 0 and end[stack[sp - 1]] <= s:
            sp -= 1
        depth[k] = min(sp, 32767)
        parent[k] = stack[sp - 1] if sp > 0 else -1
        if end[k] > s:
            stack[sp] = k
            sp += 1
    return depth, parent


__all__ = ["first_fit_rows", "nest_rows"]
