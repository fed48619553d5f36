"""Compiled steps of a big timeline's layout: slices put in (row, x0) order, and the
level-of-detail merge, each in one or two passes over the slices.

On a 1 GB trace (4.6M slices) laying out the Timeline cost ~1 s of CPU in numpy, mostly
holding the GIL between calls: a stable argsort by row and five gathers (0.4 s), and the
level-of-detail chain (0.4 s, most of it the first level, which merges all 4.6M slices
through a dozen temporaries). Here a counting sort by row (rows are small integers) gathers
every column in one pass, and a merge level is two passes with no temporaries but its
outputs. numba compiles them (cached on disk, GIL-free: the GUI thread runs meanwhile).

They give the very answers of the numpy code they stand in for (`flame.layout_events`,
`flame_cull.merge`), bit for bit (tests compare them on every sample): same float
operations in the same order, first-on-ties choices, and the same switch between the exact
dominant colour and the widest member's colour. `ready(n)` says when to use them: for big
inputs, once their compiled code is on disk (compiling takes seconds of CPU holding the
GIL: the window's compile-ahead child does it, `loaders.service.compile_ahead`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

MIN_SLICES = 200_000  # below this numpy is quick enough, and numba's import is not paid
_COMPILED: dict[str, Any] = {}


def _by_row(
    ts: np.ndarray, dur: np.ndarray, row: np.ndarray, bucket: np.ndarray, node: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Slices in stable row order (a counting sort): x0, x1, row, node, bucket and a flag:
    1 when every row's x0 ascends (the order culling needs), 0 when not, -1 for a negative
    row (then nothing else is meaningful). `node` empty: each slice's input position. The
    nodes and buckets come out in `node`'s and `bucket`'s types (int32 and one byte for a
    timeline's level 0: it holds one rect per slice)."""
    n = len(row)
    n_rows = 0
    for i in range(n):
        r = row[i]
        if r < 0:
            none = np.empty(0, dtype=np.float64)
            nothing = np.empty(0, dtype=np.int32)
            no_node = np.empty(0, dtype=node.dtype)
            return none, none, nothing, no_node, np.empty(0, dtype=bucket.dtype), -1
        if r + 1 > n_rows:
            n_rows = r + 1
    first = np.zeros(n_rows + 1, dtype=np.int64)
    for i in range(n):
        first[row[i] + 1] += 1
    for r in range(n_rows):
        first[r + 1] += first[r]
    x0 = np.empty(n, dtype=np.float64)
    x1 = np.empty(n, dtype=np.float64)
    out_row = np.empty(n, dtype=np.int32)
    out_node = np.empty(n, dtype=node.dtype)
    out_bucket = np.empty(n, dtype=bucket.dtype)
    own = len(node) == 0
    for i in range(n):
        r = row[i]
        j = first[r]
        first[r] = j + 1
        x = np.float64(ts[i])
        x0[j] = x
        x1[j] = x + np.float64(dur[i])
        out_row[j] = r
        out_node[j] = i if own else node[i]
        out_bucket[j] = bucket[i]
    ordered = 1
    for j in range(1, n):
        if out_row[j] == out_row[j - 1] and not x0[j] >= x0[j - 1]:
            ordered = 0
            break
    return x0, x1, out_row, out_node, out_bucket, ordered


