"""Bytes a load writes to a file of their own on disk, not to memory (`DiskMap`), and the
read-only map of such a file that the cache can name in an entry instead of copying it
(`SealedFile`).

Split from `readahead`, which reads and maps the input file; these write perfview's own files.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from typing import Any

from perfview.readahead import cache_root


class DiskMap:
    """`size` bytes in a file of their own on disk, not in memory, mapped read-only once
    written: what a load writes there (`write_at`, plain writes from a small buffer: no page
    of it is ever mapped while written) goes to the page cache, which the kernel writes out
    when it needs the memory, so a big trace's args (3 GB at 10 GB) never sit in the
    process's memory, and a slice's args are read from disk when it is shown. The file has no
    name (`O_TMPFILE`, else unlinked at once) and lives in the parsed-trace cache's folder, on
    disk where /tmp may be memory; it is gone once its map closes, unless the cache
    named it in an entry (`SealedFile.link_to`). The pages of the
    read-only map (`sealed`) can always be given back (`give_back_read`)."""

    def __init__(self, fd: int, size: int, linkable: bool = False) -> None:
        self.fd, self.size = fd, size
        self.linkable = linkable  # an O_TMPFILE file: a name can be given to it (`link_to`)

    @classmethod
    def make(cls, size: int, folder: str | None = None) -> DiskMap | None:
        """A DiskMap, or None where no file can be made there (the caller uses memory)."""
        if size <= 0 or not hasattr(mmap, "MADV_DONTNEED"):
            return None
        folder = folder or cache_root()
        fd = -1
        try:
            os.makedirs(folder, exist_ok=True)
            linkable = True
            try:
                fd = os.open(folder, os.O_TMPFILE | os.O_RDWR, 0o600)
            except (AttributeError, OSError):  # no O_TMPFILE here: a name, unlinked at once
                import tempfile

                fd, name = tempfile.mkstemp(prefix=".perfview-blob-", dir=folder)
                os.unlink(name)
                linkable = False
            # the blocks reserved now: a full disk refuses here (ENOSPC), and the caller
            # keeps the bytes in memory, rather than failing halfway through the writes
            os.posix_fallocate(fd, 0, size)
            return cls(fd, size, linkable)
        except (OSError, ValueError):
            if fd >= 0:
                os.close(fd)
            return None

    def write_at(self, data: Any, offset: int) -> None:
        """Write `data` (a buffer) at `offset`, all of it (raises OSError)."""
        view = memoryview(data).cast("B")
        while len(view):
            done = os.pwrite(self.fd, view, offset)
            view, offset = view[done:], offset + done

    def sealed(self) -> mmap.mmap:
        """The file mapped read-only. The descriptor is closed (the map keeps the file),
        except for a file that can be given a name: the map keeps it (`SealedFile`)."""
        try:
            if self.linkable:
                sealed = SealedFile(self.fd, self.size, access=mmap.ACCESS_READ)
                sealed.keep(self.fd)
                self.fd = -1
                return sealed
            return mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ)
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class SealedFile(mmap.mmap):
    """A sealed `DiskMap` whose file has no name yet (`O_TMPFILE`), its descriptor kept: the
    cache gives the file a name in its entry (`link_to`) instead of copying its bytes (a
    10 GB trace's args are 3 GB, written once, not twice). Nothing writes the file once
    sealed, so the entry and the map share its bytes safely. The descriptor is closed with
    the map, or when the map is collected."""

    _fd = -1

    def keep(self, fd: int) -> None:
        self._fd = fd

    def link_to(self, path: str | os.PathLike[str]) -> bool:
        """Give the file the name `path` (a new name, on the file's own file system); False
        where it cannot be (another file system, no /proc, the descriptor closed): the
        caller copies the bytes then."""
        if self._fd < 0:  # only an O_TMPFILE file (Linux) keeps its descriptor
            return False
        folder, name = os.path.split(os.fspath(path))
        try:
            into = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return False
        try:  # linkat(AT_SYMLINK_FOLLOW): os.link uses it only given a folder's descriptor
            os.link(f"/proc/self/fd/{self._fd}", name, dst_dir_fd=into, follow_symlinks=True)
        except OSError:
            return False
        finally:
            os.close(into)
        return True

    def close(self) -> None:
        self._release()
        super().close()

    def _release(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self._release()


__all__ = ["DiskMap", "SealedFile"]
