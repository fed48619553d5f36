"""Follow a remote log directory while the training writes to it: list it every few seconds.

Object stores send no change notices, so a thread of its own (never the window's GUI thread)
lists the folder every `interval_s` seconds and fetches into the local mirror the trace files
that are new or changed and have stopped changing: the same size and version on two
listings in a row (`remote.mirror_settled`). From there on the mirror is a local folder that
changed, and the window's live folder watch (`qt/views/logdir_watch.py`) reads it as it reads
any live folder: only the new files, each once whole (its JSON closes, its gzip stream ends).
A failed listing (the network, credentials expiring) is tried again at the next tick.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from perfview.core.model.errors import LoadError
from perfview.store import remote

FOLLOW_S = 5.0  # seconds between two listings of a followed folder, unless ENV says
ENV = "PERFVIEW_REMOTE_FOLLOW_S"


def interval() -> float:
    """Seconds between two listings: `PERFVIEW_REMOTE_FOLLOW_S` (at least 0.01), else
    FOLLOW_S (a listing is one request per 1,000 keys: cheap, but not free)."""
    try:
        return max(float(os.environ.get(ENV, FOLLOW_S)), 0.01)
    except ValueError:
        return FOLLOW_S


class Follower:
    """Lists `url` every `interval_s` seconds (`interval()` when None) on a thread of its
    own; `on_fetched(files)` is called there with the files a listing fetched into the
    mirror (none: not called)."""

    def __init__(
        self, url: str, on_fetched: Callable[[list[Path]], object], interval_s: float | None = None
    ) -> None:
        self.url = url
        self.on_fetched = on_fetched
        self.interval_s = interval() if interval_s is None else interval_s
        self.listings = 0  # how many listings were taken (and compared)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="perfview-follow", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the listing under way (the thread ends on its own)."""
        self._stop.set()

    def _run(self) -> None:
        settled: remote.Settled = {}
        while not self._stop.is_set():
            try:
                settled, fetched = remote.mirror_settled(self.url, settled)
            except (LoadError, OSError):
                fetched = []  # tried again at the next tick
            self.listings += 1
            if fetched and not self._stop.is_set():
                with contextlib.suppress(RuntimeError):  # its receiver was deleted meanwhile
                    self.on_fetched(fetched)
            self._stop.wait(self.interval_s)


__all__ = ["ENV", "FOLLOW_S", "Follower", "interval"]
