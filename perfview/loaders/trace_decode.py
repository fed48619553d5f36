"""Low-level decoding for Chrome trace files: bytes in, raw event slices and exact numbers out.

Three jobs, each chosen for speed and tolerance of real-world files:

* `read_bytes` stream-decompresses gzip into one bytearray (the compressed file is never held
  whole), tolerating a truncated or corrupt stream.
* `split_events` finds the events array (object or bare-array form) and returns one
  `msgspec.Raw` per event: msgspec only skims the events here, so the top level costs little.
  Unterminated arrays, trailing commas and files cut mid-event are repaired by retrying at the
  last complete event.
* `parse_decimal` turns JSON number texts (µs with fractional ns, possibly 16-digit epoch
  values, possibly quoted) into exact int64 ns with numpy, never going through float64,
  which cannot hold epoch nanoseconds exactly.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, Overflow
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import GZIP_MAGIC

Text = bytearray | mmap.mmap  # a file's bytes: `read_mapped`'s map, or a bytearray
CHUNK = 1 << 20
PAD = 8  # spare bytes after the content, so a batch can be bracketed in place
_WS = b" \t\r\n"
_MAX_REPAIR_TRIES = 200


def read_bytes(path: Path, progress: Progress = noop, share: float = 0.3) -> tuple[bytearray, str]:
    """The whole (decompressed) content plus PAD spaces, and a warning ('' when none)."""
    size = max(path.stat().st_size, 1)
    with open(path, "rb") as fh:
        if fh.read(2) != GZIP_MAGIC:
            fh.seek(0)
            buf = bytearray(size + PAD)
            got = fh.readinto(buf)
            del buf[got:]
            buf += b" " * PAD
            progress(share, "read")
            return buf, ""
        fh.seek(0)
        return _gunzip(fh, size, progress, share)


def read_mapped(path: Path, progress: Progress = noop, share: float = 0.2) -> tuple[mmap.mmap, str]:
    """The (decompressed) content plus PAD spaces in an anonymous memory map, and a warning.

    Used by the scanner path: unlike a bytearray, a map can hand the pages past the args back
    to the system when the text becomes the args blob (`mmap.resize`), so a 1 GB trace does
    not keep 1 GB resident for 0.6 GB of args. gzip is inflated chunk by chunk into the map
    (grown by remapping, not copying): the compressed file is never held whole.
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if fh.read(2) == GZIP_MAGIC:
            fh.seek(0)
            sink = _MapSink(_gzip_size_hint(fh, size))
            warning = _inflate(fh, size, progress, share, sink.write)
            return sink.finish(), warning
        mm = anonymous_map(size + PAD)
        view = memoryview(mm)
        try:
            got = _read_parallel(fh.fileno(), view, size)
        finally:
            view.release()
    if got < size:  # the file shrank while it was read
        mm = shrink_map(mm, got + PAD)
    mm[got : got + PAD] = b" " * PAD
    progress(share, "read")
    return mm, ""


def anonymous_map(size: int) -> mmap.mmap:
    """A private anonymous memory map. Private, not Python's default shared: shrinking a
    shared anonymous map unmaps its tail but the pages stay allocated (shmem) until it is
    closed, so the memory a shrink should return would stay in use."""
    try:
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    except (AttributeError, TypeError):  # pragma: no cover - Windows: no flags
        return mmap.mmap(-1, size)


def shrink_map(mm: mmap.mmap, size: int) -> mmap.mmap:
    """`mm` cut to `size` bytes: in place where the system can remap (Linux), else copied."""
    try:
        mm.resize(size)
        return mm
    except (BufferError, OSError, ValueError, SystemError):
        small = anonymous_map(size)
        small[:] = mm[:size]
        mm.close()
        return small


READ_PIECE = 64 << 20


