"""The shape every loader module has (`Loader`), and helpers they share.

A loader module defines NAME, DESCRIPTION, EXTENSIONS, `sniff(head, path)` (a cheap content
check on the first bytes, gunzipped), `refuse(head, path)` (a sentence naming a file it
recognises but will not read, else None), `load(path, *, progress, compiled)` → Bundle, and
CAPABILITIES: what the load service may do with it (run it in a child process, wait for or
compile ahead its numba-compiled reader). The service asks the capabilities, never which
loader it holds, so a new format with a compiled reader needs no edit there. A load is a pure
function of its inputs: where it runs and caching are the load service's business.
"""

from __future__ import annotations

import enum
import gzip
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec

from perfview import streamed
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class CompiledReader:
    """A loader's numba-compiled reader, which numba compiles once after an install (~15 s
    holding the GIL) and then loads from its disk cache. The service reports `message` before
    a load that would compile it, waits for the window's compile-ahead child instead of
    compiling a second time, and has that child call `warm`. The callables import numba only
    when called: registering a loader must stay cheap."""

    what: str  # what compiles, for the user ("the trace scanner")
    min_bytes: int  # files this big or bigger take it unless the caller chooses (`compiled`)
    on_disk: Callable[[], bool]  # its compiled code is in numba's cache: no compile on first use
    warm: Callable[[], None]  # compile it, or load it from numba's cache

    @property
    def message(self) -> str:
        return f"compiling {self.what} (once, ~15 s)…"

    def used_for(self, path: Path, compiled: bool | None = None) -> bool:
        """True when loading `path` takes this reader: by size (`min_bytes`), unless
        `compiled` (a load's explicit choice: True always, False never) says otherwise."""
        if compiled is not None:
            return compiled
        try:
            return streamed.size_of(path) >= self.min_bytes
        except OSError:
            return False

    def pending(self, path: Path | None = None, compiled: bool | None = None) -> bool:
        """True when this reader's code is not on disk yet and, with `path`, loading that
        file would take it (so the load would compile first)."""
        if path is not None and not self.used_for(path, compiled):
            return False
        return not self.on_disk()


@dataclass(frozen=True)
class Capabilities:
    """What the load service may do with a loader, declared once by each loader module."""

    # its Bundle can be parsed in a spawned child process and handed back through the cache's
    # entry format (`cache.write_entry`): big files then parse on another GIL
    child: bool = False
    # a numba-compiled reader (None: pure Python and numpy, nothing to compile)
    compiled: CompiledReader | None = None
    # a load that leaves the GIL to other threads, or returns None where the file needs the
    # loader's GIL-holding path (which the service then sends to a child, when `child`)
    gil_free_load: Callable[[Path, Progress, bool | None], Bundle | None] | None = None
    # it reads a file while it still downloads (`perfview.streamed`: it takes the arriving
    # map and waits for the bytes it reaches); the service hands any other loader the file
    # once it is whole
    streams: bool = False


PLAIN = Capabilities()  # parsed in the caller's process, nothing compiled


class Where(enum.Enum):
    """Where the load service parses a file (`loaders.service`): here, GIL-free here or in a
    child, or in a child. Here, beside the protocol, so choosing it imports no loader."""

    HERE = "here"
    GIL_FREE = "gil-free"
    CHILD = "child"


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

    @property
    def CAPABILITIES(self) -> Capabilities: ...  # what the load service may do with it

    def load(
        self, path: Path, *, progress: Progress = ..., compiled: bool | None = ...
    ) -> Bundle: ...  # `compiled`: take the compiled reader (True), never (False), by size (None)


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


def read_json(path: Path, not_what: str) -> Any:
    """The whole file's JSON document (`read_content`), or a LoadError that starts with
    `not_what` ("it is not a … profile") and says why: it does not parse, or nests too deep."""
    try:
        return msgspec.json.decode(read_content(path))
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise LoadError(f"{not_what}: its JSON does not parse ({exc})") from exc
    except RecursionError as exc:
        raise LoadError(f"{not_what}: its JSON is nested too deeply to read") from exc


def strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def guarded(fn: Callable[[], Bundle | None]) -> Bundle | None:
    """Memory and I/O failures of a parse as the user's one-sentence LoadError."""
    try:
        return fn()
    except LoadError:
        raise
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc
