"""Find the events of a trace text for the general path: one `msgspec.Raw` per event.

msgspec only skims the events here, so the top level costs little. The object form
({"traceEvents": [...], ...}) and the bare-array form are both read; unterminated arrays,
trailing commas and files cut mid-event are repaired by retrying at the last complete event
(chrome://tracing tolerates them). `Bracket` / `batch_bounds` let `general` decode a run of
events in place, without copying them.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

import msgspec
import numpy as np

from perfview.core.model.errors import LoadError, truncated_after

_WS = b" \t\r\n"
_MAX_REPAIR_TRIES = 200


@dataclass
class Split:
    """Result of `split_events`: raw events (views into the buffer) and top-level metadata."""

    events: list[msgspec.Raw]
    top: dict[str, msgspec.Raw] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _skip_ws(buf: bytearray, i: int) -> int:
    n = len(buf)
    while i < n and buf[i] in _WS:
        i += 1
    return i


def split_events(buf: bytearray) -> Split:
    """Locate the events and return them as raw JSON slices of `buf` (no copies)."""
    if buf[:3] == b"\xef\xbb\xbf":
        buf[:3] = b"   "
    i = _skip_ws(buf, 0)
    if i >= len(buf):
        raise LoadError("the file is empty")
    mv = memoryview(buf)
    first = buf[i]
    if first == ord("["):
        events, warnings = _parse_array(buf, i)
        return Split(events, {}, warnings)
    if first != ord("{"):
        raise LoadError("it is not JSON (a trace starts with '{' or '[')")
    try:
        top = msgspec.json.decode(mv[i:], type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _split_broken_object(buf, i)
    raw = top.pop("traceEvents", None)
    if raw is None:
        raise LoadError("it is JSON but not a trace: there is no traceEvents array")
    start = _raw_offset(buf, raw)
    if start < 0 or buf[start] != ord("["):
        raise LoadError("its traceEvents is not a list of events")
    events, warnings = _parse_array(buf, start, start + len(raw))
    return Split(events, top, warnings)


def _split_broken_object(buf: bytearray, i: int) -> Split:
    """An object that does not parse: find traceEvents by text and salvage what precedes it."""
    key = buf.find(b'"traceEvents"', i)
    if key < 0:
        raise LoadError("it is not valid JSON and has no traceEvents array")
    j = _skip_ws(buf, key + len(b'"traceEvents"'))
    if j >= len(buf) or buf[j] != ord(":"):
        raise LoadError("it is not valid JSON (traceEvents has no value)")
    j = _skip_ws(buf, j + 1)
    if j >= len(buf) or buf[j] != ord("["):
        raise LoadError("its traceEvents is not a list of events")
    top: dict[str, msgspec.Raw] = {}
    prefix = bytes(buf[i:key]).rstrip(_WS + b",")
    with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
        top = msgspec.json.decode(prefix + b"}", type=dict[str, msgspec.Raw])
    events, warnings = _parse_array(buf, j)
    if not warnings:
        warnings.append("the file is not valid JSON after the events; kept all events")
    return Split(events, top, warnings)


def _raw_offset(buf: bytearray, raw: msgspec.Raw) -> int:
    """Offset of a Raw inside `buf` (Raws decoded from a bytearray are views, not copies)."""
    if len(raw) == 0:
        return -1
    base = np.frombuffer(buf, dtype=np.uint8).ctypes.data
    off = int(np.frombuffer(raw, dtype=np.uint8).ctypes.data - base)
    return off if 0 <= off < len(buf) else -1


def _parse_array(
    buf: bytearray, start: int, end: int | None = None
) -> tuple[list[msgspec.Raw], list[str]]:
    """Events of the array at buf[start] == '[' (ending at `end` when known); repairs a tail.

    A tail that does not parse is cut back to the last '}' that makes the prefix a valid array
    (msgspec's error offsets skip most dead ends), which is what chrome://tracing tolerates.
    """
    mv = memoryview(buf)
    stop = len(buf) if end is None else end
    try:
        return msgspec.json.decode(mv[start:stop], type=list[msgspec.Raw]), []
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        pos = _error_pos(exc, start, stop)
    for _ in range(_MAX_REPAIR_TRIES):
        pos = buf.rfind(b"}", start, pos)
        if pos < 0:
            break
        saved = buf[pos + 1]
        buf[pos + 1] = ord("]")
        try:
            events = msgspec.json.decode(mv[start : pos + 2], type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            pos = min(pos, _error_pos(exc, start, pos + 2))
            continue
        finally:
            buf[pos + 1] = saved
        tail = bytes(buf[pos + 1 :]).lstrip(_WS + b",")
        if tail.startswith(b"]"):
            return events, []
        if not tail.strip(_WS):
            return events, ["the event array is not closed (chrome://tracing accepts this)"]
        return events, [truncated_after(len(events))]
    raise LoadError("it is not valid JSON (no complete event could be read)")


_BYTE_RE = re.compile(r"\(byte (\d+)\)")


def _error_pos(exc: Exception, start: int, stop: int) -> int:
    """Absolute offset of a msgspec parse error, or `stop` when the message gives none."""
    m = _BYTE_RE.search(str(exc))
    return min(stop, start + int(m.group(1)) + 1) if m else stop


def batch_bounds(buf: bytearray, events: list[msgspec.Raw], a: int, b: int) -> tuple[int, int]:
    """(lo, hi) such that buf[lo:hi], with '[' written at lo and ']' at hi-1, is a JSON array
    of events[a:b]. Both bytes are separators between events (whitespace, ',', '[' or ']'), so
    bracketing in place changes no event text; `Bracket` restores them afterwards.
    """
    lo = _raw_offset(buf, events[a]) - 1
    last = events[b - 1]
    hi = _raw_offset(buf, last) + len(last) + 1
    return lo, hi


class Bracket:
    """Context manager: temporarily turn buf[lo:hi] into a JSON array (zero-copy batches)."""

    def __init__(self, buf: bytearray, lo: int, hi: int) -> None:
        self.buf, self.lo, self.hi = buf, lo, hi
        self.saved = (buf[lo], buf[hi - 1])

    def __enter__(self) -> memoryview:
        self.buf[self.lo] = ord("[")
        self.buf[self.hi - 1] = ord("]")
        return memoryview(self.buf)[self.lo : self.hi]

    def __exit__(self, *exc: object) -> None:
        self.buf[self.lo], self.buf[self.hi - 1] = self.saved


__all__ = ["Bracket", "Split", "batch_bounds", "split_events"]
