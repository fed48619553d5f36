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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core import schema
from perfview.core.callgraph import build_pstats_tree
from perfview.core.errors import EmptyProfile, LoadError
from perfview.core.model import Bundle, PstatsProfile
from perfview.core.progress import Progress, noop
from perfview.loaders.base import GZIP_MAGIC, is_gzip, read_head

NAME = "pstats"
DESCRIPTION = "a cProfile/pstats profile"
EXTENSIONS = (".prof", ".pstats", ".cprof", ".profile")

_REF_DICT = 0xFB  # marshal TYPE_DICT | FLAG_REF
# What may follow the dict code: a tuple key (TYPE_TUPLE / TYPE_SMALL_TUPLE, with or without
# the ref flag) or TYPE_NULL, which ends an empty dict.
_TUPLE_CODES = frozenset(b"()\xa8\xa90")

PY2_MESSAGE = "it is a Python 2 cProfile file; perfview reads profiles written by Python 3"
PPROF_MESSAGE = "it is a Go pprof profile (gzip protobuf), not a cProfile file"
GHC_MESSAGE = "it is a GHC (Haskell) profile, not a Python cProfile file"
NOT_PSTATS = "it is a marshal file but not a cProfile profile"

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


def _decode(data: bytes) -> dict[Any, Any]:
    try:
        stats = marshal.loads(data)
    except (ValueError, EOFError, TypeError) as exc:
        if data[:1] == b"{":
            raise LoadError(PY2_MESSAGE) from exc
        raise LoadError(f"it is not a readable cProfile file ({exc})") from exc
    if not isinstance(stats, dict):
        raise LoadError(NOT_PSTATS)
    return stats


def _key(key: Any) -> tuple[str, int, str]:
    if (
        not isinstance(key, tuple)
        or len(key) != 3
        or not isinstance(key[1], int)
        or not isinstance(key[0], str | bytes)
    ):
        raise LoadError(NOT_PSTATS)
    if isinstance(key[0], bytes) or isinstance(key[2], bytes):
        raise LoadError(PY2_MESSAGE)  # Python 2 `str` comes back as Python 3 bytes
    return key[0], key[1], str(key[2])


def _tables(stats: dict[Any, Any]) -> tuple[pd.DataFrame, pd.DataFrame, float, int, int]:
    """Functions and edges frames plus pstats' total_tt, total_calls and prim_calls."""
    ids: dict[tuple[str, int, str], int] = {}
    rows: list[tuple[int, int, float, float]] = []
    for key, value in stats.items():
        ids[_key(key)] = len(rows)
        if not isinstance(value, tuple) or len(value) != 5 or not isinstance(value[4], dict):
            raise LoadError(NOT_PSTATS)
        cc, nc, tt, ct, _ = value
        rows.append((int(nc), int(cc), float(tt), float(ct)))
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
                e_rows.append((caller, callee, int(edge[0]), int(edge[1]), edge[2], edge[3]))
            elif isinstance(edge, int):  # the pure-Python `profile` module: a call count
                e_rows.append((caller, callee, edge, edge, 0.0, 0.0))
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


def load(path: Path, *, progress: Progress = noop) -> Bundle:
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
    schema.validate(functions, schema.FUNCTIONS, "functions")
    schema.validate(edges, schema.EDGES, "edges")
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
