"""JSON numbers for the compiled trace scanner, read 8 digits per step.

A kineto event holds four to eight numbers (a 16-digit timestamp, a duration, the ids in its
args), and reading them a digit per step, each step a compare and a mispredictable branch,
was a tenth of the scan. `digit_run` reads the digits of one 8-byte word at once: a mask of
the bytes that are not digits, a trailing-zero count for how many lead, and three multiplies
that turn up to 8 digits into their value ("SWAR" parsing, as simdjson and fast_float do).
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from perfview.loaders.trace.scan.byte_ops import HIGHS, LOW7, load_u64, trailing_zeros

INT_DIGITS = 18  # integer parts longer than this go to the general path (as parse_decimal)
LIMIT_US = (2**63 - 1 - 1000) // 1000  # whole µs whose ns fit int64
SWAR = sys.byteorder == "little"
POW10 = np.array([10**k for k in range(19)], dtype=np.int64)
ZEROS = np.uint64(0x3030303030303030)
HIGH_NIBBLES = np.uint64(0xF0F0F0F0F0F0F0F0)
SIXES = np.uint64(0x0606060606060606)
SIXTEENS = np.uint64(0x1010101010101010)
PAIRS = np.uint64(0x00FF00FF00FF00FF)
QUADS = np.uint64(0x0000FFFF0000FFFF)


@njit(cache=True, nogil=True, inline="always")
def digit_run(buf: np.ndarray, i: int, n: int) -> tuple[int, int]:
    """(k, value) of the k ≤ 8 decimal digits at buf[i:], k = 8 meaning more may follow.

    In the word: a byte is a digit when, xor '0', its high nibble is 0 and adding 6 does not
    reach 16; a carry only runs upwards out of a non-digit byte, so the lowest flagged byte is
    exact. The k digits are shifted to the word's top (zeros above them are leading zeros) and
    combined pairwise: ×10 + next, ×100 + next pair, ×10000 + next quad."""
    if SWAR and i + 8 <= n:
        x = load_u64(buf, i) ^ ZEROS
        bad = (x & HIGH_NIBBLES) | ((x + SIXES) & SIXTEENS)
        flags = (((bad & LOW7) + LOW7) | bad) & HIGHS
        k = 8 if flags == 0 else trailing_zeros(flags) >> 3
        if k == 0:
            return 0, 0
        v = x << np.uint64(64 - 8 * k)
        v = (v * np.uint64(10)) + (v >> np.uint64(8)) & PAIRS
        v = (v * np.uint64(100)) + (v >> np.uint64(16)) & QUADS
        v = (v * np.uint64(10000)) + (v >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
        return k, np.int64(v)  # type: ignore[return-value]
    k = 0
    value = 0
    while k < 8 and i + k < n and 48 <= buf[i + k] <= 57:
        value = value * 10 + (buf[i + k] - 48)
        k += 1
    return k, value


@njit(cache=True, nogil=True, inline="always")
def digit_count(buf: np.ndarray, i: int, n: int) -> int:
    """How many of the (at most 8) bytes at buf[i:] are leading decimal digits: `digit_run`
    without the value, for numbers only checked and stepped over."""
    if SWAR and i + 8 <= n:
        x = load_u64(buf, i) ^ ZEROS
        bad = (x & HIGH_NIBBLES) | ((x + SIXES) & SIXTEENS)
        flags = (((bad & LOW7) + LOW7) | bad) & HIGHS
        return 8 if flags == 0 else trailing_zeros(flags) >> 3
    k = 0
    while k < 8 and i + k < n and 48 <= buf[i + k] <= 57:
        k += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def exponent_end(buf: np.ndarray, i: int, n: int) -> tuple[int, bool]:
    """(end, valid) of the exponent whose `e` or `E` is buf[i]: a sign, then digits."""
    i += 1
    if i < n and (buf[i] == 43 or buf[i] == 45):
        i += 1
    if i >= n or not (48 <= buf[i] <= 57):
        return i, False
    while i < n and 48 <= buf[i] <= 57:
        i += 1
    return i, True


@njit(cache=True, nogil=True, inline="always")
def skip_number(buf: np.ndarray, i: int, n: int) -> tuple[int, int]:
    """(end, kind) of the JSON number at buf[i], as `number` with scale 0 gives them, without
    its value: most numbers of an event (pid, tid, the args the loader keeps in the blob) are
    only validated and stepped over, and computing each one's value cost more than reading
    its digits. Inlined: a call passes the buffer's whole array struct, per number."""
    if buf[i] == 45:
        i += 1
    if i >= n or not (48 <= buf[i] <= 57):
        return i, 0
    digits = 0
    if buf[i] == 48:
        i += 1
        digits = 1
        if i < n and 48 <= buf[i] <= 57:
            return i, 0
    else:
        while True:
            k = digit_count(buf, i, n)
            digits += k
            i += k
            if k < 8:
                break
    kind = 1
    if i < n and buf[i] == 46:
        i += 1
        if i >= n or not (48 <= buf[i] <= 57):
            return i, 0
        while True:
            k = digit_count(buf, i, n)
            i += k
            if k < 8:
                break
        kind = 2
    if i < n and (buf[i] == 101 or buf[i] == 69):
        i, ok = exponent_end(buf, i, n)
        return i, (3 if ok else 0)
    if digits > INT_DIGITS:
        return i, 4
    return i, kind


@njit(cache=True, nogil=True, inline="always")
def number(buf: np.ndarray, i: int, n: int, scale: int) -> tuple[int, int, int]:
    """(end, kind, value) of the JSON number at buf[i]; kind 0 invalid, 1 integer, 2 decimal,
    3 exponent (value unset), 4 too many digits. value = number × 10**scale (scale 0 or 3),
    the digit after the kept ones rounding half up (as parse_decimal).

    Inlined into its few callers (the times, the kineto ids): as a call it passed the
    buffer's array struct per number, a fifth of the scan of an NCCL trace."""
    neg = False
    if buf[i] == 45:
        neg = True
        i += 1
    if i >= n or not (48 <= buf[i] <= 57):
        return i, 0, 0
    whole = 0
    digits = 0
    if buf[i] == 48:
        i += 1
        digits = 1
        if i < n and 48 <= buf[i] <= 57:
            return i, 0, 0
    else:
        while True:
            k, v = digit_run(buf, i, n)
            if digits + k <= INT_DIGITS:
                whole = whole * POW10[k] + v
            digits += k
            i += k
            if k < 8:
                break
    kind = 1
    frac = 0
    nfrac = 0
    if i < n and buf[i] == 46:
        i += 1
        if i >= n or not (48 <= buf[i] <= 57):
            return i, 0, 0
        while True:
            k, v = digit_run(buf, i, n)
            keep = min(k, scale + 1 - nfrac)  # the kept digits and the one that rounds
            if keep > 0:
                frac = frac * POW10[keep] + v // POW10[k - keep]
                nfrac += keep
            i += k
            if k < 8:
                break
        kind = 2
    if i < n and (buf[i] == 101 or buf[i] == 69):
        i, ok = exponent_end(buf, i, n)
        return i, (3 if ok else 0), 0
    if digits > INT_DIGITS:
        return i, 4, 0
    while nfrac <= scale:
        frac *= 10
        nfrac += 1
    if scale == 3:
        if whole > LIMIT_US:
            return i, 4, 0
        value = whole * 1000 + (frac + 5) // 10
    else:
        value = whole + (frac + 5) // 10
    return i, kind, -value if neg else value


__all__ = ["INT_DIGITS", "LIMIT_US", "digit_count", "digit_run", "number", "skip_number"]
