"""Exact int64 numbers from a trace's JSON, for the general path: from text, or proved from floats.

`parse_decimal` turns JSON number texts (µs with fractional ns, possibly 16-digit epoch
values, possibly quoted) into exact int64 ns with numpy string functions, never through
float64, which cannot hold epoch nanoseconds exactly. That is always right but costs about as
much as the JSON decode itself.

Nearly every real file is plain: numbers are JSON numbers, ids are integers. For those msgspec
hands over Python ints and floats (the `typed` structs of `fields`), and `times` proves per
value that the float result is the exact one, sending only the values it cannot prove
(epoch-µs floats, values near a rounding tie) back to the text. A value of an odd type raises
`NotTyped`, and `general` reads that batch's numbers from their text instead, so results
never depend on which way a number was read.

Exactness argument for a float `x` (µs, nearest double to the decimal text `v`): when
|x| < 2**33 µs (2.4 hours) the double's spacing is <= 2**-19 µs, so `x * 1000` is within
0.002 ns of `v * 1000`. The text parser rounds half up on the fourth decimal; that equals
`rint(x * 1000)` unless `v * 1000` lies within 0.002 of a .5 tie, so values within 0.01 of a
tie, or larger than 2**33 µs, take the text. Python ints (what msgspec returns for an
integer literal) are exact as long as `x * 1000` fits int64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, Overflow
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from perfview.loaders.trace.fields import NO_ID

FLOAT_EXACT_LIMIT = 2.0**33  # µs: below it a float's rint(x * 1000) is provably exact
INT_LIMIT = (2**63 - 1 - 1000) // 1000  # µs: int values whose ns fit int64
TIE_MARGIN = 0.01  # ns: distance from a .5 tie below which the text decides


class NotTyped(Exception):
    """A value has a type the typed reading does not handle; read the batch's text instead."""


