"""A page's data for an open document, wherever it comes from: the store (a reopen), the
page's own `prepare`, or a thread that started on it when the document was opened.

One function per question, each driven by the page's properties in the registry
(`Page.stored`, `Page.prepare_first`), so the window and the CLI prepare a page the same way
and no page is special-cased by name. Pure: no Qt, called on worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from perfview import store
from perfview.core import pages as page_registry
from perfview.core.model import Bundle
from perfview.store.write_gates import WriteGate


def page_data(
    name: str, bundle: Bundle, tables: dict[str, pd.DataFrame], writes: WriteGate | None
) -> Any:
    """`pages.prepare`, except that a page the store keeps (`Page.stored`: a big trace's
    Timeline layout, ~20-50 ms at 1 GB instead of 0.3-1 s of CPU) comes from the store; with
    a `writes` gate, data computed here is stored in the background once the gate opens (the
    tab opens it when the page is drawn), for the next open."""
    page = page_registry.PAGES.get(name)
    entry = store.page_entry(page.stored if page is not None else None)
    fresh = page is None or page.prepare_first is not None
    if entry is not None and not fresh and page_registry.needs_data(name, bundle):
        kept = entry.first(bundle, writes)
        if kept is not None:
            return kept
    return page_registry.prepare(name, bundle, tables)


def first_page_data(
    name: str, bundle: Bundle, tables: dict[str, pd.DataFrame], writes: WriteGate
) -> Any:
    """What an open prepares for the page a new tab opens on: `pages.prepare_first` (partial
    data, the rest found once the page is drawn), read from the store when it keeps it (a
    reopened big trace's Overview tables cost 0.2-1.5 s at 1 GB), else `page_data`."""
    page = page_registry.PAGES.get(name)
    if page is not None and page.prepare_first is not None:
        entry = store.page_entry(page.stored)
        if entry is not None and page_registry.needs_data(name, bundle):
            kept = entry.first(bundle, writes)
            if kept is not None:
                return kept
        return page_registry.prepare_first(name, bundle, tables)
    return page_data(name, bundle, tables, writes)


def completed(name: str, bundle: Bundle, data: Any) -> Any:
    """`data.with_findings(timeline)`, for a page drawn before its findings were found (the
    Overview); the store's entry kind for the page finds them there, or stores them once
    found, so the next open shows them at once without analysing the trace again."""
    page = page_registry.PAGES.get(name)
    entry = store.page_entry(page.stored if page is not None else None)
    if entry is not None and entry.complete is not None:
        return entry.complete(bundle, data)
    return data.with_findings(bundle.timeline)


def is_partial(data: Any) -> bool:
    """True for page data drawn before its findings were found (`with_findings` completes it)."""
    return hasattr(data, "with_findings") and getattr(data, "findings", ()) is None


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
    "SummaryTable",
    "completed",
    "first_page_data",
    "is_partial",
    "page_data",
    "summary_table",
    "with_tree",
]
