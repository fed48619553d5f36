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


def test_one_piece_per_turn_in_order_with_the_event_loop_between(qtbot: Any) -> None:
    """Two views' pieces never run in one turn: work posted while the first runs (a paint,
    a tick) comes before the second, so their costs never add up to one stall."""
    from PySide6.QtCore import QTimer

    ran: list[str] = []
    context = QObject()

    def first() -> None:
        ran.append("first")
        QTimer.singleShot(0, lambda: ran.append("between"))  # posted: the next turn's work

    deferred.later(context, first)
    deferred.later(context, lambda: ran.append("second"))
    deferred.flush()
    assert ran == ["first", "between", "second"]


def test_in_turns_runs_each_step_on_its_own_turn(qtbot: Any) -> None:
    from PySide6.QtCore import QTimer

    ran: list[object] = []
    context = QObject()

    def first() -> None:
        ran.append(1)
        QTimer.singleShot(0, lambda: ran.append("between"))

    deferred.in_turns(context, first, lambda: ran.append(2))
    assert ran == []
    deferred.flush()
    assert ran == [1, "between", 2]


def test_built_in_turns_builds_the_rest_at_once_when_asked(qtbot: Any) -> None:
    class Widget(QObject, deferred.BuiltInTurns):
        pass

    ran: list[str] = []
    widget = Widget()
    widget.build_in_turns(
        [lambda: ran.append("a"), lambda: ran.append("b")], True, lambda: ran.append("done")
    )
    widget.ensure_built()  # a caller needs all of it now
    assert ran == ["a", "b", "done"]
    deferred.flush()
    assert ran == ["a", "b", "done"]  # the turns put off find nothing left to do
    now = Widget()
    now.build_in_turns([lambda: ran.append("c")], False)
    assert ran[-1] == "c"


def test_work_put_off_after_a_widgets_turns_waits_for_all_of_them(qtbot: Any) -> None:
    """A worker started through `later` after a view queued its turns (the Timeline, then
    the findings) starts only once the view is complete."""
    ran: list[str] = []
    context = QObject()
    deferred.in_turns(context, lambda: ran.append("a"), lambda: ran.append("b"))
    deferred.later(context, lambda: ran.append("worker"))
    deferred.flush()
    assert ran == ["a", "b", "worker"]
