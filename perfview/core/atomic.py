"""Atomic file writes: a temp file in the same folder, fsync, then `os.replace`.

Whatever perfview writes (exports, recorded profiles) either appears complete under its final
name or not at all: a crash, a full disk or a kill midway leaves the previous file (or no file)
in place, never half of a new one that a later open would report as corrupt. The temp file must
be in the destination's folder, because `os.replace` is atomic only within one file system.

Two shapes:
    with atomic_write(path, "w") as fh: ...      we produce the bytes ourselves
    with atomic_path(path) as tmp: lib.dump(tmp)  a library insists on writing to a path
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def temp_sibling(path: Path) -> Path:
    """A new, unique, hidden name next to `path` (created empty, so no one else takes it).

    The name ends with `path`'s own name, so libraries that choose a format by suffix (torch
    gzips an export whose name ends in `.gz`) write the same bytes they would write to `path`.
    The mode is the usual 0644 (mkstemp makes 0600), or that of the file being replaced.
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=".tmp-", suffix=f"-{path.name}", dir=path.parent)
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.fchmod(fd, mode)
    except (OSError, AttributeError):
        pass  # Windows has no fchmod; the default mode is fine there
    finally:
        os.close(fd)
    return Path(name)


def fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def publish(tmp: Path, path: Path) -> None:
    """fsync `tmp`, then atomically rename it to `path` (replacing any existing file)."""
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(Path(path).parent)


@contextlib.contextmanager
def atomic_path(path: Path | str, *, keep_partial: bool = False) -> Iterator[Path]:
    """Yield a temp path next to `path`; when the block ends, publish it as `path`.

    On an exception the temp file is removed (the exception propagates), unless
    `keep_partial`: then whatever was written is published anyway, which suits recorders that
    must keep the profile of a script that failed. An empty or missing temp file is never
    published, so a write that produced nothing does not replace an existing file.
    """
    target = Path(path)
    tmp = temp_sibling(target)
    try:
        yield tmp
    except BaseException:
        if keep_partial and _non_empty(tmp):
            publish(tmp, target)
        else:
            tmp.unlink(missing_ok=True)
        raise
    if _non_empty(tmp):
        publish(tmp, target)
    else:
        tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_write(
    path: Path | str, mode: str = "wb", encoding: str | None = None, **kwargs: Any
) -> Iterator[IO[Any]]:
    """`open(path, mode)` that only replaces `path` once the block succeeded."""
    if "w" not in mode:
        raise ValueError("atomic_write only writes ('w' modes)")
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    target = Path(path)
    tmp = temp_sibling(target)
    try:
        with open(tmp, mode, encoding=encoding, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: Path | str, data: bytes) -> None:
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def write_text(path: Path | str, text: str, encoding: str = "utf-8") -> None:
    with atomic_write(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def _non_empty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


__all__ = [
    "atomic_path",
    "atomic_write",
    "fsync_dir",
    "publish",
    "temp_sibling",
    "write_bytes",
    "write_text",
]
