"""`perfview.qt.deferred`: work put off to a later turn runs after due timers, and `flush`
waits for it (what screenshots rely on)."""

from __future__ import annotations

from typing import Any

import shiboken6
from PySide6.QtCore import QObject

from perfview.qt import deferred


def test_flush_runs_deferred_work_and_deleted_contexts_cancel_theirs(qtbot: Any) -> None:
    ran: list[str] = []
    keep, gone = QObject(), QObject()
    deferred.later(keep, lambda: ran.append("kept"))
    deferred.later(gone, lambda: ran.append("gone"))
    assert deferred.pending() >= 2
    shiboken6.delete(gone)  # the view was closed before its turn came
    deferred.flush()
    assert ran == ["kept"]
    assert deferred.pending() == 0


def test_deferred_work_waits_for_a_turn_of_the_event_loop(qtbot: Any) -> None:
    ran: list[int] = []
    context = QObject()
    deferred.later(context, lambda: ran.append(1))
    assert ran == []  # not run synchronously
    qtbot.waitUntil(lambda: ran == [1])
