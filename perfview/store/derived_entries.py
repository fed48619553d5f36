"""Entries derived from a trace's tables (the Timeline's layout, the Overview's data), stored
beside its parsed columns' entry, so a reopened big trace skips computing them again.

`DerivedCache` is the one lookup both use: the entry folder is named after the columns' key
plus a digest of the code that derived it; a read that fails for any reason (damaged, stale,
made from other tables) drops the entry, and the page computes it again; a write that fails
(a full disk, a file that is gone) leaves no entry. Writes run in the background once
their gate opens (`write_gates`), so the page is drawn first.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from perfview.core.model import Timeline
from perfview.store import artifacts, cache_bound, write_gates

log = logging.getLogger(__name__)
T = TypeVar("T")


class DerivedCache(Generic[T]):
    """get / put / put_later for one kind of derived entry.

    `entry_for(path)`: the entry's folder (raises OSError when `path` is gone); `read(entry,
    timeline)`: the data, raising on anything odd; `write(entry, data, timeline)`: store it."""

    def __init__(
        self,
        what: str,
        entry_for: Callable[[Path], Path],
        read: Callable[[Path, Timeline], T],
        write: Callable[[Path, T, Timeline], None],
    ) -> None:
        self.what = what
        self.entry_for = entry_for
        self.read = read
        self.write = write

    def get(self, path: Path, timeline: Timeline) -> T | None:
        """`path`'s entry when it was made from `timeline`'s tables by this code, else None
        (absent, stale or damaged: then deleted)."""
        try:
            entry = self.entry_for(path)
        except OSError:
            return None
        if not entry.is_dir():
            return None
        try:
            data = self.read(entry, timeline)
        except Exception as exc:  # damaged, stale or odd: dropped, computed again, never fatal
            log.info("%s %s dropped: %s", self.what, entry, exc)
            shutil.rmtree(entry, ignore_errors=True)
            return None
        with contextlib.suppress(OSError):
            (entry / artifacts.MANIFEST).touch()  # most recently used
        return data

    def put(self, path: Path, data: T, timeline: Timeline) -> Path | None:
        """Store `data` (derived from `timeline`, loaded from `path`); None if not stored."""
        try:
            entry = self.entry_for(path)
            self.write(entry, data, timeline)
        except (OSError, TypeError, ValueError, RuntimeError):  # disk full, gone file: no entry
            return None
        cache_bound.evict(keep=entry)
        return entry

    def put_later(
        self, path: Path, data: T, timeline: Timeline, gate: write_gates.WriteGate
    ) -> None:
        """`put` on a background thread once `gate` opens; `write_gates.flush` waits for it."""
        name = f"perfview-{self.what.replace(' ', '-')}-put"
        write_gates.start(name, self.put, path, data, timeline, gate=gate)

    def get_or_compute(
        self, path: Path, timeline: Timeline, compute: Callable[[], T], gate: write_gates.WriteGate
    ) -> T:
        """The entry's data, or `compute()`'s, stored in the background."""
        data = self.get(path, timeline)
        if data is None:
            data = compute()
            self.put_later(path, data, timeline, gate)
        return data


__all__ = ["DerivedCache"]
