"""The shape every loader module has, and helpers they share.

A loader module defines:
    NAME: str                    short format id, also `Bundle.format`
    DESCRIPTION: str             a human phrase used in messages ("a cProfile/pstats file")
    EXTENSIONS: tuple[str, ...]  name endings it usually has (a tie-breaker only)
    sniff(head: bytes, path: Path) -> bool   cheap content check on the first bytes (gunzipped)
    load(path: Path, *, progress: Progress = noop) -> Bundle
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Protocol

from perfview.core.model import Bundle
from perfview.core.progress import Progress

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


class Loader(Protocol):
    NAME: str
    DESCRIPTION: str
    EXTENSIONS: tuple[str, ...]

    def sniff(self, head: bytes, path: Path) -> bool: ...

    def load(self, path: Path, *, progress: Progress = ...) -> Bundle: ...


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First `size` bytes of the file's content, decompressed when the file is gzip.

    A truncated or corrupt gzip stream yields whatever decompressed before the damage.
    """
    with open(path, "rb") as fh:
        raw = fh.read(size)
    if not raw.startswith(GZIP_MAGIC):
        return raw
    out = b""
    decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
    with open(path, "rb") as fh:
        try:
            while len(out) < size:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    break
                out += decomp.decompress(chunk, size - len(out))
                if decomp.unconsumed_tail:
                    break
        except zlib.error:
            pass
    return out[:size]


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