def _read_parallel(fd: int, view: memoryview, size: int) -> int:
    """Read `size` bytes of `fd` into `view` with a thread per core (each its own pieces):
    copying from the page cache and faulting the map's pages in costs CPU, and two cores
    halve it (0.8 s -> 0.4 s for 1 GB here). Returns the bytes read (less when it shrank)."""
    pieces = [(a, min(a + READ_PIECE, size)) for a in range(0, size, READ_PIECE)]
    got = [0] * len(pieces)

    def read(k: int) -> None:
        a, b = pieces[k]
        off = a
        while off < b:
            n = os.preadv(fd, [view[off:b]], off)
            if n <= 0:
                break
            off += n
        got[k] = off - a

    workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 4)
    if workers < 2 or len(pieces) < 2 or not hasattr(os, "preadv"):
        for k in range(len(pieces)):
            read(k)
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="perfview-read") as pool:
            list(pool.map(read, range(len(pieces))))
    total = 0
    for (a, b), n in zip(pieces, got, strict=True):
        total += n
        if n < b - a:  # a short piece: the file ends there
            break
    return total


class _MapSink:
    """An anonymous map that decompressed chunks are appended to.

    Sized from gzip's trailer, which is exact for one member under 4 GB; when it is not, the
    map is replaced by one twice as big (a copy). `mmap.resize` must not grow it: on Python
    3.11 a grown anonymous map raises SIGBUS when the new pages are touched (found by
    scripts/fuzz_loaders.py). Shrinking is fine.
    """

    def __init__(self, capacity: int) -> None:
        self.mm = anonymous_map(max(capacity, 1 << 16) + PAD)
        self.n = 0

    def write(self, data: bytes) -> int:
        end = self.n + len(data)
        if end + PAD > len(self.mm):
            bigger = anonymous_map(max(end + PAD, len(self.mm) * 2))
            bigger[: self.n] = self.mm[: self.n]
            self.mm.close()
            self.mm = bigger
        self.mm[self.n : end] = data
        self.n = end
        return end

    def finish(self) -> mmap.mmap:
        self.mm = shrink_map(self.mm, self.n + PAD)
        self.mm[self.n : self.n + PAD] = b" " * PAD
        return self.mm


def _gzip_size_hint(fh: Any, size: int) -> int:
    """gzip's trailer holds the inflated size mod 2**32: exact for one member under 4 GB."""
    if size < 18:
        return 0
    fh.seek(size - 4)
    hint = int.from_bytes(fh.read(4), "little")
    fh.seek(0)
    return hint if hint >= size else 4 * size


def _gunzip(fh: Any, size: int, progress: Progress, share: float) -> tuple[bytearray, str]:
    out = bytearray()
    warning = _inflate(fh, size, progress, share, out.extend)
    out += b" " * PAD
    return out, warning


def _inflate(
    fh: Any, size: int, progress: Progress, share: float, write: Callable[[bytes], object]
) -> str:
    """Stream-decompress `fh` into `write`; returns a warning ('' when none). Tolerates a
    truncated or corrupt stream after some output (chrome://tracing would show the rest)."""
    dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
    wrote = False
    while True:
        chunk = fh.read(CHUNK)
        if not chunk:
            if not dec.eof and wrote:
                return "the gzip stream ends early; loaded what was decompressed"
            return ""
        try:
            data = dec.decompress(chunk)
            while dec.eof and dec.unused_data:  # concatenated gzip members
                rest = dec.unused_data
                dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
                data += dec.decompress(rest)
        except zlib.error:
            if not wrote:
                raise LoadError("the gzip file is corrupt") from None
            return "the gzip stream is corrupt; loaded what was decompressed before the damage"
        if data:
            write(data)
            wrote = True
        progress(share * fh.tell() / max(size, 1), "decompressing")


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
        return events, [
            f"the file is truncated after {len(events):,} events; loaded what was complete"
        ]
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


__all__ = [
    "Bracket",
    "Split",
    "anonymous_map",
    "batch_bounds",
    "parse_decimal",
    "read_bytes",
    "read_mapped",
    "shrink_map",
    "split_events",
]
