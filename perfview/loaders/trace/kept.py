"""What both decoders keep of a few events' args: metadata, counters, memory, shapes, flow ids.

Only these event kinds need their args decoded (names and sort indexes, counter values, the
allocator's numbers); every slice's args stay raw bytes for the ArgsStore. The functions take
decoded events (`EVENTS` structs) and work the same for a general-path batch and for the
scanner's few decoded events (`assemble`): `rows` are positions in `evs`, `numbers` the same
events' numbers in the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from perfview.loaders.trace import fields
from perfview.loaders.trace.columns import Columns, Interner
from perfview.loaders.trace.numbers import from_text

# the textual event struct: every number as its JSON text (decodes any well-typed event)
Event = fields.struct("Event", fields.EVENT, typed=False)
MemoryArgs = fields.struct("MemoryArgs", fields.MEMORY_ARGS, typed=False)
EVENTS = msgspec.json.Decoder(list[Event])  # type: ignore[valid-type]
_MEMORY = msgspec.json.Decoder(list[MemoryArgs])  # type: ignore[valid-type]
_ANY = msgspec.json.Decoder()
_SPACES = re.compile(rb"\s+")


def id_key(ev: Any) -> bytes:
    """Flow/async id as text: `id`, else `id2` (local/global), so strings, ints and > 2**64 work."""
    raw = ev.id if len(ev.id) else ev.id2
    return bytes(raw).strip().strip(b'"').lower() if len(raw) else b""


def compact_dims(raw: bytes) -> str:
    """Input Dims as compact text: '[[32, 3, 224, 224], [64, 3, 7, 7], []]'."""
    if not raw:
        return ""
    return _SPACES.sub(b"", raw).replace(b",", b", ").decode("utf-8", "replace")


def shapes(cols: Columns, args: Sequence[Any]) -> None:
    """Input Dims per event as interned compact text ('' when absent)."""
    dims = list(map(bytes, map(attrgetter("dims"), args)))
    lower = list(map(bytes, map(attrgetter("dims_lower"), args)))
    if any(lower):  # older kineto spelled it "Input dims"
        dims = [d or d2 for d, d2 in zip(dims, lower, strict=True)]
    local = Interner()
    codes = local.codes(dims)
    gmap = np.array([cols.shapes.add(compact_dims(u)) for u in local.values], dtype=np.int32)
    cols.shape.append(gmap[codes] if len(gmap) else np.zeros(len(dims), dtype=np.int32))


def _decode_args(evs: Sequence[Any], rows: np.ndarray) -> list[Any]:
    kept = [evs[i].args if len(evs[i].args) else b"null" for i in rows.tolist()]
    try:
        out: list[Any] = _ANY.decode(b"[" + b",".join(kept) + b"]")
        return out
    except msgspec.DecodeError:
        return [None] * len(kept)


def metadata(cols: Columns, evs: Sequence[Any], rows: np.ndarray, numbers: np.ndarray) -> None:
    """M events: (event number, kind, pid, tid, args) for the lanes' names and order."""
    decoded = _decode_args(evs, rows)
    for i, number, args in zip(rows.tolist(), numbers.tolist(), decoded, strict=True):
        ev = evs[i]
        cols.metadata.append((number, ev.name or "", ev.pid, ev.tid, args))


def counters(cols: Columns, evs: Sequence[Any], rows: np.ndarray, numbers: np.ndarray) -> None:
    """C events: one (event number, "name\\0key", value) per numeric arg."""
    decoded = _decode_args(evs, rows)
    for i, number, args in zip(rows.tolist(), numbers.tolist(), decoded, strict=True):
        if not isinstance(args, dict):
            continue
        name = evs[i].name or ""
        for key, value in args.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                cols.counters.append((number, f"{name}\x00{key}", float(value)))


def memory(cols: Columns, evs: Sequence[Any], rows: np.ndarray, numbers: np.ndarray) -> None:
    """torch's [memory] / [OutOfMemory] instants: their MEMORY_ARGS as columns."""
    kept = [evs[i].args if len(evs[i].args) else b"{}" for i in rows.tolist()]
    try:
        mem = _MEMORY.decode(b"[" + b",".join(kept) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        mem = [MemoryArgs() for _ in kept]
    out = cols.memory
    out.setdefault("row", []).append(np.asarray(numbers, dtype=np.int64))
    out.setdefault("oom", []).append(
        np.array([evs[i].name == fields.MEMORY_NAMES[1] for i in rows.tolist()], dtype=bool)
    )
    for f in fields.MEMORY_ARGS:
        v, ok = from_text(list(map(attrgetter(f.attr), mem)), 0)
        out.setdefault(f.attr, []).append(np.where(ok, v, fields.MEMORY_DEFAULTS.get(f.attr, 0)))


__all__ = ["EVENTS", "Event", "compact_dims", "counters", "id_key", "memory", "metadata", "shapes"]
