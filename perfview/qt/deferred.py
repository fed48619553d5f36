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

_pending: dict[int, Callable[[], None]] = {}  # in the order they were put off
_next_id = 0
_armed = False


def later(context: QObject, fn: Callable[[], None]) -> None:
    """Run `fn` on a coming event-loop turn, after the timers already due; never when
    `context` is deleted first. One piece per turn, in the order they were put off: two
    views' pieces never add up to one stall (the window's timers and paints run between)."""
    global _next_id
    _next_id += 1
    key = _next_id
    _pending[key] = fn
    context.destroyed.connect(lambda *_: _pending.pop(key, None))
    _arm()


def _arm() -> None:
    global _armed
    if _pending and not _armed and QCoreApplication.instance() is not None:
        _armed = True
        QTimer.singleShot(1, _run_one)


def _run_one() -> None:
    global _armed
    _armed = False
    if _pending:
        fn = _pending.pop(next(iter(_pending)))
        try:
            fn()
        finally:
            _arm()


def in_turns(context: QObject, *steps: Callable[[], None]) -> None:
    """Run `steps` in order, each on its own coming event-loop turn (`later`: one piece per
    turn, so queued together they keep their place before work put off after them, such as
    a worker's start): a page built in pieces of a few ms each keeps the window's timers and
    painting going between them, which matters on a busy machine, where every ms of
    GUI-thread work stretches 3-5x."""
    for step in steps:
        later(context, step)


class BuiltInTurns:
    """A widget built in steps: `build_in_turns(steps, defer, done)` runs them now, or
    (`defer`) one per coming event-loop turn, then `done` on a turn of its own (it usually
    lets the widget paint: the paint then comes after a turn of the window's own, not right
    after the last step); `ensure_built` runs what is left at once, for a caller that needs
    the whole widget before then (a click, a document request, a test)."""

    _unbuilt: list[Callable[[], None]]

    def build_in_turns(
        self,
        steps: list[Callable[[], None]],
        defer: bool,
        done: Callable[[], None] | None = None,
    ) -> None:
        self._unbuilt = [*steps, done] if done is not None else list(steps)
        if not defer:
            self.ensure_built()
            return
        assert isinstance(self, QObject)
        in_turns(self, *(self._build_next for _ in self._unbuilt))

    def ensure_built(self) -> None:
        while self._unbuilt:
            self._build_next()

    def _build_next(self) -> None:
        if self._unbuilt:
            self._unbuilt.pop(0)()


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


__all__ = ["BuiltInTurns", "flush", "hold", "in_turns", "later", "pending"]
