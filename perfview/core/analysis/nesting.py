"""Nesting of time intervals on lanes: each slice's overlap row, depth and parent.

Trace slices arrive as flat (lane, start, end) arrays sorted by (lane, start, -duration)
(`intervals.slice_order`); the timeline and call trees need each slice's depth and parent, and
slices that overlap without nesting (common on GPU streams and in broken traces) need extra
rows. One linear pass with a stack per row answers both:

* `assign_rows`: the row of each slice such that every row nests (row 0 for everything that
  nests, first fit for the rest);
* `nest`: depth and parent of slices whose lanes nest properly.

A slice is open while start <= t < end (HTA's rule): one starting where another ends is its
sibling, a zero-duration slice encloses nothing, and of two identical intervals the first in
order is the parent.

The passes are compiled by numba (cached on disk, GIL-free): 50x faster than the sorting and
counting numpy version they replaced (146k slices: 0.4 vs 19 ms each). Loading numba costs
0.8 s or more in a fresh process, though, which a trace loaded without the scanner (the CLI
on a small file) should not pay: while numba is not imported, inputs under INTERPRET_MAX
slices run the very same Python functions uncompiled (the same code, so the same answers),
at ~1 µs per slice for both passes: 200k slices cost about what numba's start-up does.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

INTERPRET_MAX = 200_000  # slices; interpreted, the passes take ~1 µs per slice
_COMPILED: dict[str, Any] = {}


def _first_fit_rows(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray
) -> np.ndarray:
    """Row per slice (sorted by lane, start, -duration); each row's slices nest. With
    `order` (not empty), the slices sorted are the rows `order` of the arrays, and the k-th
    row of the result is slice order[k]'s: no sorted copies of the three arrays (24 bytes a
    slice at a big trace's build).

    Every row keeps a stack of open slices as a linked list through `below`; a slice goes to
    the first row whose innermost open slice (after closing those ended by its start) encloses
    it, or to a new row.
    """
    at = len(order) > 0
    n = len(order) if at else len(start)
    sub = np.zeros(n, dtype=np.int16)
    below = np.full(n, -1, dtype=np.int64)
    top = np.full(16, -1, dtype=np.int64)  # per row: its innermost open slice (grows)
    rows = 0
    previous = 0
    for k in range(n):
        i = order[k] if at else k
        if k == 0 or lane[i] != previous:
            for r in range(rows):
                top[r] = -1
            rows = 0
        previous = lane[i]
        s = start[i]
        e = end[i]
        placed = False
        for r in range(rows):
            t = top[r]
            while t >= 0 and end[order[t] if at else t] <= s:
                t = below[t]
            top[r] = t
            if t < 0 or end[order[t] if at else t] >= e:
                below[k] = t
                top[r] = k
                sub[k] = r
                placed = True
                break
        if not placed:
            if rows == len(top):
                wider = np.full(2 * len(top), -1, dtype=np.int64)
                wider[:rows] = top[:rows]
                top = wider
            below[k] = -1
            top[rows] = k
            sub[k] = rows
            rows += 1
    return sub


def _nest_rows(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Depth (int16) and parent (-1 for roots) of slices sorted by (lane, start, -duration)
    whose lanes nest properly (as `_first_fit_rows` makes them). Zero-duration slices get a
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


def kernels() -> tuple[Any, Any]:
    """The compiled passes (numba's dispatchers; compiled or loaded from disk on first use)."""
    if not _COMPILED:
        from numba import njit

        from perfview.core import numba_registries

        numba_registries.load()

        options: dict[str, Any] = {"cache": True, "nogil": True}
        _COMPILED["rows"] = njit(**options)(_first_fit_rows)
        _COMPILED["nest"] = njit(**options)(_nest_rows)
    return _COMPILED["rows"], _COMPILED["nest"]


def _compiled(n: int, compiled: bool | None) -> bool:
    return (n >= INTERPRET_MAX or "numba" in sys.modules) if compiled is None else compiled


def _arrays(compiled: bool, *columns: Any) -> list[Any]:
    """int64 arrays for the compiled passes; lists for the interpreted ones (a list's items
    read 3x faster in Python than an array's)."""
    arrays = [np.ascontiguousarray(c, dtype=np.int64) for c in columns]
    return arrays if compiled else [a.tolist() for a in arrays]


def assign_rows(
    lane: Any, start: Any, end: Any, *, compiled: bool | None = None, order: Any = None
) -> np.ndarray:
    """Row (`sub`, int16) of each sorted slice so that every row is properly nested.

    Row 0 holds everything that nests; slices that overlap without nesting go to rows 1, 2, …
    (first fit). `compiled`: force (True) or forbid (False) numba; None picks by size.
    `order`: the slices are sorted in this order (row indices), not as given: the result
    is assign_rows(lane[order], start[order], end[order]), without those copies.
    """
    use = _compiled(len(start) if order is None else len(order), compiled)
    if order is not None and not use:  # interpreted: lists of the sorted slices read faster
        lane, start, end = (np.asarray(c)[np.asarray(order)] for c in (lane, start, end))
        order = None
    rows = kernels()[0] if use else _first_fit_rows
    at = np.zeros(0, dtype=np.int64) if order is None else order
    out: np.ndarray = rows(*_arrays(use, lane, start, end, at))
    return out


def nest(
    lane: Any, start: Any, end: Any, *, compiled: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Depth (int16) and parent index (int64, -1 for roots) of sorted, properly nested slices
    (as `assign_rows` makes each row). `compiled` as in `assign_rows`."""
    use = _compiled(len(start), compiled)
    nest_rows = kernels()[1] if use else _nest_rows
    depth, parent = nest_rows(*_arrays(use, lane, start, end))
    return depth, parent


def warm() -> None:
    """Load the compiled passes now (the scanner path warms them while the file is read)."""
    one = np.zeros(1, dtype=np.int64)
    rows, nest_rows = kernels()
    rows(one, one, one, np.zeros(0, dtype=np.int64))
    nest_rows(one, one, one)


__all__ = ["INTERPRET_MAX", "assign_rows", "kernels", "nest", "warm"]
