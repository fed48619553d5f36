"""The general path: decode raw trace events with msgspec, a batch at a time, into `Columns`.

It reads whatever the compiled scanner refuses (quoted numbers, invalid JSON around the
events, exact big ints, truncated files, small files). msgspec decodes each batch, bracketed
in place in the file text, into small structs generated from `fields` (gc=False, measured
fastest); the structs become columns at once and are dropped, so peak memory stays near the
file size. Strings are interned per batch into global codes.

A batch's numbers are read one of two ways, with identical results (tests compare them):

* typed: msgspec gives JSON numbers as ints / floats and `numbers.times` proves each exact,
  re-reading from text only the few it cannot prove. Nearly every real file takes this way;
* textual: a batch with a value of an odd type (a quoted number, a null id, a huge int) is
  decoded again with every number as its JSON text, parsed exactly; a batch that fails even
  that is decoded event by event, coercing odd types (`_lenient`).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from perfview.core.model.progress import Progress
from perfview.loaders.trace import fields, kept
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.kept import EVENTS, Event
from perfview.loaders.trace.numbers import NotTyped, from_text, kineto_ids, times
from perfview.loaders.trace.split import Bracket, batch_bounds

BATCH = 100_000
BATCH_BYTES = 6_000_000
EMPTY = fields.EMPTY

TypedEvent = fields.struct("TypedEvent", fields.EVENT, typed=True)
TypedArgs = fields.struct("TypedArgs", fields.KINETO_ARGS, typed=True)
KinetoArgs = fields.struct("KinetoArgs", fields.KINETO_ARGS, typed=False)
_TYPED = msgspec.json.Decoder(list[TypedEvent])  # type: ignore[valid-type]
_TYPED_ARGS = msgspec.json.Decoder(list[fields.args_view("TypedView", TypedArgs)])  # type: ignore[misc]
_ArgsView = fields.args_view("ArgsView", KinetoArgs)
_ARGS = msgspec.json.Decoder(list[_ArgsView])  # type: ignore[valid-type]
_EVENT = msgspec.json.Decoder(Event)
_ARGS_ONE = msgspec.json.Decoder(_ArgsView)
_ANY = msgspec.json.Decoder()
_OPENERS = frozenset(b"[, \t\r\n")  # bytes that may precede an event in the array
_CLOSERS = frozenset(b"], \t\r\n")
Numbers = tuple[np.ndarray, ...]  # ts, ts_ok, dur, dur_ok, corr, ext


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
        got = _typed_batch(buf, raws, a, b) or _text_batch(buf, raws, a, b)
        _append(cols, *got)
        del got  # the batch's structs go now, not when the next batch replaces them
        progress(lo + (hi - lo) * b / max(n, 1), f"decoded {b:,} of {n:,} events")
    return cols


def _in_place(buf: bytearray, raws: list[msgspec.Raw], a: int, b: int) -> tuple[int, int] | None:
    """Bounds to bracket raws[a:b] in place, None when the events are not views of `buf`
    (never seen; handled by copying them)."""
    lo, hi = batch_bounds(buf, raws, a, b)
    if 0 <= lo < hi <= len(buf) and buf[lo] in _OPENERS and buf[hi - 1] in _CLOSERS:
        return lo, hi
    return None


def _typed_batch(
    buf: bytearray, raws: list[msgspec.Raw], a: int, b: int
) -> tuple[list[Any], Numbers, list[Any]] | None:
    """raws[a:b] read with typed numbers, or None (nothing kept) when one has an odd type.

    Every number is computed before anything is appended, so a refused batch leaves the
    columns untouched for the textual reading.
    """
    bounds = _in_place(buf, raws, a, b)
    if bounds is None:
        return None
    try:
        with Bracket(buf, *bounds) as view:
            evs, views = _TYPED.decode(view), _TYPED_ARGS.decode(view)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(evs) != b - a:
        return None

    def exact(rows: np.ndarray, attr: str) -> tuple[np.ndarray, np.ndarray]:
        """Exact ns of `attr` for rows the typed reading could not prove, from their text."""
        joined = b"[" + b",".join([raws[a + i] for i in rows.tolist()]) + b"]"
        return from_text(list(map(attrgetter(attr), EVENTS.decode(joined))), 3)

    try:
        ts, ts_ok = times(evs, "ts", exact)
        dur, dur_ok = times(evs, "dur", exact)
        corr, ext = kineto_ids(views)
    except NotTyped:
        return None
    return evs, (ts, ts_ok, dur, dur_ok, corr, ext), list(map(attrgetter("args"), views))


def _text_batch(
    buf: bytearray, raws: list[msgspec.Raw], a: int, b: int
) -> tuple[list[Any], Numbers, list[Any]]:
    """raws[a:b] with every number parsed from its JSON text (any well-formed event)."""
    evs, views = _decode_text(buf, raws, a, b)
    args = list(map(attrgetter("args"), views))
    if not evs:
        return [], (), []
    ts, ts_ok = from_text(list(map(attrgetter("ts"), evs)), 3)
    dur, dur_ok = from_text(list(map(attrgetter("dur"), evs)), 3)
    corr, ok = from_text(list(map(attrgetter("correlation"), args)), 0)
    corr = np.where(ok, corr, -1)
    ext, ok = from_text(list(map(attrgetter("ext"), args)), 0)
    ext2, ok2 = from_text(list(map(attrgetter("ext_lower"), args)), 0)
    ext = np.where(ok, ext, np.where(ok2, ext2, -1))
    return evs, (ts, ts_ok, dur, dur_ok, corr, ext), args


def _decode_text(
    buf: bytearray, raws: list[msgspec.Raw], a: int, b: int
) -> tuple[list[Any], list[Any]]:
    """Textual events and args views of raws[a:b]; event by event when the batch fails."""
    bounds = _in_place(buf, raws, a, b)
    try:
        if bounds is not None:
            with Bracket(buf, *bounds) as view:
                return EVENTS.decode(view), _ARGS.decode(view)
        joined = b"[" + b",".join(raws[a:b]) + b"]"
        return EVENTS.decode(joined), _ARGS.decode(joined)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    evs, views = [], []
    for raw in raws[a:b]:
        ev = _lenient(raw)
        if ev is not None:
            evs.append(ev)
            views.append(_lenient_args(raw))
    return evs, views


def _lenient(raw: msgspec.Raw) -> Any:
    """Decode one event that failed the batch: coerce odd types instead of failing."""
    try:
        return _EVENT.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        obj = _ANY.decode(raw)
    except msgspec.DecodeError as exc:
        _raise_if_not_text(exc)
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

    def raw_value(name: str) -> msgspec.Raw:
        if name == "args" and not isinstance(obj.get("args"), dict):
            return EMPTY
        return msgspec.Raw(msgspec.json.encode(obj[name])) if name in obj else EMPTY

    read = {fields.TEXT: text, fields.KEY: key, fields.TIME: raw_value, fields.RAW: raw_value}
    return Event(**{f.attr: read[f.kind](f.key) for f in fields.EVENT})


def _lenient_args(raw: msgspec.Raw) -> Any:
    try:
        return _ARGS_ONE.decode(raw)
    except msgspec.DecodeError as exc:
        _raise_if_not_text(exc)
        return _ArgsView()
    except msgspec.ValidationError:
        return _ArgsView()


def _raise_if_not_text(exc: msgspec.DecodeError) -> None:
    """A JSON string holding bytes that are not UTF-8 makes the file unreadable, whatever
    else is wrong with the event: msgspec before 0.23 raised UnicodeDecodeError for it,
    which the loader turns into its one sentence (`loader._guard`); 0.23 raises a
    DecodeError saying "Invalid UTF-8", which would otherwise read as an event that is
    not an object. Raise what older msgspec raised."""
    if "UTF-8" in str(exc):
        raise UnicodeDecodeError("utf-8", b"", 0, 1, str(exc)) from exc


def _append(cols: Columns, evs: Sequence[Any], numbers: Numbers, args: Sequence[Any]) -> None:
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
    for column, values in zip(
        ("ts", "ts_ok", "dur", "dur_ok", "corr", "ext"), numbers, strict=True
    ):
        getattr(cols, column).append(values)
    kept.shapes(cols, args)
    phs = cols.phs.values

    def rows(phases: frozenset[str]) -> np.ndarray:
        wanted = [i for i, p in enumerate(phs) if p in phases]
        return np.flatnonzero(np.isin(ph, wanted))

    fid = np.full(m, -1, dtype=np.int32)
    idr = rows(fields.ID_PHASES)
    if len(idr):
        fid[idr] = cols.ids.codes([kept.id_key(evs[i]) for i in idr.tolist()])
    cols.fid.append(fid)
    bp = np.zeros(m, dtype=bool)
    scope = np.zeros(m, dtype=np.uint8)
    for i in rows(frozenset("f")).tolist():
        bp[i] = evs[i].bp == "e"
    for i in rows(fields.SCOPE_PHASES).tolist():
        s = evs[i].s
        scope[i] = ord(s[0]) if s and s.isascii() else 0
    cols.bp_e.append(bp)
    cols.scope.append(scope)
    keep = rows(fields.ARG_PHASES)
    kept_args = [evs[i].args for i in keep.tolist()]
    cols.arg_rows.append(keep + base)
    cols.arg_lens.append(np.fromiter(map(len, kept_args), dtype=np.int64, count=len(kept_args)))
    cols.arg_blobs.append(b"".join(kept_args))
    meta = rows(frozenset("M"))
    kept.metadata(cols, evs, meta, meta + base)
    counter = rows(frozenset("C"))
    kept.counters(cols, evs, counter, counter + base)
    mem_names = [i for i, v in enumerate(cols.names.values) if v in fields.MEMORY_NAMES]
    mem = rows(frozenset("iI"))
    mem = mem[np.isin(names[mem], mem_names)]
    if len(mem):
        kept.memory(cols, evs, mem, mem + base)
    cols.n += m


__all__ = ["BATCH", "decode_events"]
