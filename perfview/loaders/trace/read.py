"""Read a trace file's bytes: plain or gzip, into a bytearray or an anonymous memory map.

* `read_bytes` stream-decompresses gzip into one bytearray (the compressed file is never held
  whole), tolerating a truncated or corrupt stream (the general path edits this text in place);
* `read_mapped` maps a plain file copy-on-write (`readahead.map_file`), or reads it (and
  inflates gzip) into a private anonymous map, read by a thread per core: the scanner path,
  whose text later becomes the args blob and gives its other pages back.

Both leave PAD spaces after the content, so a batch can be bracketed in place.
"""

from __future__ import annotations

import mmap
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfview import readahead, streamed
from perfview.core.model.errors import GZIP_CORRUPT, GZIP_ENDS_EARLY

if TYPE_CHECKING:  # at run time neither: the scanner's imports stay free of pandas
    from perfview.core.model.progress import Progress

GZIP_MAGIC = readahead.GZIP_MAGIC

Text = bytearray | mmap.mmap  # a file's bytes: `read_mapped`'s map, or a bytearray
CHUNK = 1 << 20
PAD = readahead.PAD  # spare bytes after the content, so a batch can be bracketed in place
READ_PIECE = readahead.READ_PIECE
anonymous_map = readahead.anonymous_map


def _noop(fraction: float, message: str) -> None:
    """`core.model.progress.noop` (importing it would import pandas: `core.model`)."""


def read_bytes(path: Path, progress: Progress = _noop, share: float = 0.3) -> tuple[bytearray, str]:
    """The whole (decompressed) content plus PAD spaces, and a warning ('' when none)."""
    streamed.settle(path)  # a download still arriving: once it is whole
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


def read_mapped(
    path: Path, progress: Progress = _noop, share: float = 0.2
) -> tuple[mmap.mmap, str]:
    """The (decompressed) content plus PAD spaces in a memory map, and a warning.

    A plain file written more than a few seconds ago is mapped (`readahead.map_file`: no
    copy, 0.5 s of CPU per GB saved); otherwise it is read into an anonymous map.

    Used by the scanner path: unlike a bytearray, a map can hand the pages past the args back
    to the system when the text becomes the args blob (`mmap.resize`), so a 1 GB trace does
    not keep 1 GB resident for 0.6 GB of args. gzip is inflated chunk by chunk into the map
    (grown by remapping, not copying): the compressed file is never held whole.
    """
    streamed.settle(path)  # a download still arriving: once it is whole
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if fh.read(2) == GZIP_MAGIC:
            fh.seek(0)
            sink = _MapSink(_gzip_size_hint(fh, size))
            warning = _inflate(fh, size, progress, share, sink.write)
            return sink.finish(), warning
        ahead = readahead.take(path)  # the CLI read it while importing (same file, unchanged)
        if ahead is not None:
            mm, got = ahead
            size = len(mm) - PAD
        else:
            mapped = readahead.map_file(fh.fileno(), size)
            if mapped is not None:
                mm, got = mapped, size
            else:
                mm, got = readahead.read_plain(fh.fileno(), size, READ_PIECE)
    if got < size:  # the file shrank while it was read
        mm = shrink_map(mm, got + PAD)
    mm[got : got + PAD] = b" " * PAD
    progress(share, "read")
    return mm, ""


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


class _MapSink:
    """An anonymous map that decompressed chunks are appended to.

    Sized from gzip's trailer, which is exact for one member under 4 GB; when it is not, the
    map is replaced by one twice as big (a copy). `mmap.resize` must not grow it: on Python
    3.11 a grown anonymous map raises SIGBUS when the new pages are touched (found by
    scripts/probes/fuzz_loaders.py). Shrinking is fine.
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
                return GZIP_ENDS_EARLY
            return ""
        try:
            data = dec.decompress(chunk)
            while dec.eof and dec.unused_data:  # concatenated gzip members
                rest = dec.unused_data
                dec = zlib.decompressobj(16 + zlib.MAX_WBITS)
                data += dec.decompress(rest)
        except zlib.error:
            if not wrote:
                from perfview.core.model.errors import LoadError

                raise LoadError("the gzip file is corrupt") from None
            return GZIP_CORRUPT
        if data:
            write(data)
            wrote = True
        progress(share * fh.tell() / max(size, 1), "decompressing")


__all__ = ["PAD", "Text", "anonymous_map", "read_bytes", "read_mapped", "shrink_map"]
