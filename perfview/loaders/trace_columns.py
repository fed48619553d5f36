"""Decode raw trace events, a batch at a time, into flat numpy columns.

msgspec decodes each batch into small typed structs (gc=False, measured fastest); the structs
are turned into columns at once and dropped, so peak memory stays near the file size. Strings
are interned per batch (pandas factorize) into global codes, numbers are parsed exactly from
their JSON text. Only the few event kinds that need their args (metadata, counters, memory)
decode them; every slice's args stay raw bytes for the ArgsStore.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from perfview.core.model.progress import Progress
from perfview.loaders import trace_fast
from perfview.loaders.trace_decode import Bracket, batch_bounds, parse_decimal

EMPTY = msgspec.Raw(b"")
BATCH = 100_000
BATCH_BYTES = 6_000_000
ARG_PHASES = frozenset("XBbS")  # phases whose args are kept for the ArgsStore
ID_PHASES = frozenset("stfbenSTFp")  # phases whose id matters (flows, async)
SCOPE_PHASES = frozenset("iInR")
MEMORY_NAMES = ("[memory]", "[OutOfMemory]")


class Ev(msgspec.Struct, gc=False):
    """One trace event, as much of it as the loader uses."""

    ph: str | None = None
    name: str | None = None
    cat: str | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    ts: msgspec.Raw = EMPTY
    dur: msgspec.Raw = EMPTY
    args: msgspec.Raw = EMPTY
    id: msgspec.Raw = EMPTY
    id2: msgspec.Raw = EMPTY
    bp: str | None = None
    s: str | None = None


class KArgs(msgspec.Struct, gc=False):
    """The kineto args that become columns (raw, parsed exactly later)."""

    correlation: msgspec.Raw = EMPTY
    ext: msgspec.Raw = msgspec.field(default=EMPTY, name="External id")
    ext_lower: msgspec.Raw = msgspec.field(default=EMPTY, name="external id")
    dims: msgspec.Raw = msgspec.field(default=EMPTY, name="Input Dims")
    dims_lower: msgspec.Raw = msgspec.field(default=EMPTY, name="Input dims")


class ArgsView(msgspec.Struct, gc=False):
    args: KArgs = msgspec.field(default_factory=KArgs)


class MemArgs(msgspec.Struct, gc=False):
    device_type: msgspec.Raw = msgspec.field(default=EMPTY, name="Device Type")
    device_id: msgspec.Raw = msgspec.field(default=EMPTY, name="Device Id")
    addr: msgspec.Raw = msgspec.field(default=EMPTY, name="Addr")
    bytes: msgspec.Raw = msgspec.field(default=EMPTY, name="Bytes")
    total_allocated: msgspec.Raw = msgspec.field(default=EMPTY, name="Total Allocated")
    total_reserved: msgspec.Raw = msgspec.field(default=EMPTY, name="Total Reserved")


AnyEv = Ev | trace_fast.FEv
_EV_LIST = msgspec.json.Decoder(list[Ev])
_EV_ONE = msgspec.json.Decoder(Ev)
_ARGS_LIST = msgspec.json.Decoder(list[ArgsView])
_ARGS_ONE = msgspec.json.Decoder(ArgsView)
_MEM_LIST = msgspec.json.Decoder(list[MemArgs])
_ANY = msgspec.json.Decoder()
_SPACES = re.compile(rb"\s+")
_OPENERS = frozenset(b"[, \t\r\n")  # bytes that may precede an event in the array
_CLOSERS = frozenset(b"], \t\r\n")


class Interner:
    """Global ids for values seen across batches (strings, pid/tid keys, flow ids)."""

    def __init__(self) -> None:
        self.index: dict[Hashable, int] = {}
        self.values: list[Any] = []

    def add(self, value: Hashable) -> int:
        code = self.index.get(value)
        if code is None:
            code = self.index[value] = len(self.values)
            self.values.append(value)
        return code

    def codes(self, values: Sequence[Any]) -> np.ndarray:
        """Global codes of `values`; new distinct values are added (dict lookups run in C).

        New values get codes in order of first appearance (not set order, which varies with
        the string hash seed), so every process builds identical tables from one file.
        """
        index = self.index
        if not set(values).issubset(index):
            for value in dict.fromkeys(values):
                if value not in index:
                    self.add(value)
        return np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))


@dataclass
class Columns:
    """All events as flat arrays (index = event number in the file, non-objects skipped)."""

    n: int = 0
    ph: list[np.ndarray] = field(default_factory=list)  # int32 codes into phs
    name: list[np.ndarray] = field(default_factory=list)
    cat: list[np.ndarray] = field(default_factory=list)
    pid: list[np.ndarray] = field(default_factory=list)
    tid: list[np.ndarray] = field(default_factory=list)
    ts: list[np.ndarray] = field(default_factory=list)
    ts_ok: list[np.ndarray] = field(default_factory=list)
    dur: list[np.ndarray] = field(default_factory=list)
    dur_ok: list[np.ndarray] = field(default_factory=list)
    corr: list[np.ndarray] = field(default_factory=list)
    ext: list[np.ndarray] = field(default_factory=list)
    shape: list[np.ndarray] = field(default_factory=list)
    fid: list[np.ndarray] = field(default_factory=list)  # -1 = none
    bp_e: list[np.ndarray] = field(default_factory=list)
    scope: list[np.ndarray] = field(default_factory=list)  # uint8 first char of "s", 0 = none
    arg_rows: list[np.ndarray] = field(default_factory=list)
    arg_lens: list[np.ndarray] = field(default_factory=list)
    arg_blobs: list[bytes] = field(default_factory=list)
    arg_starts: list[np.ndarray] = field(default_factory=list)  # scanner path: offsets in the file
    phs: Interner = field(default_factory=Interner)
    names: Interner = field(default_factory=Interner)
    cats: Interner = field(default_factory=Interner)
    keys: Interner = field(default_factory=Interner)  # pid and tid values (int | str | None)
    shapes: Interner = field(default_factory=Interner)
    ids: Interner = field(default_factory=Interner)
    metadata: list[tuple[int, str, Any, Any, Any]] = field(default_factory=list)
    counters: list[tuple[int, str, float]] = field(default_factory=list)  # (event, series, v)
    memory: dict[str, list[np.ndarray]] = field(default_factory=dict)
    skipped: int = 0  # array items that were not event objects

    def __post_init__(self) -> None:
        self.shapes.add("")

    def cat_all(self, name: str) -> np.ndarray:
        """All batches of one column (the array itself, not a copy, when there is one)."""
        parts = getattr(self, name)
        if len(parts) == 1:
            out: np.ndarray = parts[0]
            return out
        return np.concatenate(parts) if parts else np.zeros(0)

    def mem(self, name: str) -> np.ndarray:
        parts = self.memory.get(name, [])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def decode_events(
    buf: bytearray, raws: list[msgspec.Raw], progress: Progress, lo: float, hi: float
) -> Columns:
    """Decode every event into `Columns`, batch by batch, reporting progress in [lo, hi]."""
    cols = Columns()
    n = len(raws)
    # Batches of about BATCH_BYTES: msgspec holds the GIL for a whole decode call, so a GUI
    # thread sharing the process gets it back every few tens of milliseconds.
    step = max(1000, min(BATCH, n * BATCH_BYTES // max(len(buf), 1)))
    for a in range(0, n, step):
        b = min(n, a + step)
        if not _fast_batch(cols, buf, raws, a, b):
            evs, kargs = _decode_batch(buf, raws, a, b)
            _append(cols, evs, kargs)
        progress(lo + (hi - lo) * b / max(n, 1), f"decoded {b:,} of {n:,} events")
    return cols


def _fast_batch(cols: Columns, buf: bytearray, raws: list[msgspec.Raw], a: int, b: int) -> bool:
    """Decode and append raws[a:b] on the fast path; False (nothing appended) when it cannot.

    The fast path computes every number before appending anything, so a batch it refuses
    leaves `cols` untouched for the exact path.
    """
    lo, hi = batch_bounds(buf, raws, a, b)
    if not (0 <= lo < hi <= len(buf) and buf[lo] in _OPENERS and buf[hi - 1] in _CLOSERS):
        return False
    try:
        with Bracket(buf, lo, hi) as view:
            evs, kargs = trace_fast.decode(view)
        if len(evs) != b - a:
            return False

        def exact(rows: np.ndarray, attr: str) -> tuple[np.ndarray, np.ndarray]:
            return _exact_rows(raws, a, rows, attr)

        ts, ts_ok = trace_fast.times(evs, "ts", exact)
        dur, dur_ok = trace_fast.times(evs, "dur", exact)
        corr, ext = trace_fast.kineto_ids(kargs)
    except trace_fast.NotFast:
        return False
    args = list(map(attrgetter("args"), kargs))
    _append_common(cols, evs, (ts, ts_ok, dur, dur_ok, corr, ext), args)
    return True


def _exact_rows(
    raws: list[msgspec.Raw], a: int, rows: np.ndarray, attr: str
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ns of `attr` for batch rows the fast path could not prove, from their text."""
    joined = b"[" + b",".join([raws[a + i] for i in rows.tolist()]) + b"]"
    evs = _EV_LIST.decode(joined)
    return _exact(list(map(attrgetter(attr), evs)), 3)


