"""cProfile/pstats `.prof`: a marshal dump of {(file, line, func): (cc, nc, tt, ct, callers)}.

`pstats.Stats.dump_stats` writes `marshal.dump(stats)`. Python 3 writes a dict with the ref flag,
so the file starts with byte 0xFB; older marshal versions start with `{` followed by a tuple
type code, which no JSON file does. Python 2 dumps also start with `{(` but use type codes
Python 3 rejects ("bad marshal data"), so they are told apart by trying.

The stats are kept exactly (`PstatsProfile`: functions + caller → callee edges, ns ints); the
icicle tree is reconstructed from the edges (`core.callgraph`, estimated=True).
"""

from __future__ import annotations

import marshal
import struct
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from perfview.core.analysis.pstats_graph import build_pstats_tree
from perfview.core.model import Bundle, PstatsProfile, schema
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import GZIP_MAGIC, PLAIN, is_gzip, read_head

NAME: Final = "pstats"
DESCRIPTION = "a cProfile/pstats profile"
EXTENSIONS = (".prof", ".pstats", ".cprof", ".profile")
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_REF_DICT = 0xFB  # marshal TYPE_DICT | FLAG_REF
# What may follow the dict code: a tuple key (TYPE_TUPLE / TYPE_SMALL_TUPLE, with or without
# the ref flag) or TYPE_NULL, which ends an empty dict.
_TUPLE_CODES = frozenset(b"()\xa8\xa90")

PY2_MESSAGE = "it is a Python 2 cProfile file; perfview reads profiles written by Python 3"
PPROF_MESSAGE = "it is a Go pprof profile (gzip protobuf), not a cProfile file"
GHC_MESSAGE = "it is a GHC (Haskell) profile, not a Python cProfile file"
NOT_PSTATS = "it is a marshal file but not a cProfile profile"
MALFORMED = "it is a cProfile file, but its statistics hold values no profiler writes"
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_MAX_SECONDS = 9.2e9  # int64 nanoseconds end at about 9.22e9 s (292 years)

# Strings found in the string table of pprof profiles (sample and period types).
_PPROF_WORDS = (b"samples", b"nanoseconds", b"alloc_space", b"inuse_space", b"contentions")
# First byte of a pprof Profile message: a length-delimited or varint field 1-14.
_PPROF_TAGS = frozenset(b"\x0a\x12\x1a\x22\x2a\x32\x38\x40\x48\x50\x5a\x60\x68\x70")


def sniff(head: bytes, path: Path) -> bool:
    """True for a marshal dict whose first key is a tuple (what pstats writes) or empty."""
    if len(head) < 2:
        return False
    if head[0] == _REF_DICT:
        return head[1] in _TUPLE_CODES
    return head[0] == ord("{") and head[1] in _TUPLE_CODES


def refuse(head: bytes, path: Path) -> str | None:
    """Say what a file that looks like a `.prof` but is not pstats really is (or None)."""
    if head.startswith(b"{(") or head.startswith(b"{)"):
        return PY2_MESSAGE
    text = head.lstrip()
    if b"Time and Allocation Profiling Report" in head[:4096] or (
        text.startswith(b"{") and b'"cost_centres"' in head and b'"rts_arguments"' in head
    ):
        return GHC_MESSAGE
    try:
        gz = is_gzip(path)
    except OSError:
        gz = head.startswith(GZIP_MAGIC)
    if head and head[0] in _PPROF_TAGS and any(w in head for w in _PPROF_WORDS):
        return PPROF_MESSAGE if gz else "it is a Go pprof profile (protobuf), not a cProfile file"
    return None


# marshal type codes (Python/marshal.c) a pstats dump may hold, by how their payload is sized.
_FIXED = {ord(c): n for c, n in (("0", 0), ("N", 0), ("F", 0), ("T", 0), ("S", 0), (".", 0),
                                 ("i", 4), ("g", 8), ("y", 16), ("r", 4))}  # fmt: skip
_SIZED32 = frozenset(b"stuaA")  # 4-byte length, then that many bytes
_SIZED8 = frozenset(b"zZf")  # 1-byte length, then that many bytes
_COUNT32 = frozenset(b"([<>")  # 4-byte element count, then the elements
_DICT = -1  # stack marker: a dict runs until a NULL key
# Codes marshal never registers as refs even when flagged, and containers whose slots stay
# NULL until their elements are read (a ref to them before then is the crash).
_UNREGISTERED = frozenset(b"0NFTS.r")
_REF, _NULL, _SMALL_TUPLE = ord("r"), ord("0"), ord(")")
_INCOMPLETE_UNTIL_READ = frozenset(b"()[")