def parse_decimal(texts: bytes, count: int, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 of value * 10**scale for `count` newline-separated JSON numbers.

    Quoted numbers are accepted; the digit after the last kept decimal rounds half up. Empty
    tokens and non-numbers give ok=False. The integer and fraction parts are parsed as
    integers by numpy's string functions (never through float64); exponents and other rare
    spellings go through Decimal one by one.
    """
    values = np.zeros(count, dtype=np.int64)
    ok = np.zeros(count, dtype=bool)
    if count == 0:
        return values, ok
    arr = np.array(texts.split(b"\n"), dtype=np.bytes_)
    if len(arr) != count:
        raise ValueError("token count mismatch")
    arr = np.char.strip(arr, b' "')
    neg = np.char.startswith(arr, b"-")
    arr = np.char.lstrip(arr, b"-")
    parts = np.char.partition(arr, b".")
    whole, frac = parts[..., 0], parts[..., 2]
    good = np.char.isdigit(whole) & (np.char.isdigit(frac) | (np.char.str_len(frac) == 0))
    good &= np.char.str_len(whole) <= 18
    whole = np.where(good, whole, b"0")
    frac = np.where(good, frac, b"")
    width = scale + 1  # kept decimals plus the rounding digit
    digits = np.char.ljust(frac, width, b"0").astype(f"S{width}").astype(np.int64)
    high = whole.astype(np.int64)
    limit = (2**63 - 1 - 10**scale) // 10**scale
    good &= high <= limit
    total = np.where(good, high, 0) * 10**scale + (digits + 5) // 10
    values[:] = np.where(neg, -total, total)
    ok[:] = good
    retry = np.flatnonzero(~good & (np.char.str_len(arr) > 0))
    for k in retry.tolist():
        text = bytes(arr[k])
        values[k], ok[k] = _decimal_fallback(b"-" + text if neg[k] else text, scale)
    return values, ok


def _decimal_fallback(text: bytes, scale: int) -> tuple[int, bool]:
    try:
        value = (Decimal(text.decode("ascii")) * (10**scale)).to_integral_value(ROUND_HALF_UP)
    except (InvalidOperation, Overflow, UnicodeDecodeError, ValueError):  # Overflow: 1e9999999999
        return 0, False
    if not value.is_finite() or abs(value) >= 2**63:
        return 0, False
    return int(value), True


def from_text(raws: list[msgspec.Raw], scale: int) -> tuple[np.ndarray, np.ndarray]:
    """`parse_decimal` of raw JSON values (empty Raw: absent, ok=False)."""
    joined = b"\n".join(raws)
    if len(joined) < len(raws):  # all empty: the key never occurs in this batch
        return np.zeros(len(raws), dtype=np.int64), np.zeros(len(raws), dtype=bool)
    return parse_decimal(joined, len(raws), scale)


# exact(rows, attr) -> (ns, ok) for the given batch rows, parsed from the event text
ExactFn = Callable[[np.ndarray, str], tuple[np.ndarray, np.ndarray]]


def times(evs: Sequence[Any], attr: str, exact: ExactFn) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 ns of `attr` (µs) per event, and whether it was present and numeric."""
    vals = list(map(attrgetter(attr), evs))
    arr = np.array(vals)
    n = len(vals)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    if arr.dtype.kind == "i":
        ok = np.ones(n, dtype=bool)
        ns = arr.astype(np.int64)
        hard = np.flatnonzero(np.abs(ns) > INT_LIMIT)
        ns = ns * 1000 if not len(hard) else np.where(np.abs(ns) > INT_LIMIT, 0, ns) * 1000
    elif arr.dtype.kind == "f":
        ok = ~np.isnan(arr)
        x = np.where(ok, arr, 0.0)
        y = x * 1000.0
        frac = y - np.floor(y)
        easy = (np.abs(x) < FLOAT_EXACT_LIMIT) & (np.abs(frac - 0.5) > TIE_MARGIN)
        ns = np.where(easy, np.rint(y), 0.0).astype(np.int64)
        hard = np.flatnonzero(ok & ~easy)
        if len(hard):
            hard = _int_values(vals, hard, ns)
    else:  # huge ints (object dtype) or anything else numpy could not type
        raise NotTyped(f"{attr} values are not plain numbers")
    if len(hard):
        v, good = exact(hard, attr)
        ns[hard] = v
        ok[hard] = good
    return ns, ok


def _int_values(vals: list[Any], rows: np.ndarray, ns: np.ndarray) -> np.ndarray:
    """Fill the rows whose value was a Python int (exact); return the rows still unresolved."""
    picked = [vals[i] for i in rows.tolist()]
    is_int = np.fromiter(
        (type(v) is int and -INT_LIMIT <= v <= INT_LIMIT for v in picked),
        dtype=bool,
        count=len(picked),
    )
    if is_int.any():
        ints = np.array([v for v, k in zip(picked, is_int.tolist(), strict=True) if k], np.int64)
        ns[rows[is_int]] = ints * 1000
    out: np.ndarray = rows[~is_int]
    return out


def ids(args: Sequence[Any], attr: str) -> np.ndarray:
    """int64 id per event, NO_ID where absent; NotTyped when one does not fit int64."""
    try:
        return np.fromiter(map(attrgetter(attr), args), dtype=np.int64, count=len(args))
    except OverflowError:
        raise NotTyped(f"{attr} does not fit int64") from None


def kineto_ids(kargs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(correlation, External id) columns with -1 for absent, as the textual reading gives."""
    args = list(map(attrgetter("args"), kargs))
    corr = ids(args, "correlation")
    ext = ids(args, "ext")
    ext2 = ids(args, "ext_lower")
    corr = np.where(corr == NO_ID, -1, corr)
    ext = np.where(ext != NO_ID, ext, np.where(ext2 != NO_ID, ext2, -1))
    return corr, ext


__all__ = ["NotTyped", "from_text", "kineto_ids", "parse_decimal", "times"]
