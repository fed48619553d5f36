"""Compiled one-pass versions of `build`'s hottest multi-pass numpy steps (scanner path only).

Each numpy step over 5M events (a 1 GB NCCL trace) makes a few 40 MB temporaries, and on
this kind of machine first-touching a fresh page costs as much as the arithmetic: a pass
that writes only its outputs halves or thirds the time. `build` uses these only when numba
is loaded already (the scanner path); the general path keeps the numpy code, and the tests
compare the two on samples (`tests/loaders/test_build_kernels.py`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numba import njit

from perfview.core import numba_registries

numba_registries.load()  # before any code here compiles or loads


@njit(cache=True, nogil=True)
def times(
    ts_raw: np.ndarray, ok: np.ndarray, meta: np.ndarray, is_x: np.ndarray,
    dur_raw: np.ndarray, dur_ok: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int, int, int]:  # fmt: skip
    """(ts - t0, durations clamped at 0, t0, the latest end, negative X durations).

    t0 is the earliest `ts_raw` of a timed event (`ok` and not metadata), 0 when none; a
    duration counts where `dur_ok` (else 0); the end is the latest timed ts or X slice end,
    at least 0 (see `build._times`)."""
    n = len(ts_raw)
    t0 = np.iinfo(np.int64).max
    timed = False
    for i in range(n):
        if ok[i] and not meta[i]:
            timed = True
            if ts_raw[i] < t0:
                t0 = ts_raw[i]
    if not timed:
        t0 = 0
    ts = np.empty(n, dtype=np.int64)
    dur = np.empty(n, dtype=np.int64)
    ends = 0
    negative = 0
    for i in range(n):
        t = ts_raw[i] - t0
        ts[i] = t
        d = dur_raw[i] if dur_ok[i] else 0
        x = is_x[i] and ok[i]
        if d < 0:
            if x:
                negative += 1
            d = 0
        dur[i] = d
        if ok[i] and not meta[i] and t > ends:
            ends = t
        if x and t + d > ends:
            ends = t + d
    return ts, dur, t0, ends, negative


@njit(cache=True, nogil=True)
def rank_among(kept: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """np.searchsorted(kept, rows) for sorted, distinct `kept` rows of 0..n-1 (see
    `build._rank_among`), from one running count, kept as int32 (`build._arg_index` calls
    this only for n < 2**31): 4 bytes an event less at the load's peak, where the build
    runs it (200 MB at 10 GB)."""
    before = np.empty(n + 1, dtype=np.int32)
    j = 0
    m = len(kept)
    for r in range(n + 1):
        while j < m and kept[j] < r:
            j += 1
        before[r] = j
    out = np.empty(len(rows), dtype=np.int64)
    for i in range(len(rows)):
        out[i] = before[rows[i]]
    return out


@njit(cache=True, nogil=True)
def gather_where(values: np.ndarray, src: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """np.where(keep[src], values[src], -1) as int64, without the two temporaries."""
    out = np.empty(len(src), dtype=np.int64)
    for i in range(len(src)):
        k = src[i]
        out[i] = values[k] if keep[k] else -1
    return out


@njit(cache=True, nogil=True)
def lookup_into(lut: np.ndarray, codes: np.ndarray, out: np.ndarray) -> None:
    """out[:] = lut[codes] in one pass (numpy first widens int32 codes to a copy of their
    own), into an array the caller made (see `build._lookup_beside`)."""
    for i in range(len(codes)):
        out[i] = lut[codes[i]]


@njit(cache=True, nogil=True)
def first_seen(values: np.ndarray, out: np.ndarray, size: int) -> int:
    """out[i] = the number of distinct values before values[i] first appears (pandas'
    `factorize` codes) through an open-addressing table of `size` (a power of two) slots;
    returns the number of distinct values, or -1 when more than half the slots fill.
    `out` may be `values` itself (each value is read before its code is written)."""
    keys = np.empty(size, dtype=np.int64)
    code_of = np.full(size, -1, dtype=np.int64)
    mask = size - 1
    seen = 0
    for i in range(len(values)):
        x = values[i]
        slot = ((x * np.int64(-7046029254386353131)) >> np.int64(20)) & mask
        while code_of[slot] >= 0 and keys[slot] != x:
            slot = (slot + 1) & mask
        if code_of[slot] < 0:
            if 2 * seen >= size:
                return -1
            keys[slot] = x
            code_of[slot] = seen
            seen += 1
        out[i] = code_of[slot]
    return seen


@njit(cache=True, nogil=True)
def pair_codes(a: np.ndarray, b: np.ndarray, size: int) -> tuple[np.ndarray, bool]:
    """`lanes.joint_codes(a, b)` for int64 columns with at most size/2 distinct values each
    (pid and tid ids: fewer than the trace's keys), in two passes with no temporaries but
    one column; (codes, False) when a column has more distinct values."""
    out = np.empty(len(a), dtype=np.int64)
    fb = np.empty(len(b), dtype=np.int64)
    nb = first_seen(b, fb, size)
    if nb < 0 or first_seen(a, out, size) < 0:
        return out, False
    width = max(nb, 1)
    for i in range(len(out)):
        out[i] = out[i] * width + fb[i]
    return out, True


@njit(cache=True, nogil=True)
def seen_codes(codes: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """np.bincount(codes, minlength=n) > 0 in one pass (numpy's bincount first widens
    int32 codes to a copy of their own): which interner codes occur (`lanes.categorical`),
    and how many codes fall outside 0..n-1 (then the caller takes numpy's path)."""
    out = np.zeros(n, dtype=np.bool_)
    bad = 0
    for i in range(len(codes)):
        c = codes[i]
        if c < 0 or c >= n:
            bad += 1
        else:
            out[c] = True
    return out, bad


@njit(cache=True, nogil=True)
def kind_codes(
    by_cat: np.ndarray, cat: np.ndarray, step: np.ndarray, name: np.ndarray, step_kind: int
) -> np.ndarray:
    """`lanes.kinds_for` in one pass: by_cat[cat], or `step_kind` where step[name] (the
    numpy steps widen both code columns and make a mask)."""
    out = np.empty(len(cat), dtype=np.int8)
    for i in range(len(cat)):
        out[i] = step_kind if step[name[i]] else by_cat[cat[i]]
    return out


@njit(cache=True, nogil=True)
def flow_points(
    is_s: np.ndarray, is_t: np.ndarray, is_f: np.ndarray, ok: np.ndarray, fid: np.ndarray
) -> np.ndarray:
    """np.flatnonzero((is_s | is_t | is_f) & ok & (fid >= 0)) in two passes that write
    only the result (the numpy steps make four full-length masks)."""
    n = 0
    for i in range(len(fid)):
        if (is_s[i] or is_t[i] or is_f[i]) and ok[i] and fid[i] >= 0:
            n += 1
    out = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(len(fid)):
        if (is_s[i] or is_t[i] or is_f[i]) and ok[i] and fid[i] >= 0:
            out[k] = i
            k += 1
    return out


_KERNELS = (
    times,
    rank_among,
    gather_where,
    lookup_into,
    pair_codes,
    first_seen,
    seen_codes,
    kind_codes,
    flow_points,
)  # bound before any test replaces a name


def kernels() -> tuple[object, ...]:
    """The compiled functions, for a check that their code is on disk."""
    return _KERNELS


def ready() -> bool:
    """True when every kernel's code is loaded or on disk: compiling them (seconds, holding
    the GIL) could freeze a window, so `build` keeps its numpy steps until they are."""
    for kernel in _KERNELS:
        k: Any = kernel
        if k.signatures:
            continue
        try:
            if not os.path.exists(k._cache._cache_file._index_path):
                return False
        except Exception:  # numba's cache layout is not an API
            return False
    return True


def warm() -> None:
    """Load (or compile, once) the code for the argument types `build` passes (phase masks
    are read-only arrays, a type of their own to numba): the loader does it on its warm-up
    thread while the file is read (a few ms each from numba's cache)."""
    one = np.zeros(1, dtype=np.int64)
    flag = np.zeros(1, dtype=np.bool_)
    mask = np.zeros(1, dtype=np.bool_)
    mask.flags.writeable = False
    times(one, flag, mask, mask, one, flag)
    rank_among(one, one, 1)
    gather_where(one, one, flag)
    lookup_into(one, np.zeros(1, dtype=np.int32), one.copy())
    pair_codes(one, one, 4)
    first_seen(one, one.copy(), 4)
    code32 = np.zeros(1, dtype=np.int32)
    seen_codes(code32, 1)
    for code_type in (np.int8, np.int16, np.int32):  # `lanes.categorical`'s code types
        lut = np.zeros(1, dtype=code_type)
        lookup_into(lut, code32, lut.copy())
    kind_codes(np.zeros(1, dtype=np.int8), code32, flag, code32, 1)
    flow_points(mask, mask, mask, flag, code32)


__all__ = [
    "first_seen", "flow_points", "gather_where", "kernels", "kind_codes", "lookup_into",
    "pair_codes", "rank_among", "ready", "seen_codes", "times", "warm",
]  # fmt: skip
