"""Background work a document tab holds back until its window is quiet.

Two kinds wait here: work that starts (an Overview's findings: a second of numpy and pandas
at 1 GB, holding the GIL in stretches, which started as the user clicked the Timeline
doubled its first paint, 165 ms gaps; the pages prepared ahead of a click, one at a time)
and the cache writes of the tab's load and pages
(`write_gates.WriteGate`: written beside the tab's first pages, they took the GUI
thread's share of a busy machine's cores). The tab calls `arm()` once its AHEAD pages are
built; the window is then quiet when QUIET_MS have passed with no page switched to
(`touch`), no put-off piece left (`deferred.pending`) and no clicked page's data being
prepared and no work started here still running (`busy`): the gates open, the first work
starts, and the next waits for the next quiet moment.
When the tab goes first, the gates open (no write waits for a tab that is not there) and the
work is dropped: a task never started holds the tab through its result slots, which Qt keeps
out of the garbage collector's sight, and kept a closed tab's bundle in memory for good.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

from perfview.qt import deferred
from perfview.store.write_gates import WriteGate

QUIET_MS = 300  # how long the window must be quiet before the held-back work runs


class QuietWork:
    """The held-back work of one tab (`owner`). It keeps no reference to the tab, only to
    its timer, a child of the tab: a reference would make the tab part of a cycle, freed by
    the garbage collector on whichever thread collects, and a widget destroyed on a worker
    thread deadlocked the window (seen in the suite)."""

    def __init__(self, owner: QObject, busy: Callable[[], bool] | None = None) -> None:
        # `busy()`: the owner is preparing a page someone waits for (a clicked page's data in a
        # worker): not quiet either, as work started now shares the GIL with that worker. A
        # bound method of the owner, held weakly (as the owner itself is not held)
        self._busy = None if busy is None else weakref.WeakMethod(busy)  # type: ignore[arg-type]
        self.starts: list[Callable[[], Any]] = []  # run once the window is quiet
        self._gates: list[WriteGate] = []  # opened then, or when the tab (and timer) goes
        self._timer = QTimer(owner)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QUIET_MS)
        self._timer.timeout.connect(self._run)
        self._timer.destroyed.connect(self._gone)

    def add(self, start: Callable[[], Any]) -> None:
        self.starts.append(start)

    def add_first(self, start: Callable[[], Any]) -> None:
        """Run `start` before the work already waiting: work for the page on screen."""
        self.starts.insert(0, start)

    def hold(self, gate: WriteGate) -> WriteGate:
        """Keep `gate` closed until the window is quiet (or the tab goes); returns it."""
        if not gate.is_open():
            self._gates.append(gate)
        return gate

    def waiting(self) -> bool:
        return bool(self.starts or self._gates)

    def arm(self) -> None:
        """Run what waits once the window has been quiet for QUIET_MS."""
        if self.waiting():
            self._timer.start()

    def touch(self) -> None:
        """Something was shown now: it is built and painted first."""
        if self._timer.isActive():
            self._timer.start()

    def _run(self) -> None:
        busy = self._busy() if self._busy is not None else None
        if deferred.pending() or (busy is not None and busy()):  # a page is still coming
            self._timer.start()
            return
        gates, self._gates = self._gates, []
        for gate in gates:
            gate.open()
        if self.starts:  # one at a time: the next once the window is quiet again (`busy`)
            self.starts.pop(0)()
        if self.starts:
            self._timer.start()

    def _gone(self, *_: object) -> None:
        """The tab (and its timer) was destroyed: open the gates, drop the work."""
        self.starts = []
        gates, self._gates = self._gates, []
        for gate in gates:
            gate.open()


__all__ = ["QUIET_MS", "QuietWork"]
