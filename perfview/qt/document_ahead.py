"""The pages a trace is opened for (the Timeline), laid out on their own thread as soon as the
load has built the bundle, beside the rest of the load's work.

The Timeline's layout is the biggest step between Open and a drawn Timeline (0.5-1 s of CPU
at 1 GB). It used to start only once the tab was built and drawn, after the load task had
prepared the first page (the Overview, 0.2-0.7 s), so the two ran one after the other on a
2-core machine whose second core sat idle. Now the load task starts it (`start`) before it
prepares the first page, the tab finds it running (`Pending`) and waits for it instead of
laying it out again. Pure threading: no Qt here, so the load task (a worker) can call it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from perfview.core.model import Bundle
from perfview.loaders.cache_writes import NOW, WriteGate

AHEAD = ("timeline",)  # the view a trace is opened for: prepared before anyone clicks it


def page_data(
    name: str, bundle: Bundle, tables: dict[str, pd.DataFrame], store: WriteGate | None
) -> Any:
    """`pages.prepare`, except that a big trace's Timeline comes from its cached layout
    (`loaders.layout_cache`: ~20-50 ms at 1 GB instead of 0.3-1 s of CPU); with a `store`
    gate, a layout computed here is cached in the background, once the gate opens (the tab
    opens it when the Timeline is drawn), for the next open."""
    from perfview.core import pages as page_registry

    if name == "timeline" and bundle.format == "trace" and bundle.timeline is not None:
        from perfview.loaders import layout_cache

        if layout_cache.cacheable(bundle):
            if store is not None:
                return layout_cache.timeline_data(bundle, store)
            cached = layout_cache.get(bundle.path, bundle.timeline)
            if cached is not None:
                return cached
    return page_registry.prepare(name, bundle, tables)


def completed(bundle: Bundle, data: Any) -> Any:
    """`data.with_findings(timeline)`, for a page drawn before its findings were found (the
    Overview); a big trace's come from the page cache, or are stored there once found, so
    the next open shows them at once without analysing the trace on a worker again."""
    from perfview.core.pages.data import OverviewData

    if isinstance(data, OverviewData):
        from perfview.loaders import page_cache

        return page_cache.with_findings(bundle, data)
    return data.with_findings(bundle.timeline)


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


def wanted(bundle: Bundle, skip: Sequence[str] = ()) -> list[str]:
    """The AHEAD pages `bundle`'s tab shows and has no data for yet (`skip`: prepared already)."""
    from perfview.core import pages as page_registry

    names = {tab.name for tab in page_registry.tabs_for(bundle)}
    return [
        n for n in AHEAD if n in names and n not in skip and page_registry.needs_data(n, bundle)
    ]


def start(bundle: Bundle, skip: Sequence[str] = (), writes: WriteGate = NOW) -> dict[str, Pending]:
    """Lay out `bundle`'s AHEAD pages (`wanted`) on a thread each, now; their data is stored
    in the layout cache as when the tab prepares them, once `writes` opens. Never fails the
    load: a page it cannot start is left to the tab (which shows any error in place)."""
    pending: dict[str, Pending] = {}
    try:
        names = wanted(bundle, skip)
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


@dataclass(frozen=True)
class SummaryTable:
    """A summary table computed in the background for a table page."""

    name: str
    frame: pd.DataFrame


def with_tree(bundle: Bundle, then: Any, tree: bool = True) -> Any:
    """On a worker: build the bundle's call tree first when `tree`, then return `then()`."""
    if tree:
        from perfview.core.analysis import bundle_tree

        bundle_tree.tree_for(bundle)
    return then()


def summary_table(bundle: Bundle, table: str) -> SummaryTable:
    """On a worker: table page `table`'s summary of `bundle`."""
    from perfview.core.pages import summary

    return SummaryTable(table, summary.summarize(bundle, table))


__all__ = [
    "AHEAD",
    "Pending",
    "SummaryTable",
    "completed",
    "heap_kept",
    "page_data",
    "start",
    "summary_table",
    "wanted",
    "with_tree",
]