def _decode_batch(
    buf: bytearray, raws: list[msgspec.Raw], a: int, b: int
) -> tuple[list[Ev], list[ArgsView]]:
    lo, hi = batch_bounds(buf, raws, a, b)
    evs: list[Ev] | None = None
    kargs: list[ArgsView] | None = None
    in_place = 0 <= lo < hi <= len(buf) and buf[lo] in _OPENERS and buf[hi - 1] in _CLOSERS
    try:
        if in_place:
            with Bracket(buf, lo, hi) as view:
                evs = _EV_LIST.decode(view)
                kargs = _ARGS_LIST.decode(view)
        else:  # the events are not views of `buf` (never seen; kept for safety): copy them
            joined = b"[" + b",".join(raws[a:b]) + b"]"
            evs = _EV_LIST.decode(joined)
            kargs = _ARGS_LIST.decode(joined)
    except (msgspec.DecodeError, msgspec.ValidationError):
        evs = kargs = None
    if evs is None or kargs is None:
        evs, kargs = [], []
        for raw in raws[a:b]:
            ev = _lenient(raw)
            if ev is not None:
                evs.append(ev)
                kargs.append(_lenient_args(raw))
    return evs, kargs


def _lenient(raw: msgspec.Raw) -> Ev | None:
    """Decode one event that failed the typed batch: coerce odd types instead of failing."""
    try:
        return _EV_ONE.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        obj = _ANY.decode(raw)
    except msgspec.DecodeError:
        return None
    if not isinstance(obj, dict):
        return None

    def text(key: str) -> str | None:
        v = obj.get(key)
        return v if isinstance(v, str) or v is None else msgspec.json.encode(v).decode()

    def key(name: str) -> int | str | None:
        v = obj.get(name)
        if isinstance(v, bool) or not isinstance(v, int | str | None):
            return text(name)
        return v

    def rawf(name: str) -> msgspec.Raw:
        return msgspec.Raw(msgspec.json.encode(obj[name])) if name in obj else EMPTY

    return Ev(
        ph=text("ph"),
        name=text("name"),
        cat=text("cat"),
        pid=key("pid"),
        tid=key("tid"),
        ts=rawf("ts"),
        dur=rawf("dur"),
        args=rawf("args") if isinstance(obj.get("args"), dict) else EMPTY,
        id=rawf("id"),
        id2=rawf("id2"),
        bp=text("bp"),
        s=text("s"),
    )


