"""Compiled passes over the args text of a scanned trace (numba, cached on disk).

* `compact` turns the file text into the args blob in place (see `trace_parallel`);
* `int_args` reads the integer args of memory events, which become the memory table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.byte_ops import move_bytes
from perfview.loaders.json_scan import (
    MAX_DEPTH,
    literal,
    match,
    number,
    skip_value,
    skip_ws,
    string,
    words,
)


@njit(cache=True, nogil=True)
def compact(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> int:
    """Move the spans buf[starts[k]:starts[k]+lens[k]] (ascending, disjoint) to the front of
    `buf`, back to back, in place; returns their total length.

    A span only ever moves left, onto bytes already read, so moving them in order never
    overwrites one before it is moved.
    """
    o = 0
    for k in range(len(starts)):
        m = lens[k]
        if o != starts[k]:
            move_bytes(buf, o, starts[k], m)
        o += m
    return o


MEM_WORDS, MEM_OFFS = words(
    b"Device Type", b"Device Id", b"Addr", b"Bytes", b"Total Allocated", b"Total Reserved"
)


@njit(cache=True, nogil=True)
def int_args(
    buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, values: np.ndarray, ok: np.ndarray
) -> bool:
    """Integer args of memory events: values[k, w] / ok[k, w] for each MEM_WORDS key w of the
    args object buf[starts[k]:starts[k]+lens[k]]. False when a key holds anything but an
    integer literal or null (or is repeated), so the caller uses the general path."""
    stack = np.empty(MAX_DEPTH, dtype=np.uint8)
    for k in range(len(starts)):
        i = starts[k]
        n = i + lens[k]
        if lens[k] == 0:
            continue
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            continue
        while i < n:
            if buf[i] != 34:
                return False
            ks = i + 1
            i, kf = string(buf, i, n)
            if i < 0 or kf & 1:
                return False
            w = match(buf, ks, i - 1 - ks, MEM_WORDS, MEM_OFFS)
            i = skip_ws(buf, i, n)
            if i >= n or buf[i] != 58:
                return False
            i = skip_ws(buf, i + 1, n)
            if i >= n:
                return False
            c = buf[i]
            if w >= 0:
                if ok[k, w]:
                    return False
                if c == 110:
                    i = literal(buf, i, n)
                elif c == 45 or 48 <= c <= 57:
                    i, kind, value = number(buf, i, n, 0)
                    if kind != 1:
                        return False
                    values[k, w] = value
                    ok[k, w] = True
                else:
                    return False
            else:
                i = skip_value(buf, i, n, stack)
            if i < 0:
                return False
            i = skip_ws(buf, i, n)
            if i < n and buf[i] == 44:
                i = skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                break
            return False
    return True


__all__ = ["MEM_WORDS", "compact", "int_args"]
