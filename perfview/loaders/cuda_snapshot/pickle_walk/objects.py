"""Python objects from a walked pickle's graph, for its small parts (and the tests).

The snapshot's bulk is read by compiled code straight from the graph; what is left (the
top-level dict's keys, `allocator_settings`) is small and is built here as the unpickler
would have built it: dicts in insertion order with later keys winning, lists, tuples, and
shared containers shared. A cycle through a tuple (which pickle can only make with POP_MARK,
which the walker leaves to the unpickler) cannot happen here.
"""

from __future__ import annotations

import struct
from typing import Any

from perfview.loaders.cuda_snapshot.pickle_walk import Graph, Unsupported
from perfview.loaders.cuda_snapshot.pickle_walk import kernel as kn

_IMMEDIATE: dict[int, Any] = {kn.K_NONE: None, kn.K_FALSE: False, kn.K_TRUE: True}


def items(g: Graph, node: int) -> list[tuple[int, int]]:
    """(kind, value) of each item of container `node`, in order."""
    out: list[tuple[int, int]] = []
    r = int(g.nfirst[node])
    while r >= 0:
        lo = int(g.rs[r])
        hi = lo + int(g.rl[r])
        out += zip(g.ik[lo:hi].tolist(), g.iv[lo:hi].tolist(), strict=True)
        r = int(g.rn[r])
    return out


def to_python(g: Graph, kind: int, value: int, limit: int = 1_000_000) -> Any:
    """The object (kind, value) stands for. Unsupported past `limit` items (use the
    unpickler: this is for small parts only)."""
    strings = g.decode()
    made: dict[int, Any] = {}
    budget = [limit]

    def build(kind: int, value: int) -> Any:
        if kind in _IMMEDIATE:
            return _IMMEDIATE[kind]
        if kind == kn.K_INT:
            return value
        if kind == kn.K_FLOAT:
            return struct.unpack("<d", struct.pack("<q", value))[0]
        if kind == kn.K_STR:
            return strings[value]
        if kind == kn.K_BYTES:
            off, n = int(g.soff[value]), int(g.slen[value])
            return g.buf[off : off + n].tobytes()
        if value in made:
            return made[value]
        parts = items(g, value)
        budget[0] -= len(parts)
        if budget[0] < 0:
            raise Unsupported("too big to build as Python objects")
        if kind == kn.K_LIST:
            out: list[Any] = []
            made[value] = out
            out += [build(k, v) for k, v in parts]
            return out
        if kind == kn.K_DICT:
            d: dict[Any, Any] = {}
            made[value] = d
            for i in range(0, len(parts), 2):
                d[build(*parts[i])] = build(*parts[i + 1])
            return d
        t = tuple(build(k, v) for k, v in parts)
        made[value] = t
        return t

    try:
        return build(kind, value)
    except RecursionError as exc:
        raise Unsupported("nested too deeply") from exc
    except TypeError as exc:  # an unhashable key the walker let through: the unpickler says
        raise Unsupported("an unhashable key") from exc


def load_objects(g: Graph) -> Any:
    """The whole pickle as Python objects (tests compare it with `pickle.loads`)."""
    return to_python(g, *g.root, limit=1 << 62)
