"""Compiled JSON primitives (numba, cached on disk) for the trace scanner.

Each function reads one JSON token from a uint8 array and validates it on the way: the
scanner (`scan.events`) must reject what msgspec would reject, so that odd input goes to the
general path instead of being misread. Positions returned as -1 mean invalid JSON, -2 that
the buffer ended inside the token (a truncated file).
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from perfview.core import numba_registries
from perfview.loaders.trace.scan.byte_ops import HIGHS, leaf, load_u64, trailing_zeros
from perfview.loaders.trace.scan.digits import skip_number

numba_registries.load()
MAX_DEPTH = 512  # nesting inside one event; deeper goes to the general path
STRING_STOP = np.zeros(
    256, dtype=np.bool_
)  # bytes a string scan must look at: " \ controls, non-ASCII
STRING_STOP[:32] = True
STRING_STOP[128:] = True
STRING_STOP[34] = True
STRING_STOP[92] = True
SWAR = sys.byteorder == "little"  # 8 string bytes per step (see `string`)
ONES = np.uint64(0x0101010101010101)
QUOTES = np.uint64(0x2222222222222222)
BACKSLASHES = np.uint64(0x5C5C5C5C5C5C5C5C)
CONTROLS = np.uint64(0x2020202020202020)
SIMPLE_ESCAPE = np.zeros(256, dtype=np.bool_)
SIMPLE_ESCAPE[np.frombuffer(b'"\\/bfnrt', dtype=np.uint8)] = True


@njit(cache=True, nogil=True, inline="always")
def stop_bits(w: np.uint64) -> np.uint64:
    """The high bit of each of the 8 bytes in `w` that may be a quote, a backslash, a control
    or non-ASCII (0: none is): the zero-byte tests of "Bit Twiddling Hacks", each exact for
    its lowest hit, so the lowest bit set marks the first such byte exactly."""
    stop = (w ^ QUOTES) - ONES & ~(w ^ QUOTES)
    stop |= (w ^ BACKSLASHES) - ONES & ~(w ^ BACKSLASHES)
    stop |= w - CONTROLS & ~w
    return (stop | w) & HIGHS


@njit(cache=True, nogil=True, inline="always")
def skip_plain(buf: np.ndarray, j: int, n: int) -> int:
    """Index of the first byte at or after j that a string scan must look at (`STRING_STOP`),
    or a position within 8 bytes of n: 8 bytes per step, and the stopping word's first such
    byte found by counting trailing zero bits instead of a byte loop, whose last, mispredicted
    branch cost more than the words on short strings (keys, names).

    Past the first word, 32 bytes per step: the four words' stop bits or'd together, one
    branch for all four (the SLP vectorizer makes them one wide operation where the CPU has
    one), then words again from the step that stopped. A kineto call stack is a kilobyte of
    plain ASCII, and its per-word branches were most of an event's cost in a CPU trace."""
    if j + 8 <= n:
        stop = stop_bits(load_u64(buf, j))
        if stop != 0:
            return j + (trailing_zeros(stop) >> 3)
        j += 8
    while j + 32 <= n:
        any_stop = stop_bits(load_u64(buf, j)) | stop_bits(load_u64(buf, j + 8))
        any_stop |= stop_bits(load_u64(buf, j + 16)) | stop_bits(load_u64(buf, j + 24))
        if any_stop != 0:
            break
        j += 32
    while j + 8 <= n:
        stop = stop_bits(load_u64(buf, j))
        if stop != 0:
            skipped = trailing_zeros(stop) >> 3
            return j + skipped
        j += 8
    return j


@njit(cache=True, nogil=True, inline="always")
def is_ws(c: int) -> bool:
    return c == 32 or c == 10 or c == 13 or c == 9


@leaf
def skip_ws(buf: np.ndarray, i: int, n: int) -> int:
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


@leaf
def utf8_len(buf: np.ndarray, i: int, n: int) -> int:
    """Length of the valid UTF-8 sequence at buf[i] (a byte >= 0x80), 0 when invalid."""
    c = buf[i]
    if 0xC2 <= c <= 0xDF:
        k, lo, hi = 2, 0x80, 0xBF
    elif 0xE0 <= c <= 0xEF:
        k = 3
        lo = 0xA0 if c == 0xE0 else 0x80
        hi = 0x9F if c == 0xED else 0xBF
    elif 0xF0 <= c <= 0xF4:
        k = 4
        lo = 0x90 if c == 0xF0 else 0x80
        hi = 0x8F if c == 0xF4 else 0xBF
    else:
        return 0
    if i + k > n or not (lo <= buf[i + 1] <= hi):
        return 0
    for j in range(2, k):
        if not (0x80 <= buf[i + j] <= 0xBF):
            return 0
    return k


@leaf
def is_hex(c: int) -> bool:
    return (48 <= c <= 57) or (65 <= c <= 70) or (97 <= c <= 102)


