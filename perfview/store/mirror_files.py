"""The remote mirror's files as the cache sees them: what `store.remote` keeps, one file and
its stamp at a time, for the cache's size bound (`cache_bound.evict`).

Each mirrored file has a hidden stamp beside it (`.NAME.perfview-remote`: its URL, version
and size); a file without one is not the mirror's (a download still arriving, under a
temporary name, or anything else in the folder) and is never counted nor deleted. The
stamp's modification time is the file's last use: `touch` on every open that finds it
current. Standard library only, so both the mirror and the cache import it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

STAMP_SUFFIX = ".perfview-remote"
REMOTE = "remote"  # the mirror's folder in the cache
TOUCH_S = 60.0  # a use marked once a minute at most: a followed folder is listed every 5 s


def stamp_of(local: Path) -> Path:
    return local.with_name(f".{local.name}{STAMP_SUFFIX}")


def mirrored(top: Path) -> set[Path]:
    """The files of a mirror perfview wrote under `top` (each has its stamp beside it)."""
    if not top.is_dir():
        return set()
    return {
        stamp.with_name(stamp.name[1 : -len(STAMP_SUFFIX)])
        for stamp in top.rglob(f".*{STAMP_SUFFIX}")
    }


def touch(local: Path, *, now: bool = False) -> None:
    """Mark a mirrored file used now (the cache evicts the least recently used first), unless
    it was in the last TOUCH_S seconds (each touch is a change a folder watch sees) or `now`.
    The time is the clock's, to the ns: a file's own times tick coarsely (4 ms), and two
    files used within one tick would tie."""
    stamp = stamp_of(local)
    with contextlib.suppress(OSError):
        if now or time.time() - stamp.stat().st_mtime > TOUCH_S:
            at = time.time_ns()
            os.utime(stamp, ns=(at, at))


def entries(cache: Path) -> list[tuple[float, int, Path]]:
    """(last used, bytes, file) of every mirrored file in the cache folder `cache`."""
    found: list[tuple[float, int, Path]] = []
    for local in mirrored(cache / REMOTE):
        stamp = stamp_of(local)
        try:
            used = stamp.stat().st_mtime
            size = local.stat().st_size + stamp.stat().st_size
        except OSError:
            continue
        found.append((used, size, local))
    return found


def drop(local: Path) -> None:
    """Delete a mirrored file and its stamp (a reader holding it open keeps its bytes)."""
    for path in (local, stamp_of(local)):
        with contextlib.suppress(OSError):
            path.unlink()


__all__ = ["REMOTE", "STAMP_SUFFIX", "drop", "entries", "mirrored", "stamp_of", "touch"]
