"""Let glibc's malloc reuse freed big arrays while `build` runs, instead of mapping fresh pages.

glibc serves each allocation over its mmap threshold (at most 32 MB, however it adapts) from
a fresh map and unmaps it when freed, so every 5M-row int64 temporary (40 MB) of a 1 GB
trace's build is first-touched page by page again: ~1 s of system time in the 1 GB
cpu-stack replica's build, more than its arithmetic. With the threshold raised for the
duration, those arrays come from the heap and reuse what the previous step freed (that
build: system time 1.02 -> 0.68 s, wall 1.8 -> 1.4 s, peak RSS no higher). Afterwards the
free heap is handed back (`malloc_trim`) and the thresholds are set to what glibc's own
adaptation reaches after a big load (32 MB, trim at 64 MB), so a long-lived window keeps
returning memory as before. Anything but glibc: nothing changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import platform
import threading
from collections.abc import Callable, Iterator
from typing import Any

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
HELD = 1 << 30  # bigger than any one column of a trace that fits in memory
TRIM_HELD = (1 << 31) - 1  # the largest C int
AFTER = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems
TRIM_AFTER = 2 * AFTER  # glibc keeps the trim threshold at twice the adapted mmap threshold
MIN_EVENTS = 1_000_000  # below this the temporaries are small and the maps few

_lock = threading.Lock()
_depth = 0
_keep = False  # set by a one-shot command: the thresholds stay raised after a block


def keep_after_blocks() -> None:
    """For a one-shot command (`perfview summary`): once a block has raised the thresholds,
    leave them raised and skip the trim, so what comes after the build (the summary table)
    reuses the freed heap too; the process ends soon and returns everything then."""
    global _keep
    _keep = True


def _libc() -> tuple[Callable[[int, int], int], Callable[[int], int]] | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc: Any = ctypes.CDLL(None)
        return libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def reuse_freed(n_events: int) -> Iterator[None]:
    """Within the block, big allocations come from malloc's heap (see the module doc), when
    `n_events` is big enough for it to matter. Nested and concurrent blocks are counted:
    the thresholds come back when the last one ends."""
    global _depth
    fns = _libc() if n_events >= MIN_EVENTS else None
    if fns is None:
        yield
        return
    mallopt, malloc_trim = fns
    with _lock:
        _depth += 1
        if _depth == 1:
            mallopt(M_MMAP_THRESHOLD, HELD)
            mallopt(M_TRIM_THRESHOLD, TRIM_HELD)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and not _keep:
                mallopt(M_MMAP_THRESHOLD, AFTER)
                mallopt(M_TRIM_THRESHOLD, TRIM_AFTER)
                malloc_trim(0)


def trim_holes() -> None:
    """Hand the free pages inside malloc's heap back now, even within `reuse_freed`. At a
    stage boundary of a big build the stage before has freed its temporaries, and what the
    next stage allocates does not fill every hole they left: those pages stay resident,
    counted in the load's peak (1 GB NCCL trace: 1,217 -> 1,166 MB peak with the build
    trimming at its stage boundaries, no more system time: the holes that are reused
    fault their pages in again, a few per MB). Cheap: one walk of malloc's free lists."""
    fns = _libc()
    if fns is not None:
        fns[1](0)


def give_back() -> None:
    """Hand malloc's free heap back to the system, unless a build is reusing it. After a tab
    is closed its arrays under the mmap threshold (32 MB) are free but stay resident in
    malloc's arenas: 0.4-0.85 GB after closing a 1 GB trace here. `malloc_trim` runs without
    the GIL (ctypes), so a worker thread can call it while the window goes on."""
    with _lock:
        if _depth == 0:
            trim_holes()


__all__ = ["give_back", "keep_after_blocks", "reuse_freed", "trim_holes"]
