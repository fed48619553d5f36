"""A file that is still arriving (a remote download), readable while it arrives (stdlib only).

`perfview.store.remote` fetches a remote trace in pieces on a thread of its own. Waiting for
the whole file before parsing would leave the parser idle for the download's length, so each
piece is also copied into an anonymous map of the file's final size (`Arriving.map`), and a
loader that can read a file while it arrives (`loaders.base.Capabilities.streams`: the trace
scanner) takes that map (`take`) and parses the part already there, asking for more
(`Arriving.wait`) when it reaches the end of what arrived. Every other reader meets the file
only once it is whole on disk (`settle`): the download writes a temporary name and renames it
into place only when every byte arrived and the size matched the listing, so a partial or
failed download is never in the cache as if whole.

Arrivals are found by the local path the file will have (`pending`), as `perfview.readahead`
finds its read-ahead. The module must stay import-cheap and below
every package that uses it (the loaders, the store): the standard library only.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from pathlib import Path

PAD = 8  # spare bytes after the content, as `readahead.PAD` (the trace loader's `read.PAD`)


def _map(size: int) -> mmap.mmap:
    """A private anonymous map (see `readahead.anonymous_map`: a shared one keeps its pages)."""
    try:
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    except (AttributeError, TypeError):  # pragma: no cover - Windows: no flags
        return mmap.mmap(-1, size)


class Arriving:
    """One file arriving: `have` of its `size` bytes are in `map` (followed by PAD spaces
    once whole); `done` once it lies whole at `path`. The writer calls `add`, then
    `finished` or `failed`; readers call `wait`, `head` and `whole`."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = Path(path)
        self.size = size
        self.map = _map(size + PAD)
        self.have = 0
        self.done = False
        self.error: BaseException | None = None
        self.taken = False
        self.woken = False  # its reader was cancelled: waits return at once (`wake`)
        self._cond = threading.Condition()

    # ------------------------------------------------------------------ the writer's side

    def add(self, data: bytes | bytearray | memoryview) -> None:
        """Append the next piece (ValueError when the file outgrows its listed size)."""
        end = self.have + len(data)
        if end > self.size:
            raise ValueError(f"it grew past its listed size ({self.size:,} bytes) while read")
        self.map[self.have : end] = data
        if end == self.size:  # as a whole file's map: PAD spaces after the content
            self.map[end : end + PAD] = b" " * PAD
        with self._cond:
            self.have = end
            self._cond.notify_all()

    def finished(self) -> None:
        """Every byte arrived and the file lies whole at `path`."""
        with self._cond:
            self.done = True
            self._cond.notify_all()
        _forget(self)

    def failed(self, error: BaseException) -> None:
        """The download stopped: every reader waiting, and every later one, gets `error` (it
        stays findable at `path` until a new download of it is offered)."""
        with self._cond:
            self.error = error
            self._cond.notify_all()
        with _lock:
            taken = self.taken
        if not taken:
            with contextlib.suppress(BufferError):
                self.map.close()

    # ------------------------------------------------------------------ the readers' side

    def wait(self, want: int, consumed: int = 0) -> int:
        """Wait until `want` bytes arrived (or the whole file, when smaller); returns the
        bytes there now. `consumed`: how far the caller has read (what `want` follows on).
        Raises the download's error."""
        want = min(want, self.size)
        with self._cond:
            while self.have < want and self.error is None and not self.woken:
                self._cond.wait()
            if self.error is not None:
                raise self.error
            return self.have

    def wake(self) -> None:
        """The reader's load was cancelled: its waits return at once, with what arrived (it
        checks its own stop), so a Cancel never waits for the network. The download goes
        on into the cache."""
        with self._cond:
            self.woken = True
            self._cond.notify_all()

    def head(self, size: int) -> bytes:
        """The file's first `size` bytes (fewer when it is smaller), once they arrived."""
        got = min(size, self.wait(size))
        try:
            return bytes(self.map[:got])
        except ValueError:  # whole meanwhile, and its map freed: the file is there
            with open(self.path, "rb") as fh:
                return fh.read(got)

    def whole(self) -> None:
        """Wait until the file lies whole at `path`; raises the download's error."""
        with self._cond:
            while not self.done and self.error is None:
                self._cond.wait()
            if self.error is not None:
                raise self.error


_arriving: dict[str, Arriving] = {}
_lock = threading.Lock()


def _key(path: str | os.PathLike[str]) -> str:
    return os.path.abspath(path)


def offer(arriving: Arriving) -> None:
    """Make a download findable by its local path until it is whole (or failed)."""
    with _lock:
        _arriving[_key(arriving.path)] = arriving


def _forget(arriving: Arriving) -> None:
    """Drop a finished download; its map is freed unless a reader took it."""
    with _lock:
        if _arriving.get(_key(arriving.path)) is arriving:
            del _arriving[_key(arriving.path)]
        taken = arriving.taken  # the reader's now: freed with its last reference
    if not taken:
        with contextlib.suppress(BufferError):  # a reader still looking at it frees it
            arriving.map.close()


def pending(path: str | os.PathLike[str]) -> Arriving | None:
    """The download still arriving at `path` (or failed: its readers get the error), or
    None (nothing arriving: read the file)."""
    with _lock:
        return _arriving.get(_key(path))


def take(path: str | os.PathLike[str]) -> Arriving | None:
    """The download arriving at `path`, its map handed to the caller (once: None for a
    second reader, who waits for the whole file with `settle`)."""
    with _lock:
        arriving = _arriving.get(_key(path))
        if arriving is None or arriving.taken or arriving.error is not None:
            return None
        arriving.taken = True
        return arriving


def discard_failed(path: str | os.PathLike[str]) -> None:
    """Forget a failed download of `path` (it is being fetched again)."""
    with _lock:
        arriving = _arriving.get(_key(path))
        if arriving is not None and arriving.error is not None:
            del _arriving[_key(path)]


def settle(path: str | os.PathLike[str]) -> None:
    """Wait until a download arriving at `path` lies whole there (nothing when none is);
    raises the download's error."""
    arriving = pending(path)
    if arriving is not None:
        arriving.whole()


def size_of(path: str | os.PathLike[str]) -> int:
    """The file's size: the listed size of a download still arriving, else the file's own
    (OSError when there is neither)."""
    arriving = pending(path)
    return arriving.size if arriving is not None else os.stat(path).st_size


__all__ = [
    "PAD", "Arriving", "discard_failed", "offer", "pending", "settle", "size_of", "take",
]  # fmt: skip