@njit(cache=True, nogil=True, inline="always")
def string(buf: np.ndarray, i: int, n: int) -> tuple[int, int]:
    """(index after the closing quote, flags) for the string at buf[i] == '"'; (-1, 0) when
    invalid and (-2, 0) when the buffer ends inside it. flags: 1 escape, 2 non-ASCII.

    Inlined into every caller: most strings are plain ASCII, read here 8 bytes per step
    (call stacks and paths are long), then one table lookup each up to the byte that stopped
    the words; `string_rest` takes over at an escape or a non-ASCII byte.
    """
    j = i + 1
    if SWAR:
        j = skip_plain(buf, j, n)
    while j < n and not STRING_STOP[buf[j]]:
        j += 1
    if j < n and buf[j] == 34:
        return j + 1, 0
    return string_rest(buf, j, n)


@leaf
def string_rest(buf: np.ndarray, i: int, n: int) -> tuple[int, int]:
    """`string` from buf[i], inside the string (flags as `string`)."""
    flags = 0
    while i < n:
        if SWAR:
            i = skip_plain(buf, i, n)
        while i < n and not STRING_STOP[buf[i]]:
            i += 1
        if i >= n:
            break
        c = buf[i]
        if c == 34:
            return i + 1, flags
        if c == 92:
            flags |= 1
            if i + 1 >= n:
                return -2, 0
            e = buf[i + 1]
            if e == 117:  # \uXXXX
                if i + 6 > n:
                    return -2, 0
                for j in range(2, 6):
                    if not is_hex(buf[i + j]):
                        return -1, 0
                i += 6
            elif SIMPLE_ESCAPE[e]:  # \" \\ \/ \b \f \n \r \t
                i += 2
            else:
                return -1, 0
        elif c < 32:
            return -1, 0
        elif c >= 128:
            k = utf8_len(buf, i, n)
            if k == 0:
                return (-2, 0) if i + 4 > n else (-1, 0)
            flags |= 2
            i += k
        else:
            i += 1
    return -2, 0


@leaf
def literal(buf: np.ndarray, i: int, n: int) -> int:
    """Index after true/false/null at buf[i], -1 when invalid, -2 when cut off."""
    c = buf[i]
    if c == 116 or c == 110:
        k = 4
    elif c == 102:
        k = 5
    else:
        return -1
    if i + k > n:
        return -2
    if c == 116:
        ok = buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101
    elif c == 110:
        ok = buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108
    else:
        ok = buf[i + 1] == 97 and buf[i + 2] == 108 and buf[i + 3] == 115 and buf[i + 4] == 101
    return i + k if ok else -1


@leaf
def skip_value(buf: np.ndarray, i: int, n: int, stack: np.ndarray) -> int:
    """Index after the JSON value starting at buf[i] (validated); -1 invalid, -2 cut off."""
    sp = 0
    while True:
        # a value starts at i
        i = skip_ws(buf, i, n)
        if i >= n:
            return -2
        c = buf[i]
        if c == 123 or c == 91:
            if sp >= MAX_DEPTH:
                return -1
            j = skip_ws(buf, i + 1, n)
            if j >= n:
                return -2
            if buf[j] == c + 2:  # {} or []
                i = j + 1
            else:
                stack[sp] = c
                sp += 1
                if c == 123:
                    i = key_colon(buf, j, n)
                    if i < 0:
                        return i
                else:
                    i = j
                continue
        elif c == 34:
            i, _f = string(buf, i, n)
            if i < 0:
                return i
        elif c == 45 or 48 <= c <= 57:
            i, kind = skip_number(buf, i, n)
            if kind == 0:
                return -2 if i >= n else -1
        else:
            i = literal(buf, i, n)
            if i < 0:
                return i
        # a value ended at i: close containers, or move to the next item
        while True:
            if sp == 0:
                return i
            i = skip_ws(buf, i, n)
            if i >= n:
                return -2
            c = buf[i]
            top = stack[sp - 1]
            if c == 44:
                if top == 123:
                    i = key_colon(buf, skip_ws(buf, i + 1, n), n)
                    if i < 0:
                        return i
                else:
                    i += 1
                break
            if c == top + 2:
                sp -= 1
                i += 1
                continue
            return -1


@leaf
def key_colon(buf: np.ndarray, i: int, n: int) -> int:
    """Index after `"key" :` at buf[i]; -1 invalid, -2 cut off."""
    if i >= n:
        return -2
    if buf[i] != 34:
        return -1
    i, _f = string(buf, i, n)
    if i < 0:
        return i
    i = skip_ws(buf, i, n)
    if i >= n:
        return -2
    if buf[i] != 58:
        return -1
    return i + 1


@njit(cache=True, nogil=True, inline="always")
def lower_ascii(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c