def _lenient_args(raw: msgspec.Raw) -> ArgsView:
    try:
        return _ARGS_ONE.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ArgsView()


def _exact(raws: list[msgspec.Raw], scale: int) -> tuple[np.ndarray, np.ndarray]:
    joined = b"\n".join(raws)
    if len(joined) < len(raws):  # all empty: the key never occurs in this batch
        return np.zeros(len(raws), dtype=np.int64), np.zeros(len(raws), dtype=bool)
    return parse_decimal(joined, len(raws), scale)


def _append(cols: Columns, evs: list[Ev], kargs: list[ArgsView]) -> None:
    """The exact path: every number parsed from its JSON text."""
    if not evs:
        return
    ts, ts_ok = _exact(list(map(attrgetter("ts"), evs)), 3)
    dur, dur_ok = _exact(list(map(attrgetter("dur"), evs)), 3)
    args = list(map(attrgetter("args"), kargs))
    corr, ok = _exact(list(map(attrgetter("correlation"), args)), 0)
    corr = np.where(ok, corr, -1)
    ext, ok = _exact(list(map(attrgetter("ext"), args)), 0)
    ext2, ok2 = _exact(list(map(attrgetter("ext_lower"), args)), 0)
    ext = np.where(ok, ext, np.where(ok2, ext2, -1))
    _append_common(cols, evs, (ts, ts_ok, dur, dur_ok, corr, ext), args)


