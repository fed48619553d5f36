"""Python's cyclic garbage collector, run on the GUI thread between its events.

Automatic collection runs on whichever thread allocates past a threshold, and frees each cycle
it finds right there. A cycle that holds a live QObject then destroys it on that thread,
while Qt allows it only on the thread the object lives in: one suite run deadlocked so, a
worker's collection in a QObject destructor waiting for Qt's lock, the GUI thread holding it
and waiting for the GIL. pyqtgraph's `util.garbage_collector` answers the same problem the
same way (automatic collection off, a GUI timer collecting by the usual thresholds); this
one also

* pauses while a load runs (`paused`): a load allocates millions of short-lived objects, and
  each full collection would walk every live one with the GIL held, a 100-200 ms freeze of
  the GUI thread at 1 GB; loads make no cycles worth collecting;
* collects fully soon after a tab closed (`collect_soon`): the closed tab's widget wrappers
  keep its Document in cycles, and a bundle of a gigabyte waited for the next full
  collection, which a quiet window may not reach for hours (one takes 10-25 ms here with a
  1 GB trace open: the start-up's objects are frozen, `startup_gc`); malloc's free heap is
  then handed back to the system on a worker (`heap.give_back`).

Without `install` (the CLI, a bare test) automatic collection stays on; `paused` still
holds it off during a load.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

from PySide6.QtCore import QCoreApplication, QTimer

from perfview.loaders.trace import heap

# How often the thresholds are looked at. pyqtgraph waits 1 s; but the young generation's
# collection walks every object made since the last one (45 ms per million here), on the GUI
# thread, and a worker running Python can make a million or more in a second.
TICK_MS = 250

_LOCK = threading.Lock()
_paused = 0  # loads running now
_enable_after_pause = False  # automatic collection was on when the first load paused it
_timer: QTimer | None = None
_full_wanted = False


def install() -> None:
    """Collect on the GUI thread only, from now on (once; needs the QApplication)."""
    global _timer, _enable_after_pause
    app = QCoreApplication.instance()
    if _timer is not None or app is None:
        return
    with _LOCK:
        gc.disable()
        _enable_after_pause = False
    _timer = QTimer(app)
    _timer.timeout.connect(_tick)
    _timer.start(TICK_MS)


def uninstall() -> None:
    """Back to automatic collection (tests that installed it)."""
    global _timer, _enable_after_pause
    if _timer is None:
        return
    _timer.stop()
    _timer.deleteLater()
    _timer = None
    gc.collect()  # on this (the GUI) thread, what the timer had not collected yet
    with _LOCK:
        if _paused:
            _enable_after_pause = True
        else:
            gc.enable()


def installed() -> bool:
    return _timer is not None


def collect_soon() -> None:
    """A full collection on the next tick (after a tab was closed and deleted)."""
    global _full_wanted
    _full_wanted = True


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No collection while the block runs (on any thread; loads nest)."""
    global _paused, _enable_after_pause
    with _LOCK:
        _paused += 1
        if _paused == 1 and gc.isenabled():
            _enable_after_pause = True
            gc.disable()
    try:
        yield
    finally:
        with _LOCK:
            _paused -= 1
            if _paused == 0 and _enable_after_pause:
                _enable_after_pause = False
                gc.enable()


def _tick() -> None:
    """The collection CPython would have made by now: the oldest generation whose count is
    past its threshold (read each time: `startup_gc` raises them while the window starts)."""
    global _full_wanted
    if _paused:
        return
    if _full_wanted:
        _full_wanted = False
        gc.collect()
        threading.Thread(target=heap.give_back, name="perfview-give-back", daemon=True).start()
        return
    counts, thresholds = gc.get_count(), gc.get_threshold()
    generation = -1
    for gen in range(3):
        if counts[gen] <= thresholds[gen]:
            break
        generation = gen
    if generation >= 0:
        gc.collect(generation)


__all__ = ["TICK_MS", "collect_soon", "install", "installed", "paused", "uninstall"]
