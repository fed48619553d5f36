"""What an open document prepares first, drawn from the page registry's page properties.

A new tab should appear drawn: the page it opens on is prepared by the open itself, off the
GUI thread, and the pages marked `ahead` (the Timeline, the view a trace is opened for) are
laid out beside it before anyone clicks them. Which pages those are is a property of each
page (`Page.ahead`, `Page.needs_tree`, `Page.prepare`), never a page's name. Pure: no Qt,
safe on any thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfview.core import pages as page_registry
from perfview.core.model import Bundle


def first_pages(bundle: Bundle) -> list[str]:
    """The pages whose data the open prepares: the one the tab opens on. Ahead pages are laid
    out beside it on a thread of their own (`documents.ahead`, a big file) or by the tab once
    it is drawn, so a reopened 1 GB trace's first page does not wait for its Timeline."""
    tabs = page_registry.tabs_for(bundle)
    names = [tabs[0].name] if tabs else []
    return [n for n in names if page_registry.needs_data(n, bundle)]


def ahead_pages(bundle: Bundle, skip: Sequence[str] = ()) -> list[str]:
    """The pages `bundle`'s tab shows that are prepared ahead (`Page.ahead`) and have no data
    yet (`skip`: prepared already)."""
    return [
        tab.name
        for tab in page_registry.tabs_for(bundle)
        if page_registry.PAGES[tab.name].ahead
        and tab.name not in skip
        and page_registry.needs_data(tab.name, bundle)
    ]


def is_ahead(name: str) -> bool:
    """True for a page prepared before anyone clicks it (`Page.ahead`)."""
    page = page_registry.PAGES.get(name)
    return page is not None and page.ahead


def uses_tree(name: str) -> bool:
    """True when page `name` is drawn from the document's call tree (`Page.needs_tree`)."""
    page = page_registry.PAGES.get(name)
    return page is not None and page.needs_tree


def tree_first(bundle: Bundle, prepared: Sequence[str]) -> bool:
    """True when a trace's call tree is built by the open: the page its tab opens on (or one
    it prepares) is drawn from it. Otherwise the tree (a second on a 1 GB trace) waits until
    a page that needs it is shown: the first page is drawn that much sooner."""
    if bundle.timeline is None or bundle.tree is not None:
        return False
    tabs = page_registry.tabs_for(bundle)
    return bool(tabs) and (uses_tree(tabs[0].name) or any(uses_tree(n) for n in prepared))


__all__ = ["ahead_pages", "first_pages", "is_ahead", "tree_first", "uses_tree"]