def _append_common(
    cols: Columns,
    evs: Sequence[AnyEv],
    numbers: tuple[np.ndarray, ...],
    args: Sequence[KArgs | trace_fast.FKArgs],
) -> None:
    """Append one decoded batch: strings interned, numbers as given, the rest from `evs`."""
    m = len(evs)
    base = cols.n
    if m == 0:
        return
    ph = cols.phs.codes(list(map(attrgetter("ph"), evs)))
    cols.ph.append(ph)
    names = cols.names.codes(list(map(attrgetter("name"), evs)))
    cols.name.append(names)
    cols.cat.append(cols.cats.codes(list(map(attrgetter("cat"), evs))))
    cols.pid.append(cols.keys.codes(list(map(attrgetter("pid"), evs))))
    cols.tid.append(cols.keys.codes(list(map(attrgetter("tid"), evs))))
    ts, ts_ok, dur, dur_ok, corr, ext = numbers
    cols.ts.append(ts)
    cols.ts_ok.append(ts_ok)
    cols.dur.append(dur)
    cols.dur_ok.append(dur_ok)
    cols.corr.append(corr)
    cols.ext.append(ext)
    _shapes(cols, args)
    phs = cols.phs.values

    def rows(phases: frozenset[str]) -> np.ndarray:
        wanted = [i for i, p in enumerate(phs) if p in phases]
        return np.flatnonzero(np.isin(ph, wanted))

    fid = np.full(m, -1, dtype=np.int32)
    idr = rows(ID_PHASES)
    if len(idr):
        fid[idr] = cols.ids.codes([_id_key(evs[i]) for i in idr.tolist()])
    cols.fid.append(fid)
    bp = np.zeros(m, dtype=bool)
    scope = np.zeros(m, dtype=np.uint8)
    for i in rows(frozenset("f")).tolist():
        bp[i] = evs[i].bp == "e"
    for i in rows(SCOPE_PHASES).tolist():
        s = evs[i].s
        scope[i] = ord(s[0]) if s and s.isascii() else 0
    cols.bp_e.append(bp)
    cols.scope.append(scope)
    keep = rows(ARG_PHASES)
    kept = [evs[i].args for i in keep.tolist()]
    cols.arg_rows.append(keep + base)
    cols.arg_lens.append(np.fromiter(map(len, kept), dtype=np.int64, count=len(kept)))
    cols.arg_blobs.append(b"".join(kept))
    meta = rows(frozenset("M"))
    _metadata(cols, evs, meta, meta + base)
    counter = rows(frozenset("C"))
    _counters(cols, evs, counter, counter + base)
    mem_names = [i for i, v in enumerate(cols.names.values) if v in MEMORY_NAMES]
    mem = rows(frozenset("iI"))
    mem = mem[np.isin(names[mem], mem_names)]
    if len(mem):
        _memory(cols, evs, mem, mem + base)
    cols.n += m


