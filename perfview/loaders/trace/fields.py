"""The one declared table of what the trace loader reads from an event: keys, arg keys, phases.

Both decoders come from it, so a new field is one line here:

* the general path's msgspec structs are generated (`struct`): one per table, in two flavours
  of the numbers, `typed` (JSON numbers as Python ints / floats, proved exact later in
  `numbers`) and textual (the number's JSON text, parsed exactly);
* the compiled scanner's key tables are built from the same rows (`scan.keys.key_table`), and
  its key ids (`K_*`, `A_*` in `scan.events`) are positions in these tables.

Field kinds say how a value is read, by both decoders alike:

* TEXT: a string or null (phase, name, category, flow binding point, instant scope);
* KEY: a pid / tid: an integer, a string or null;
* TIME: µs as a JSON number, kept as exact int64 ns;
* ID: an integer arg (kineto's ids, the allocator's numbers), exact;
* RAW: kept as JSON text (the args object, flow ids, input shapes).

Changing a row changes what the compiled scanner reads: numba's on-disk cache is keyed on the
scanner's own source file, so touch `scan/events.py` (or clear `__pycache__`) after an edit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

TEXT, KEY, TIME, ID, RAW = "text", "key", "time", "id", "raw"
EMPTY = msgspec.Raw(b"")
NO_ID = -(2**63)  # typed default for an absent ID arg; the textual path gives -1 for it too


@dataclass(frozen=True)
class Field:
    """One JSON key: `key` as written in the file, `attr` as the struct attribute."""

    key: str
    attr: str
    kind: str


# Every event key the loader reads (the scanner's K_* ids are positions in this tuple).
EVENT = (
    Field("ph", "ph", TEXT),
    Field("name", "name", TEXT),
    Field("cat", "cat", TEXT),
    Field("pid", "pid", KEY),
    Field("tid", "tid", KEY),
    Field("ts", "ts", TIME),
    Field("dur", "dur", TIME),
    Field("args", "args", RAW),
    Field("id", "id", RAW),
    Field("id2", "id2", RAW),
    Field("bp", "bp", TEXT),
    Field("s", "s", TEXT),
)
# kineto's args that become columns: the ids first, then the shapes (the scanner relies on it)
KINETO_ARGS = (
    Field("correlation", "correlation", ID),
    Field("External id", "ext", ID),
    Field("external id", "ext_lower", ID),
    Field("Input Dims", "dims", RAW),
    Field("Input dims", "dims_lower", RAW),
)
# torch's [memory] instants: the allocator's numbers, which become the memory table
MEMORY_ARGS = (
    Field("Device Type", "device_type", ID),
    Field("Device Id", "device_id", ID),
    Field("Addr", "addr", ID),
    Field("Bytes", "bytes", ID),
    Field("Total Allocated", "total_allocated", ID),
    Field("Total Reserved", "total_reserved", ID),
)
MEMORY_DEFAULTS = {"device_type": 0, "device_id": -1}  # when an arg is absent (else 0)

# Phases (one letter) by what the loader keeps of them.
ARG_PHASES = frozenset("XBbS")  # their args are kept for the ArgsStore
ID_PHASES = frozenset("stfbenSTFp")  # their id matters (flows, async)
SCOPE_PHASES = frozenset("iInR")  # their "s" is an instant scope
MEMORY_NAMES = ("[memory]", "[OutOfMemory]")  # instant names that carry MEMORY_ARGS


def index(fields: tuple[Field, ...], attr: str) -> int:
    """Position of `attr` in a table: the scanner's id for that key."""
    return next(k for k, f in enumerate(fields) if f.attr == attr)


def phase_table(phases: frozenset[str] | str) -> np.ndarray:
    """256 flags, True at the byte of each one-letter phase (indexed by a phase's byte)."""
    out = np.zeros(256, dtype=np.bool_)
    out[np.frombuffer("".join(sorted(phases)).encode(), dtype=np.uint8)] = True
    return out


def _spec(f: Field, typed: bool) -> tuple[str, Any, Any]:
    """(attr, type, default) of one struct field (renamed to its JSON key when they differ)."""
    if f.kind == TEXT:
        kind: Any = str | None
        default: Any = None
    elif f.kind == KEY:
        kind, default = int | str | None, None
    elif f.kind == TIME and typed:
        kind, default = int | float, math.nan
    elif f.kind == ID and typed:
        kind, default = int, NO_ID
    else:
        kind, default = msgspec.Raw, EMPTY
    if f.key != f.attr:
        default = msgspec.field(default=default, name=f.key)
    return f.attr, kind, default


def struct(name: str, fields: tuple[Field, ...], *, typed: bool) -> type[msgspec.Struct]:
    """A msgspec Struct with one attribute per field (gc=False: measured fastest)."""
    return msgspec.defstruct(name, [_spec(f, typed) for f in fields], gc=False)


def args_view(name: str, args: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """A struct that reads only an event's "args" object as `args` (decoded from the same
    bracketed batch as the events, a second, cheap pass)."""
    return msgspec.defstruct(name, [("args", args, msgspec.field(default_factory=args))], gc=False)


__all__ = [
    "ARG_PHASES",
    "EVENT",
    "ID_PHASES",
    "KINETO_ARGS",
    "MEMORY_ARGS",
    "MEMORY_NAMES",
    "SCOPE_PHASES",
    "Field",
    "index",
    "phase_table",
    "struct",
]
