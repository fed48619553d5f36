"""When the window collects garbage: never while a load runs (`collector_paused`), and once
a closed tab is deleted, so that its memory returns then, its biggest buffer unmapped off
the GUI thread (`when_deleted`).

What holds a closed tab's bundle once its widgets are deleted are reference cycles among
their Python wrappers (pyqtgraph's items, bound methods kept in signal tables), which only a
full collection frees. After start-up's objects are frozen (`perfview.startup_gc`) the
next full collection may be far off: in a window that closed a 1 GB resnet50 tab and then
opened another 1 GB trace, none came in the next 5 s, and the closed tab's ~830 MB stayed
all the while. So once a closed tab is deleted, the window collects once, on the GUI
thread, between two events (where automatic collections run too).

Most of what that frees is the trace's args blob (654 MB of resnet50's ~830 MB), and
unmapping it is most of the collection's time (~55 ms). The blob is kept out of the
collection (`keep`) and dropped on a thread of its own afterwards: Python's mmap unmaps
without the GIL, so the GUI thread neither waits for it nor for the GIL meanwhile.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import threading
from collections.abc import Iterator

from PySide6.QtCore import QObject, QTimer

from perfview.core.model import Bundle
from perfview.loaders.trace import heap

RETRY_MS = 250  # how often a collection put off by a running load looks again

_PAUSED = 0
_PAUSE_LOCK = threading.Lock()
_WAS_ENABLED = True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a load and its analysis run.

    A load allocates millions of short-lived objects; each full collection then walks every
    live object while holding the GIL, a 100-200 ms freeze of the GUI thread at 1 GB. Loads
    make no reference cycles worth collecting, so collection waits until the last one ends.
    """
    global _PAUSED, _WAS_ENABLED
    with _PAUSE_LOCK:
        _PAUSED += 1
        if _PAUSED == 1:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSED -= 1
            if _PAUSED == 0 and _WAS_ENABLED:
                gc.enable()


def collector_is_paused() -> bool:
    """True while a load holds the collector off (`collector_paused`)."""
    return _PAUSED > 0


def big_buffers(bundle: Bundle) -> list[object]:
    """The buffers of `bundle` worth unmapping off the GUI thread: its args blob, when it is
    a memory map (a trace's parse or its cache entry); bytes are freed where they fall."""
    timeline = bundle.timeline
    if timeline is not None and isinstance(timeline.args.blob, mmap.mmap):
        return [timeline.args.blob]
    return []


def when_deleted(obj: QObject, keep: list[object]) -> None:
    """Once `obj` (a closed tab, `deleteLater`'d) is deleted, collect once and then drop
    `keep` on a thread: `keep` is not freed by the collection, whatever held it."""
    obj.destroyed.connect(lambda *_: QTimer.singleShot(0, lambda: collect(keep)))


def collect(keep: list[object]) -> None:
    """A full collection on the GUI thread, then on a short-lived thread: `keep` cleared (its
    last references go there, unmapping without the GIL) and malloc's free heap handed back
    (`heap.give_back`: the closed tab's arrays under malloc's mmap threshold were free but
    still resident, 0.4-0.7 GB after closing a freshly parsed 1 GB trace). Put off while a
    load runs: a full collection among its objects took 100-200 ms (`collector_paused`)."""
    if collector_is_paused():  # a load runs: its millions of young objects would make
        QTimer.singleShot(RETRY_MS, lambda: collect(keep))  # this collection a freeze
        return
    gc.collect()
    threading.Thread(target=_drop, args=(keep,), name="perfview-let-go", daemon=True).start()


def _drop(keep: list[object]) -> None:
    keep.clear()
    heap.give_back()


__all__ = ["big_buffers", "collect", "collector_is_paused", "collector_paused", "when_deleted"]