def _id_key(ev: AnyEv) -> bytes:
    """Flow/async id as text: `id`, else `id2` (local/global), so strings, ints and > 2**64 work."""
    raw = ev.id if len(ev.id) else ev.id2
    return bytes(raw).strip().strip(b'"').lower() if len(raw) else b""


def _shapes(cols: Columns, args: Sequence[KArgs | trace_fast.FKArgs]) -> None:
    """Input Dims per event as interned compact text ('' when absent)."""
    dims = list(map(bytes, map(attrgetter("dims"), args)))
    lower = list(map(bytes, map(attrgetter("dims_lower"), args)))
    if any(lower):  # older kineto spelled it "Input dims"
        dims = [d or d2 for d, d2 in zip(dims, lower, strict=True)]
    local = Interner()
    codes = local.codes(dims)
    gmap = np.array([cols.shapes.add(_compact(u)) for u in local.values], dtype=np.int32)
    cols.shape.append(gmap[codes] if len(gmap) else np.zeros(len(dims), dtype=np.int32))


def _compact(raw: bytes) -> str:
    """Input Dims as compact text: '[[32, 3, 224, 224], [64, 3, 7, 7], []]'."""
    if not raw:
        return ""
    return _SPACES.sub(b"", raw).replace(b",", b", ").decode("utf-8", "replace")


def _decode_args(evs: Sequence[AnyEv], rows: np.ndarray) -> list[Any]:
    kept = [evs[i].args if len(evs[i].args) else b"null" for i in rows.tolist()]
    try:
        out: list[Any] = _ANY.decode(b"[" + b",".join(kept) + b"]")
        return out
    except msgspec.DecodeError:
        return [None] * len(kept)


# The three helpers below take `rows` (positions in `evs`) and `numbers` (the same events'
# numbers in the whole file), so both the batch path and the scanner path can use them.


def _metadata(cols: Columns, evs: Sequence[AnyEv], rows: np.ndarray, numbers: np.ndarray) -> None:
    decoded = _decode_args(evs, rows)
    for i, number, args in zip(rows.tolist(), numbers.tolist(), decoded, strict=True):
        ev = evs[i]
        cols.metadata.append((number, ev.name or "", ev.pid, ev.tid, args))


def _counters(cols: Columns, evs: Sequence[AnyEv], rows: np.ndarray, numbers: np.ndarray) -> None:
    decoded = _decode_args(evs, rows)
    for i, number, args in zip(rows.tolist(), numbers.tolist(), decoded, strict=True):
        if not isinstance(args, dict):
            continue
        name = evs[i].name or ""
        for key, value in args.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                cols.counters.append((number, f"{name}\x00{key}", float(value)))


def _memory(cols: Columns, evs: Sequence[AnyEv], rows: np.ndarray, numbers: np.ndarray) -> None:
    kept = [evs[i].args if len(evs[i].args) else b"{}" for i in rows.tolist()]
    try:
        mem = _MEM_LIST.decode(b"[" + b",".join(kept) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        mem = [MemArgs() for _ in kept]
    out = cols.memory
    out.setdefault("row", []).append(np.asarray(numbers, dtype=np.int64))
    out.setdefault("oom", []).append(
        np.array([evs[i].name == MEMORY_NAMES[1] for i in rows.tolist()], dtype=bool)
    )
    defaults = {"device_type": 0, "device_id": -1}
    for attr in ("device_type", "device_id", "addr", "bytes", "total_allocated", "total_reserved"):
        v, ok = _exact(list(map(attrgetter(attr), mem)), 0)
        out.setdefault(attr, []).append(np.where(ok, v, defaults.get(attr, 0)))


__all__ = ["BATCH", "Columns", "Ev", "Interner", "decode_events"]
