"""A document's other pages prepared ahead of a click, one at a time, once the window is quiet.

A page's data (the Kernels page's launch rows, the Operators page's tables, the critical
path) took 1-3 s of a worker after the click on a 100 MB trace (issue 37:
`scripts/bench/bench_page_ready.py`). Once the tab's first pages are built and the window
has been quiet (`QuietWork`), the pages still lacking data are prepared in the navigation's
order, one worker at a time (two would share the GIL with the GUI thread), each once the
window is quiet again (no page clicked meanwhile still preparing or being built), so a click
usually finds its data in hand and only builds widgets. A page clicked while its data is
being prepared waits for that task, not a second one. Only traces, and big ones are left
alone (`prefetch_allowed`): preparing every page of a 1 GB trace costs seconds of CPU and
gigabytes nobody asked for.

It holds the tab's methods weakly: a strong reference would put the tab in a cycle, freed by
the garbage collector on whichever thread collects (see `quiet_work.py`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection
from typing import Any

from perfview.core.model import Bundle
from perfview.qt.tasks import Task

# Documents with more events than this are not prepared ahead (a 100 MB trace: ~240,000).
PREFETCH_MAX_EVENTS = 1_000_000


def prefetch_allowed(bundle: Bundle) -> bool:
    """True for traces small enough to prepare every page of ahead of the clicks (the pages
    whose data costs seconds are a trace's; a capture's size says nothing of its pages')."""
    timeline = bundle.timeline
    return timeline is not None and len(timeline.events) <= PREFETCH_MAX_EVENTS


class PagePrefetch:
    """`next_name(tried)`: the page to prepare next, not one of `tried` (None: done);
    `make_task(name)`: its worker task, not started; `done(name, data)`: its data (None when
    its task failed: its click shows why), on the GUI thread; `again(start)`: calls `start`
    when the next page may be prepared."""

    def __init__(
        self,
        next_name: Callable[[Collection[str]], str | None],
        make_task: Callable[[str], Task],
        done: Callable[[str, Any], None],
        again: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self._next = weakref.WeakMethod(next_name)  # type: ignore[arg-type]
        # how the next page's start waits once one is done (the tab's quiet work: a page
        # clicked meanwhile is prepared and built first); None: at once
        self._again = None if again is None else weakref.WeakMethod(again)  # type: ignore[arg-type]
        self._make = weakref.WeakMethod(make_task)  # type: ignore[arg-type]
        self._done = weakref.WeakMethod(done)  # type: ignore[arg-type]
        self._task: Task | None = None
        self._name = ""
        self._tried: set[str] = set()

    def busy(self) -> bool:
        """True while a page is being prepared ahead."""
        return self._task is not None

    def running(self, name: str) -> Task | None:
        """The task preparing page `name` now, if any."""
        return self._task if self._task is not None and self._name == name else None

    def start(self) -> None:
        """Prepare the next page lacking data (and, when it is done, the one after)."""
        if self._task is not None:
            return
        next_name, make = self._next(), self._make()
        if next_name is None or make is None:
            return  # the tab is gone
        name = next_name(self._tried)
        if name is None:
            return
        self._tried.add(name)  # never twice: a failed page is left to its click
        task = make(name)
        self._task, self._name = task, name
        task.finished.connect(lambda data, n=name: self._finished(n, data))
        task.failed.connect(lambda _message, n=name: self._finished(n, None, failed=True))
        task.start()

    def _finished(self, name: str, data: Any, *, failed: bool = False) -> None:
        self._task, self._name = None, ""
        done = self._done()
        if done is None:
            return
        done(name, None if failed else data)
        again = self._again() if self._again is not None else None
        if again is not None:
            again(self.start)
        elif self._again is None:
            self.start()


__all__ = ["PREFETCH_MAX_EVENTS", "PagePrefetch", "prefetch_allowed"]
