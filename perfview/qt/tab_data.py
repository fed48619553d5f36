"""What a document tab's pages are drawn from: which data each page lacks, and getting it.

Why its own object: a page is built from data (a layout, tables, findings) that is either in
hand (prepared by the load, `documents.plan`), being laid out by the load's thread
(`documents.ahead.Pending`), or still to compute: here when a caller needs the widget now, or
in a worker task otherwise, with the summary table and the call tree it reads. That
bookkeeping (`data`, `tables`, `pending`) and the tasks computing what is missing hold no
widget; `DocumentTab` decides WHEN to prepare a page (a click, ahead, prefetch, the quiet
window) and builds the widgets. It holds no reference to the tab (a cycle would leave the
tab's freeing to the garbage collector).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from perfview.core import pages as page_registry
from perfview.core.pages import PageTab
from perfview.documents import plan
from perfview.documents.ahead import Pending
from perfview.documents.prepare import SummaryTable, page_data, summary_table, with_tree
from perfview.qt.document import Document
from perfview.qt.tasks import Task
from perfview.store.write_gates import WriteGate


class TabData:
    """The prepared data of `document`'s pages (`page_tabs`) by page name (`data`), the
    summary tables the tab started with (`tables`) and the pages the load's thread is still
    laying out (`pending`)."""

    def __init__(
        self,
        document: Document,
        page_tabs: list[PageTab],
        tables: Mapping[str, pd.DataFrame] | None,
        pages: Mapping[str, Any] | None,
    ) -> None:
        self.document = document
        self.page_tabs = page_tabs
        self.tables = dict(tables or {})
        self.data: dict[str, Any] = {}  # prepared page data (pages.prepare) by page name
        self.pending: dict[str, Pending] = {}  # laid out by the load task's thread meanwhile
        self.laid_out: set[str] = set()  # by the load's thread, done: built on a coming turn
        for name, data in (pages or {}).items():
            if isinstance(data, Pending) and not data.ready():
                self.pending[name] = data
            elif isinstance(data, Pending):  # no worker round trip for it
                self.adopt(name, data.result())
                self.laid_out.add(name)
            else:
                self.adopt(name, data)
        document.seed_tables(self.tables)

    def needs_data(self, name: str) -> bool:
        if name not in self.data and page_registry.needs_data(name, self.document.bundle):
            return True
        return self.missing_table(name) is not None or self.missing_tree(name)

    def missing_tree(self, name: str) -> bool:
        """True when page `name` is drawn from a call tree not built yet (the load leaves a
        trace's tree to the first page that shows it: a second at 1 GB)."""
        bundle = self.document.bundle
        return bundle.tree is None and bundle.timeline is not None and plan.uses_tree(name)

    def missing_table(self, name: str) -> str | None:
        """The summary table page `name` shows when it is not computed yet, else None."""
        table = next((tab.table for tab in self.page_tabs if tab.name == name), None)
        return table if table and not self.document.has_table(table) else None

    def compute(self, name: str) -> Any:
        """Page `name`'s data, here and now: the load's thread's result when it laid it out
        (`documents.ahead`), else computed (from the layout cache when it has it)."""
        pending = self.pending.pop(name, None)
        if pending is not None:
            return pending.result()
        return page_data(name, self.document.bundle, self.tables, None)

    def adopt(self, name: str, data: Any) -> None:
        """Keep page `name`'s prepared data (and what other pages get from it for free)."""
        self.data[name] = data
        for other, value in page_registry.derived(name, data).items():
            self.data.setdefault(other, value)

    def task_for(self, name: str, gate: Callable[[], WriteGate]) -> Task:
        """A worker task computing what page `name` lacks (its data, summary table, call
        tree); `gate` makes the write gate of a layout it stores."""
        bundle, tables = self.document.bundle, dict(self.tables)
        table = self.missing_table(name)
        tree = self.missing_tree(name)
        if name in self.data or not page_registry.needs_data(name, bundle):
            if table is None:  # only the call tree is missing
                assert tree
                task = Task(lambda _progress: with_tree(bundle, lambda: None), name=name)
            else:
                task = Task(
                    lambda _progress: with_tree(bundle, lambda: summary_table(bundle, table), tree),
                    name=name,
                )
        elif name in self.pending:  # being laid out since the load built the bundle
            pending = self.pending.pop(name)
            task = Task(lambda _progress: with_tree(bundle, pending.result, tree), name=name)
        else:
            writes = gate()

            def both() -> Any:
                """The page's summary table first when missing (its data reads it: the
                builder then computes nothing on the GUI thread), then its data."""
                if table is None:
                    return page_data(name, bundle, tables, writes)
                summary = summary_table(bundle, table)
                data = page_data(name, bundle, {**tables, table: summary.frame}, writes)
                return summary, data

            task = Task(lambda _progress: with_tree(bundle, both, tree), name=name)
        return task

    def take(self, name: str, data: Any) -> None:
        """Keep what a worker prepared for page `name`: a summary table, its data, or both."""
        if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], SummaryTable):
            self.document.seed_tables({data[0].name: data[0].frame})
            data = data[1]
        if isinstance(data, SummaryTable):
            self.document.seed_tables({data.name: data.frame})
        elif data is not None and name not in self.data:
            self.adopt(name, data)


__all__ = ["TabData"]
