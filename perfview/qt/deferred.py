"""Widget work a view puts off to a later event-loop turn, and a way to wait for all of it.

Opening a big trace builds its first page on the GUI thread; a view can split off its slowest
part (a chart) with `later`, so the window paints and runs its timers in between instead of
stalling for the sum. `QTimer.singleShot(0, ...)` would not do: Qt 6 turns it into a posted
event, which runs before any timer that is already due. Screenshots call `flush` before they
grab, so they never catch a page half built.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QObject, QTimer

_pending: dict[int, Callable[[], None]] = {}
_next_id = 0


def later(context: QObject, fn: Callable[[], None]) -> None:
    """Run `fn` on a coming event-loop turn, after the timers already due; never when
    `context` is deleted first."""
    global _next_id
    _next_id += 1
    key = _next_id

    def run() -> None:
        if _pending.pop(key, None) is not None:
            fn()

    _pending[key] = fn
    context.destroyed.connect(lambda *_: _pending.pop(key, None))
    QTimer.singleShot(1, context, run)


def pending() -> int:
    """How many deferred pieces of work have not run yet."""
    return len(_pending)


_held: set[int] = set()


def hold(context: QObject) -> Callable[[], None]:
    """Mark work a worker finishes for a drawn page (an Overview's findings): `flush` waits
    for it too, so a screenshot shows the complete page. Returns the call that releases it
    (also released when `context` is deleted). Not counted by `pending`: the page is drawn."""
    global _next_id
    _next_id += 1
    key = _next_id
    _held.add(key)
    context.destroyed.connect(lambda *_: _held.discard(key))
    return lambda: _held.discard(key)


def flush(timeout_ms: int = 5000) -> None:
    """Process events until every deferred and held piece of work is done (or `timeout_ms`
    passed)."""
    if QCoreApplication.instance() is None:
        return
    loop = QEventLoop()
    deadline = QDeadlineTimer(timeout_ms)
    while (_pending or _held) and not deadline.hasExpired():
        loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)


__all__ = ["flush", "hold", "later", "pending"]
