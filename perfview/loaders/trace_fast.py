"""The fast path for decoding a batch of well-formed trace events into numbers.

`trace_columns` keeps `ts`, `dur` and the kineto id args as raw JSON text and parses them
exactly with numpy string functions; that is always right but costs about as much as the JSON
decode itself. Nearly every real file is plain: numbers are JSON numbers, ids are integers. For
those, msgspec can hand over Python ints and floats directly, and this module proves per value
that the float result is the exact one, sending only the values it cannot prove (epoch-µs
floats, values near a rounding tie) back through the exact text parser. A batch with anything
odd (a quoted number, a null id, a bool) raises `NotFast`, and the caller redoes that batch on
the exact path, so results never depend on which path ran.

Exactness argument for a float `x` (µs, nearest double to the decimal text `v`): when
|x| < 2**33 µs (2.4 hours) the double's spacing is <= 2**-19 µs, so `x * 1000` is within
0.002 ns of `v * 1000`. The exact parser rounds half up on the fourth decimal; that equals
`rint(x * 1000)` unless `v * 1000` lies within 0.002 of a .5 tie, so values within 0.01 of a
tie, or larger than 2**33 µs, take the exact path. Python ints (what msgspec returns for an
integer literal) are exact as long as `x * 1000` fits int64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

EMPTY = msgspec.Raw(b"")
NO_ID = -(2**63)  # default for an absent id arg; the exact path maps this literal to -1 too
FLOAT_EXACT_LIMIT = 2.0**33  # µs: below it a float's rint(x * 1000) is provably exact
INT_LIMIT = (2**63 - 1 - 1000) // 1000  # µs: int values whose ns fit int64
TIE_MARGIN = 0.01  # ns: distance from a .5 tie below which the text decides


class NotFast(Exception):
    """The batch has a value the fast path does not handle; use the exact path instead."""


class FEv(msgspec.Struct, gc=False):
    """One trace event with its times as JSON numbers (nan when absent)."""

    ph: str | None = None
    name: str | None = None
    cat: str | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    ts: int | float = float("nan")
    dur: int | float = float("nan")
    args: msgspec.Raw = EMPTY
    id: msgspec.Raw = EMPTY
    id2: msgspec.Raw = EMPTY
    bp: str | None = None
    s: str | None = None


class FKArgs(msgspec.Struct, gc=False):
    """The kineto args that become columns, as integers (NO_ID when absent)."""

    correlation: int = NO_ID
    ext: int = msgspec.field(default=NO_ID, name="External id")
    ext_lower: int = msgspec.field(default=NO_ID, name="external id")
    dims: msgspec.Raw = msgspec.field(default=EMPTY, name="Input Dims")
    dims_lower: msgspec.Raw = msgspec.field(default=EMPTY, name="Input dims")


class FArgsView(msgspec.Struct, gc=False):
    args: FKArgs = msgspec.field(default_factory=FKArgs)


EV_LIST = msgspec.json.Decoder(list[FEv])
ARGS_LIST = msgspec.json.Decoder(list[FArgsView])

# exact(rows, attr) -> (ns, ok) for the given batch rows, parsed from the event text
ExactFn = Callable[[np.ndarray, str], tuple[np.ndarray, np.ndarray]]


def decode(view: memoryview) -> tuple[list[FEv], list[FArgsView]]:
    """Typed decode of one bracketed batch; raises NotFast when a value has an odd type."""
    try:
        return EV_LIST.decode(view), ARGS_LIST.decode(view)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise NotFast(str(exc)) from None


def times(evs: Sequence[FEv], attr: str, exact: ExactFn) -> tuple[np.ndarray, np.ndarray]:
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
        raise NotFast(f"{attr} values are not plain numbers")
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


def ids(args: Sequence[FKArgs], attr: str) -> np.ndarray:
    """int64 id per event, NO_ID where absent; NotFast when one does not fit int64."""
    try:
        return np.fromiter(map(attrgetter(attr), args), dtype=np.int64, count=len(args))
    except OverflowError:
        raise NotFast(f"{attr} does not fit int64") from None


def kineto_ids(kargs: Sequence[FArgsView]) -> tuple[np.ndarray, np.ndarray]:
    """(correlation, External id) columns with -1 for absent, as the exact path gives."""
    args = list(map(attrgetter("args"), kargs))
    corr = ids(args, "correlation")
    ext = ids(args, "ext")
    ext2 = ids(args, "ext_lower")
    corr = np.where(corr == NO_ID, -1, corr)
    ext = np.where(ext != NO_ID, ext, np.where(ext2 != NO_ID, ext2, -1))
    return corr, ext


__all__ = ["FEv", "FKArgs", "NotFast", "decode", "ids", "kineto_ids", "times"]
