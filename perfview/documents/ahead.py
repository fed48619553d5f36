"""The pages a document is opened for (`Page.ahead`: the Timeline), laid out on their own
thread as soon as the open has built the bundle, beside the rest of the open's work.

The Timeline's layout is the biggest step between Open and a drawn Timeline (0.5-1 s of CPU
at 1 GB). Started only once the tab was built and drawn, after the first page (the Overview,
0.2-0.7 s), the two ran one after the other on a 2-core machine whose second core sat idle.
The open starts it (`start`) before it prepares the first page; the tab finds it running
(`Pending`) and waits for it instead of laying it out again. Plain threads: no Qt here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from perfview.core.model import Bundle
from perfview.documents import plan
from perfview.documents.prepare import page_data
from perfview.store.write_gates import NOW, WriteGate


@dataclass(frozen=True)
class Pending:
    """Page data a thread is computing (`start`): the tab waits for it (on a worker) instead
    of computing it a second time."""

    name: str
    future: Future[Any]

    def ready(self) -> bool:
        """True once the data is there (not an error: that is shown where the page is)."""
        return self.future.done() and self.future.exception() is None

    def result(self) -> Any:
        """The page's data (blocks until it is laid out); re-raises the thread's error."""
        return self.future.result()


def start(bundle: Bundle, skip: Sequence[str] = (), writes: WriteGate = NOW) -> dict[str, Pending]:
    """Lay out `bundle`'s ahead pages (`plan.ahead_pages`) on a thread each, now; their data
    is stored as when the tab prepares them, once `writes` opens. Never fails the open: a page
    it cannot start is left to the tab (which shows any error in place)."""
    pending: dict[str, Pending] = {}
    try:
        names = plan.ahead_pages(bundle, skip)
    except Exception:
        return pending
    for name in names:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        thread = threading.Thread(
            target=_run,
            args=(future, name, bundle, writes),
            name=f"perfview-ahead-{name}",
            daemon=True,
        )
        thread.start()
        pending[name] = Pending(name, future)
    return pending


def heap_kept(bundle: Bundle) -> AbstractContextManager[None]:
    """A block in which malloc keeps freed big arrays for the next (`trace.heap`), for work
    derived from a big trace on a worker thread: glibc otherwise maps and faults every 40 MB
    temporary afresh in a thread's arena (the 1 GB cpu-stack Overview: 163k page faults and
    0.3 s of system time; 50k and 0.1 s inside such a block). Nothing for small bundles."""
    from perfview.loaders.trace import heap

    timeline = bundle.timeline
    return heap.reuse_freed(len(timeline.events) if timeline is not None else 0)


def _run(future: Future[Any], name: str, bundle: Bundle, writes: WriteGate) -> None:
    try:
        with heap_kept(bundle):
            future.set_result(page_data(name, bundle, {}, writes))
    except BaseException as exc:  # handed to whoever waits (the tab shows it in place)
        future.set_exception(exc)


__all__ = ["Pending", "heap_kept", "start"]
