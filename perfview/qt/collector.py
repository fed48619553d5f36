"""Python's cyclic garbage collector held off while a load runs.

A load allocates millions of short-lived objects; each full collection then walks every live
object while holding the GIL, a 100-200 ms freeze of the GUI thread at 1 GB. Loads make no
reference cycles worth collecting, so collection waits until the last one ends.

(A collector run only on the GUI thread, from a timer as pyqtgraph's `GarbageCollector`
does, was tried: collections at its ticks crashed the Qt tests, in 2 to 4 of 6 runs of the
compare tests, so it is not used.)
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_paused = 0  # loads running now
_enable_after_pause = False  # automatic collection was on when the first load paused it


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No automatic collection while the block runs (on any thread; loads nest)."""
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


__all__ = ["paused"]