def _check_marshal(data: bytes) -> None:
    """Walk the marshal stream without building it; LoadError if it cannot be a pstats dump.

    `marshal.loads` trusts what it reads ("not secure against maliciously constructed data"):
    - element counts: four `[` bytes declare a list of 1.5 billion items, which it allocates
      (12 GB) before noticing the data ends, so a few hundred bytes can exhaust memory. Here
      every container must fit in the bytes that remain (each element takes at least one);
    - back-references: a ref to a tuple still being read hands out a tuple with NULL slots,
      and a 17-byte file segfaults the interpreter. Here a ref must name a finished object.
    Iterative, so deep nesting cannot overflow the stack.
    """
    size, pos = len(data), 0
    done: list[bool] = []  # per registered ref: is the object complete?
    stack = [[1, -1]]  # [elements still to read, ref slot of the container or -1]
    # ~220k objects in a 10k-function profile: the frequent codes are handled inline, with
    # names bound locally (the same checks, in the same order, as `_payload` makes).
    fixed, sized8, unpack = _FIXED, _SIZED8, struct.unpack_from
    unregistered, incomplete = _UNREGISTERED, _INCOMPLETE_UNTIL_READ
    while stack:
        top = stack[-1]
        left = top[0]
        if left == 0:
            if top[1] >= 0:
                done[top[1]] = True
            stack.pop()
            continue
        if pos >= size:
            raise LoadError("it is a cProfile file that was cut short")
        byte = data[pos]
        code = byte & 0x7F
        pos += 1
        if left > 0:
            top[0] = left - 1
        slot = -1
        if byte & 0x80 and code not in unregistered:  # FLAG_REF: register the object
            slot = len(done)
            done.append(code not in incomplete)
        if code == _REF:
            (ref,) = unpack("<I", data, pos) if pos + 4 <= size else (size,)
            if ref >= len(done) or not done[ref]:
                raise LoadError(f"it is not a readable cProfile file (bad reference at {pos})")
        elif code == _NULL:
            if left != _DICT:
                raise LoadError(f"it is not a readable cProfile file (bad marshal data at {pos})")
            stack.pop()
            continue
        skip = fixed.get(code)
        if skip is not None:
            pos += skip
        elif code == _SMALL_TUPLE:
            stack.append([data[pos] if pos < size else 0, slot])
            pos += 1
        elif code in sized8:
            pos += 1 + (data[pos] if pos < size else 0)
        else:
            pos, count = _payload(code, data, pos)
            if count is not None:
                stack.append([count, slot])


def _payload(code: int, data: bytes, pos: int) -> tuple[int, int | None]:
    """Skip a scalar's payload: (next position, None); for a container: (position, count)."""
    size = len(data)
    if code in _FIXED:
        return pos + _FIXED[code], None
    if code in _SIZED8:
        return pos + 1 + (data[pos] if pos < size else 0), None
    if code == ord(")"):
        return pos + 1, data[pos] if pos < size else 0
    if code == ord("{"):
        return pos, _DICT
    if code in _SIZED32 or code in _COUNT32 or code == ord("l"):
        (count,) = struct.unpack_from("<i", data, pos) if pos + 4 <= size else (-1,)
        pos += 4
        if code == ord("l"):
            count = abs(count) * 2  # digits of 15 bits, two bytes each
        if not 0 <= count <= size - pos:
            raise LoadError("it is not a readable cProfile file (a size is larger than it)")
        return (pos, count) if code in _COUNT32 else (pos + count, None)
    raise LoadError(f"it is not a readable cProfile file (unexpected marshal code {code})")


def _decode(data: bytes) -> dict[Any, Any]:
    try:
        _check_marshal(data)
    except LoadError as exc:
        if data[:1] == b"{":  # Python 2 marshal: type codes Python 3 does not have
            raise LoadError(PY2_MESSAGE) from exc
        raise
    try:
        stats = marshal.loads(data)
    except (ValueError, EOFError, TypeError, RecursionError) as exc:
        # ValueError also covers marshal's own nesting limit ("recursion limit exceeded").
        if data[:1] == b"{":
            raise LoadError(PY2_MESSAGE) from exc
        raise LoadError(f"it is not a readable cProfile file ({exc})") from exc
    if not isinstance(stats, dict):
        raise LoadError(NOT_PSTATS)
    return stats


def _key(key: Any) -> tuple[str, int, str]:
    """A stats key as (file, line, function), checked. ~40k calls for a 10k-function profile:
    the usual exact (str, int, str) tuple is answered first, with no `isinstance` of a union
    (0.06 s there before); anything else takes the full checks."""
    if type(key) is tuple and len(key) == 3:
        file, line, func = key
        if type(file) is str and type(line) is int and type(func) is str:
            if not _INT_MIN <= line <= _INT_MAX:
                raise LoadError(MALFORMED)
            return key
    if (
        not isinstance(key, tuple)
        or len(key) != 3
        or not isinstance(key[1], int)
        or not isinstance(key[0], str | bytes)
    ):
        raise LoadError(NOT_PSTATS)
    if isinstance(key[0], bytes) or isinstance(key[2], bytes):
        raise LoadError(PY2_MESSAGE)  # Python 2 `str` comes back as Python 3 bytes
    if not _INT_MIN <= key[1] <= _INT_MAX:
        raise LoadError(MALFORMED)
    return key[0], key[1], str(key[2])


