"""Merge the scan ranges' tables of flow / async ids into one set of codes, by compiled code.

Each scan range interned its ids (`scan.intern`, ASCII case ignored) and kept each distinct
id's hash. `scan.intern.intern_spans` merges spans by hashing them again, which reads every
id's bytes at a random place of the file: 0.43 s of a 1 GB NCCL trace's load (1.2M spans),
on the load's critical path. Here the ranges' stored hashes are reused, so the file is read
only where two spans share a hash and a length (the same id met by two ranges): the same
codes (`tests/loaders/test_idmerge.py` compares the two) for a fraction of the work.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numba import njit

from perfview.core import numba_registries
from perfview.loaders.trace.scan.intern import _same

numba_registries.load()  # before any code here compiles or loads


@njit(cache=True, nogil=True)
def merge_hashed(
    buf: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lens: np.ndarray
) -> np.ndarray:
    """One code per span, equal (ASCII case ignored) spans sharing one, in order of first
    appearance: `intern_spans(buf, starts, lens, True)` where `hashes` are the spans' hashes
    as `scan.intern` computed them (equal spans have equal hashes)."""
    n = len(starts)
    size = 1 << 4
    while size < 2 * n:
        size <<= 1
    mask = size - 1
    slots = np.zeros(size, dtype=np.int32)  # code + 1; 0 is empty
    first = np.empty(max(n, 1), dtype=np.int64)  # the span that holds each code
    out = np.empty(n, dtype=np.int32)
    count = 0
    for i in range(n):
        h = hashes[i]
        k = np.int64(h & np.uint64(mask))
        while True:
            code = slots[k] - 1
            if code < 0:
                slots[k] = count + 1
                first[count] = i
                out[i] = count
                count += 1
                break
            j = first[code]
            same = hashes[j] == h and lens[j] == lens[i]
            if same and _same(buf, starts[j], starts[i], lens[i], True):
                out[i] = code
                break
            k = (k + 1) & mask
    return out


_KERNEL = merge_hashed  # the compiled function itself, whatever the name is bound to later


def kernels() -> tuple[object, ...]:
    """The compiled functions, for a check that their code is on disk (`scan.parallel`)."""
    return (_KERNEL,)


def ready() -> bool:
    """True when the code is loaded or on disk: otherwise compiling it (a few seconds holding
    the GIL) could freeze a window, so the caller merges with `intern_spans` instead."""
    kernel: Any = _KERNEL
    if kernel.signatures:
        return True
    try:
        return os.path.exists(kernel._cache._cache_file._index_path)
    except Exception:  # numba's cache layout is not an API
        return False


def warm() -> None:
    """Load (or compile) the code now, off the critical path."""
    buf = np.frombuffer(bytearray(b"aA"), dtype=np.uint8)  # writable, as a file's text
    one = np.zeros(2, dtype=np.int64)
    _KERNEL(buf, np.zeros(2, dtype=np.uint64), np.array([0, 1]), one + 1)


__all__ = ["kernels", "merge_hashed", "ready", "warm"]