def _merge(
    x0: np.ndarray,
    x1: np.ndarray,
    row: np.ndarray,
    node: np.ndarray,
    bucket: np.ndarray,
    count: np.ndarray,
    px_per_unit: float,
    scale: float,
    min_px: float,
    dense_limit: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """`flame_cull.merge` of rects sorted by (row, x0); the last value is the number of
    merged rects, or -1 when nothing merges (the input stands as it is)."""
    n = len(x0)
    narrow = np.empty(n, dtype=np.bool_)
    col = np.empty(n, dtype=np.int64)
    wmax = -np.inf
    bmax = 0
    for i in range(n):
        w = x1[i] - x0[i]
        wmax = max(wmax, w)
        narrow[i] = w * px_per_unit < min_px
        col[i] = np.int64(np.floor(x0[i] * scale))
        bmax = max(bmax, int(bucket[i]))
    starts = np.empty(n + 1, dtype=np.int64)
    groups = 0
    for i in range(n):
        joins = i > 0 and narrow[i] and narrow[i - 1] and row[i] == row[i - 1]
        if not (joins and col[i] == col[i - 1]):
            starts[groups] = i
            groups += 1
    starts[groups] = n
    if groups == n:
        e = np.empty(0, dtype=np.float64)
        ints = np.empty(0, dtype=np.int64)
        return e, e, np.empty(0, dtype=row.dtype), ints, np.empty(0, dtype=np.int32), ints, -1
    gx0 = np.empty(groups, dtype=np.float64)
    gx1 = np.empty(groups, dtype=np.float64)
    grow = np.empty(groups, dtype=row.dtype)
    gnode = np.empty(groups, dtype=np.int64)
    gbucket = np.empty(groups, dtype=np.int32)
    gcount = np.empty(groups, dtype=np.int64)
    n_buckets = bmax + 1
    dense = groups * n_buckets <= dense_limit
    eps = 1e-9 * (wmax + 1.0)  # zero-length slices still weigh through their count
    table = np.zeros(n_buckets if dense else 1, dtype=np.float64)
    for g in range(groups):
        a, b = starts[g], starts[g + 1]
        top = x1[a]
        total = np.int64(0)
        widest = a
        best = x1[a] - x0[a]
        for i in range(a, b):
            top = max(top, x1[i])
            total += count[i]
            if x1[i] - x0[i] > best:
                best = x1[i] - x0[i]
                widest = i
        gx0[g] = x0[a]
        gx1[g] = top
        grow[g] = row[a]
        gnode[g] = node[widest]
        gcount[g] = total
        if not dense:
            gbucket[g] = bucket[widest]
            continue
        for i in range(a, b):
            table[bucket[i]] += (x1[i] - x0[i]) + eps * np.float64(count[i])
        pick = 0
        for k in range(n_buckets):
            if table[k] > table[pick]:
                pick = k
        gbucket[g] = pick
        for i in range(a, b):
            table[bucket[i]] = 0.0
    return gx0, gx1, grow, gnode, gbucket, gcount, groups


def _cull(
    x0: np.ndarray,
    x1: np.ndarray,
    bounds: np.ndarray,
    ends: np.ndarray,
    starts: np.ndarray,
    first: np.ndarray,
    stride: int,
    x_lo: float,
    x_hi: float,
    r_lo: int,
    r_hi: int,
) -> np.ndarray:
    """`flame_ends.cull_rows`: per row, the first block whose kept running end passes x_lo
    and the first of its rects that does, the last block starting by x_hi and the last of
    its rects that does, then the rects between less those ending before x_lo (a binary
    search over a row's kept values, then one block's rects: no keys made)."""
    n_rows = r_hi - r_lo + 1
    begin = np.empty(n_rows, dtype=np.int64)
    stop = np.empty(n_rows, dtype=np.int64)
    total = 0
    for r in range(r_lo, r_hi + 1):
        a, b = bounds[r], bounds[r + 1]
        fa, fb = first[r], first[r + 1]
        i, j = b, b
        lo, hi = fa, fb
        while lo < hi:  # the first block whose kept end > x_lo
            mid = (lo + hi) // 2
            if ends[mid] > x_lo:
                hi = mid
            else:
                lo = mid + 1
        if lo < fb:
            i = a + (lo - fa) * stride
            while not x1[i] > x_lo:
                i += 1
            lo, hi = fa, fb
            while lo < hi:  # the first block starting after x_hi
                mid = (lo + hi) // 2
                if starts[mid] > x_hi:
                    hi = mid
                else:
                    lo = mid + 1
            j = a
            if lo > fa:
                j = a + (lo - 1 - fa) * stride
                end = min(j + stride, b)
                while j < end and x0[j] <= x_hi:
                    j += 1
        begin[r - r_lo] = i
        stop[r - r_lo] = j
        total += max(j - i, 0)
    out = np.empty(total, dtype=np.int64)
    m = 0
    for k in range(n_rows):
        for p in range(begin[k], stop[k]):
            if x1[p] >= x_lo and x0[p] <= x_hi:
                out[m] = p
                m += 1
    return out[:m]


def _fill(
    x0: np.ndarray,
    x1: np.ndarray,
    y: np.ndarray,
    y_last: np.ndarray,
    colour: np.ndarray,
    image: np.ndarray,
) -> None:
    """`raster.fill` into `image` (zeros): rect i's pixels x0[i]..x1[i] of rows
    y[i]..max(y_last[i], y[i]), clipped to the image, later rects over earlier ones. One
    write a pixel covered, where numpy builds an index of every pixel first (1.4-2.1 ms of
    a frame of ~5k rects over 65 rows, here ~0.2 ms)."""
    height, width = image.shape
    for i in range(len(x0)):
        a = x0[i]
        b = x1[i]
        if b < a or b < 0 or a >= width:
            continue
        a = max(a, 0)
        b = min(b, width - 1)
        top = y[i]
        bottom = min(max(y_last[i], top), height - 1)
        top = max(top, 0)
        c = colour[i]
        for r in range(top, bottom + 1):
            for x in range(a, b + 1):
                image[r, x] = c


def kernels() -> tuple[Any, Any]:
    """The compiled steps (numba's dispatchers; compiled or loaded from disk on first use)."""
    if not _COMPILED:
        from numba import njit

        from perfview.core import numba_registries

        numba_registries.load()
        options: dict[str, Any] = {"cache": True, "nogil": True}
        _COMPILED["by_row"] = njit(**options)(_by_row)
        _COMPILED["merge"] = njit(**options)(_merge)
        _COMPILED["cull"] = njit(**options)(_cull)
        _COMPILED["fill"] = njit(**options)(_fill)
    return _COMPILED["by_row"], _COMPILED["merge"]


def cull_kernel() -> Any:
    """The compiled `_cull` (a sampled level's culling, `flame_ends`)."""
    kernels()
    return _COMPILED["cull"]


def fill_kernel() -> Any:
    """The compiled `_fill` (`raster.fill`: int64 edges and rows, uint32 colours, into a
    C-ordered uint32 image)."""
    kernels()
    return _COMPILED["fill"]


def warm() -> None:
    """Compile, or load from disk, both steps for the types a layout passes them."""
    by_row, merge = kernels()
    i64 = np.array([0, 5], dtype=np.int64)
    i32 = np.zeros(2, dtype=np.int32)
    x0, x1, row, node, bucket, _ordered = by_row(i64, i64, i32, np.zeros(2, np.uint8), i32[:0])
    node, bucket = node.astype(np.int64), bucket.astype(np.int32)  # as `flame_cull._merged`
    merge(x0, x1, row, node, bucket, np.ones(2, np.int64), 1.0, 1.0, 1.0, 4_000_000)
    bounds, first = np.array([0, 2], dtype=np.int64), np.array([0, 1], dtype=np.int64)
    kept = np.stack([x1[1:], x0[:1]])  # a sampled level's (2, blocks) array
    cull = cull_kernel()
    cull(x0, x1, bounds, kept[0], kept[1], first, 16, 0.0, 1.0, 0, 0)
    for arr in (x0, x1, bounds, kept):  # a layout read back from the store: read-only maps
        arr.flags.writeable = False
    cull(x0, x1, bounds, kept[0], kept[1], first, 16, 0.0, 1.0, 0, 0)
    edges = np.array([0, 1], dtype=np.int64)
    fill_kernel()(edges, edges, edges, edges, np.ones(2, np.uint32), np.zeros((2, 2), np.uint32))


def compiled() -> bool:
    """True when the steps' compiled code is on disk (loading it then takes milliseconds).
    A yes is kept: a frame asks for each fill and merge, and looking at the files each time
    cost 0.3 ms of a job's frame."""
    global _ON_DISK
    if _ON_DISK:
        return True
    try:
        kernels()
        _ON_DISK = all(os.path.exists(k._cache._cache_file._index_path) for k in _COMPILED.values())
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    except Exception:  # numba's cache layout is not an API: assume it is there
        _ON_DISK = True
    return _ON_DISK


_ON_DISK = False  # `compiled` said yes once


def plain(arr: np.ndarray, dtype: Any) -> np.ndarray:
    """`arr` as the compiled steps were compiled for: C-contiguous, writeable, `dtype`. A
    read-only array (a cached column's memory map) is copied: as it is, numba would compile
    the steps again for it, in this process, holding the GIL for seconds."""
    out = np.ascontiguousarray(arr, dtype=dtype)
    return out if out.flags.writeable else out.copy()


def ready(n: int) -> bool:
    """Use the compiled steps for `n` slices: a big input (or numba loaded already), and
    their code on disk, so nothing compiles in this process unasked."""
    if n < MIN_SLICES and "numba" not in sys.modules:
        return False
    return compiled()


__all__ = [
    "MIN_SLICES",
    "compiled",
    "cull_kernel",
    "fill_kernel",
    "kernels",
    "plain",
    "ready",
    "warm",
]