def _count(value: Any) -> int:
    """A call count as pstats writes it: a non-negative int (bool excluded), at most 2**53 so
    it survives the float64 table below exactly."""
    if type(value) is not int or not 0 <= value <= 2**53:
        raise LoadError(MALFORMED)
    return value


def _seconds(value: Any) -> float:
    """A time in seconds: a finite, non-negative float (or int) small enough to hold in int64 ns.

    Checked here because `float("nan")` or `1e300` would otherwise become garbage integers in
    the ns columns, and a string would fail deep inside numpy with an unhelpful message.
    """
    if type(value) not in (float, int) or not 0.0 <= value < _MAX_SECONDS:
        raise LoadError(MALFORMED)
    return float(value)


def _tables(stats: dict[Any, Any]) -> tuple[pd.DataFrame, pd.DataFrame, float, int, int]:
    """Functions and edges frames plus pstats' total_tt, total_calls and prim_calls."""
    ids: dict[tuple[str, int, str], int] = {}
    rows: list[tuple[int, int, float, float]] = []
    for key, value in stats.items():
        ids[_key(key)] = len(rows)
        if not isinstance(value, tuple) or len(value) != 5 or not isinstance(value[4], dict):
            raise LoadError(NOT_PSTATS)
        cc, nc, tt, ct, _ = value
        rows.append((_count(nc), _count(cc), _seconds(tt), _seconds(ct)))
    total_tt = 0.0
    for _, _, tt, _ in rows:  # the same summation order as pstats, so totals match exactly
        total_tt += tt
    e_rows: list[tuple[int, int, int, int, float, float]] = []
    for key, value in stats.items():
        callee = ids[_key(key)]
        for caller_key, edge in value[4].items():
            ck = _key(caller_key)
            caller = ids.get(ck)
            if caller is None:  # a caller with no stats row of its own (merged dumps)
                caller = ids[ck] = len(rows)
                rows.append((0, 0, 0.0, 0.0))
            if isinstance(edge, tuple) and len(edge) >= 4:
                nc, cc = _count(edge[0]), _count(edge[1])
                e_rows.append((caller, callee, nc, cc, _seconds(edge[2]), _seconds(edge[3])))
            elif isinstance(edge, int):  # the pure-Python `profile` module: a call count
                e_rows.append((caller, callee, _count(edge), edge, 0.0, 0.0))
            else:
                raise LoadError(NOT_PSTATS)
    keys = list(ids)
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, 4)
    functions = pd.DataFrame(
        {
            "function": pd.Series([k[2] for k in keys], dtype=object),
            "file": pd.Series([k[0] for k in keys], dtype=object),
            "line": np.asarray([k[1] for k in keys], dtype=np.int64),
            "ncalls": arr[:, 0].astype(np.int64),
            "primitive_calls": arr[:, 1].astype(np.int64),
            "tottime_ns": np.rint(arr[:, 2] * 1e9).astype(np.int64),
            "cumtime_ns": np.rint(arr[:, 3] * 1e9).astype(np.int64),
        }
    )
    earr = np.asarray(e_rows, dtype=np.float64).reshape(-1, 6)
    edges = pd.DataFrame(
        {
            "caller": earr[:, 0].astype(np.int64),
            "callee": earr[:, 1].astype(np.int64),
            "ncalls": earr[:, 2].astype(np.int64),
            "primitive_calls": earr[:, 3].astype(np.int64),
            "tottime_ns": np.rint(earr[:, 4] * 1e9).astype(np.int64),
            "cumtime_ns": np.rint(earr[:, 5] * 1e9).astype(np.int64),
        }
    )
    total_calls = int(functions["ncalls"].sum())
    prim_calls = int(functions["primitive_calls"].sum())
    return functions, edges, total_tt, total_calls, prim_calls


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Read a pstats dump into a `PstatsProfile` and an estimated icicle tree."""
    path = Path(path)
    progress(0.0, "reading cProfile data")
    data = path.read_bytes()
    if not sniff(data[:2], path):
        raise LoadError(refuse(read_head(path), path) or f"it is not {DESCRIPTION}")
    stats = _decode(data)
    progress(0.3, "building function table")
    functions, edges, total_tt, total_calls, prim_calls = _tables(stats)
    del stats
    if len(functions) == 0:
        raise EmptyProfile("the cProfile file holds no functions")
    try:
        schema.validate_tables({"functions": functions, "edges": edges})
    except ValueError as exc:
        raise LoadError(f"the cProfile data is inconsistent ({exc})") from exc
    total_ns = round(total_tt * 1e9)
    profile = PstatsProfile(
        functions=functions,
        edges=edges,
        total_ns=total_ns,
        total_calls=total_calls,
        primitive_calls=prim_calls,
    )
    progress(0.6, "reconstructing the call tree")
    tree, notes = build_pstats_tree(profile)
    progress(1.0, "done")
    return Bundle(
        format=NAME,
        path=path,
        profile=profile,
        tree=tree,
        counts={
            "functions": len(functions),
            "calls": total_calls,
            "primitive_calls": prim_calls,
            "edges": len(edges),
        },
        duration_ns=total_ns,
        warnings=notes,
    )
