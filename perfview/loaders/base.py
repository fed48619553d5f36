"""The shape every loader module has (`Loader`), and helpers they share.

A loader module defines NAME, DESCRIPTION, EXTENSIONS, `sniff(head, path)` (a cheap content
check on the first bytes, gunzipped), `refuse(head, path)` (a sentence naming a file it
recognises but will not read, else None) and `load(path, *, progress)` → Bundle. It is a pure
function of its inputs: where it runs and caching are the load service's business.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Protocol

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


class Loader(Protocol):
    """What every format module provides; `loaders.registry.LOADERS` entries are checked
    against it by mypy. Read-only members, so a module's `Final` constants satisfy them."""

    @property
    def NAME(self) -> str: ...  # the loader's id (its Bundles' `format` is a `Format`)

    @property
    def DESCRIPTION(self) -> str: ...  # a phrase for messages ("a cProfile/pstats profile")

    @property
    def EXTENSIONS(self) -> tuple[str, ...]: ...  # usual name endings: a tie-breaker only

    def sniff(self, head: bytes, path: Path) -> bool: ...

    def refuse(self, head: bytes, path: Path) -> str | None: ...

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


def read_content(path: Path) -> bytes:
    """The whole file's content: gunzipped when it is gzip, without a UTF-8 BOM. For formats
    read whole (speedscope, pyinstrument, collapsed stacks); a damaged gzip is a LoadError."""
    raw = Path(path).read_bytes()
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise LoadError("it is a damaged gzip file") from exc
    return strip_bom(raw)


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
