"""The temp folders a writer of `artifacts` fills before it publishes them, and their sweep.

A writer fills a temp folder next to its destination, then renames it into place. While the
writer lives it holds a `flock` on the folder (`locked_temp`), so another process can tell a
live writer's folder from one left by a writer that crashed: `sweep` removes only the latter
(or, where there is no flock, folders older than STALE_S).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: temp folders are swept by age
    fcntl = None  # type: ignore[assignment]

TEMP_PREFIX = ".tmp-"
STALE_S = 3600.0  # temp folders whose writer cannot be asked (no flock) are swept after this


@contextlib.contextmanager
def locked_temp(parent: Path) -> Iterator[Path]:
    """A new temp folder in `parent`, flock'ed while the block runs (its writer is alive)."""
    tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent))
    fd = -1
    try:
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fd = os.open(tmp, os.O_RDONLY)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield tmp
    finally:
        if fd >= 0:
            os.close(fd)
        shutil.rmtree(tmp, ignore_errors=True)  # gone already when it was published


def sweep(parent: Path, *, max_age_s: float = STALE_S) -> int:
    """Remove temp folders in `parent` left by writers that died; return how many.

    A live writer holds a flock on its temp folder, so it is left alone; without flock
    (Windows) only folders older than `max_age_s` go."""
    removed = 0
    now = time.time()
    for entry in parent.iterdir() if parent.is_dir() else []:
        if not entry.name.startswith(TEMP_PREFIX):
            continue
        try:
            dead = _writer_gone(entry) if fcntl is not None else None
            if dead is None:
                dead = now - entry.stat().st_mtime > max_age_s
        except OSError:
            continue
        if dead:
            shutil.rmtree(entry, ignore_errors=True)
            removed += not entry.exists()
    return removed


def _writer_gone(entry: Path) -> bool | None:
    """True when no live process holds the temp folder's lock (None: cannot tell)."""
    assert fcntl is not None
    try:
        fd = os.open(entry, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    finally:
        os.close(fd)  # closing releases the lock we may have taken
    return True


__all__ = ["STALE_S", "TEMP_PREFIX", "locked_temp", "sweep"]
