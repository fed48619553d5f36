"""The page registry: every page of a document declared once, read by tabs, workers and the CLI.

A `Page` says everything about one page: its name (also the `perfview summary --view` name when
it has a table), its title, the table the CLI prints for it per bundle format (`tables`), when
a bundle has data for it (`has_data`), what it computes off the GUI thread (`prepare`, with
`prepare_when`), and which widget kind the GUI builds for it (`widget`, a key of the Qt side's
one builder table, `perfview.qt.page_widgets.BUILDERS`; None for CLI-only tables).

Which pages a document's tab shows, in which order, is a property of the kind of document
(`KINDS`: pstats, torch trace, plain trace, mprof, memory_profiler report): each kind lists its
`Tab`s. A tab whose page has a table for the bundle's format is shown when that table has data;
a purely graphical page (timeline, icicle, call tree) always is.

The records are in `page.py`, the pages (`PAGES`) in `registry.py`, the kinds (`KINDS`) in
`kinds.py`, and the functions that tabs, workers and the CLI call here. Adding a page: one
`Page` in `PAGES` and one `Tab` in the kinds that show it (plus a widget builder on the Qt
side when it is not a plain table).
Everything here is pure (no Qt), so worker threads and the CLI read it freely.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from perfview.core.model import Bundle
from perfview.core.pages.kinds import KINDS
from perfview.core.pages.page import BarChart, Kind, Page, Tab, Tables, ViewError
from perfview.core.pages.registry import PAGES


@dataclass(frozen=True)
class PageTab:
    """One tab of one document: the page name, the tab's title, and the summary table the
    load worker should precompute for it (None for graphics pages)."""

    name: str
    title: str
    table: str | None = None
    widget: str | None = None  # the GUI's builder key for this page in this kind of document
    group: str = ""  # the navigation group it is shown in ("": an entry of its own)


def kind_of(bundle: Bundle) -> Kind | None:
    return next((kind for kind in KINDS if kind.matches(bundle)), None)


def shows(page: Page, bundle: Bundle) -> bool:
    """A page with a table for this format shows when the table has data; others always."""
    if bundle.format in page.tables:
        return page.has_data(bundle)
    return page.widget is not None and page.shown_when(bundle)


# tabs_for per live bundle (by id; an entry goes when its bundle does). Which pages apply
# scans the events (about 0.1 s at 1 GB), so the load task answers it once, off the GUI thread.
_TABS: dict[int, list[PageTab]] = {}


def tabs_for(bundle: Bundle) -> list[PageTab]:
    """The tabs this bundle's document shows, in order. Pure: safe on a worker thread."""
    key = id(bundle)
    tabs = _TABS.get(key)
    if tabs is None:
        tabs = _tabs_for(bundle)
        _TABS[key] = tabs
        weakref.finalize(bundle, _TABS.pop, key, None)
    return list(tabs)


def _tabs_for(bundle: Bundle) -> list[PageTab]:
    kind = kind_of(bundle)
    out: list[PageTab] = []
    for tab in kind.tabs if kind is not None else ():
        page = PAGES[tab.page]
        if shows(page, bundle):
            table = tab.page if tab.table and bundle.format in page.tables else None
            group = page.group if tab.group is None else tab.group
            widget = tab.widget or page.widget
            out.append(PageTab(tab.page, tab.title or page.title, table, widget, group or ""))
    return out


def first_tables(bundle: Bundle) -> list[str]:
    """Summary tables the load worker precomputes: the first page's, when it is a table.

    The others are computed in the background when their page is first shown: a 1 GB trace's
    kernel table alone takes about a second, and most opens never look at every page.
    """
    tabs = tabs_for(bundle)
    return [tabs[0].table] if tabs and tabs[0].table else []


def needs_data(name: str, bundle: Bundle) -> bool:
    """True when page `name` of this bundle has data worth computing off the GUI thread."""
    page = PAGES.get(name)
    return page is not None and page.prepare is not None and page.prepare_when(bundle)


def prepare(name: str, bundle: Bundle, tables: Tables | None = None) -> Any:
    """The data page `name` shows (None when the page needs nothing precomputed). Pure."""
    page = PAGES.get(name)
    if page is None or page.prepare is None or not page.prepare_when(bundle):
        return None
    return page.prepare(bundle, tables or {})


def prepare_first(name: str, bundle: Bundle, tables: Tables | None = None) -> Any:
    """What a load prepares for the page a new tab opens on: the page's `prepare_first` when
    it has one (the Overview without its findings, found once the page is drawn:
    `OverviewData.with_findings`), else `prepare`. Pure."""
    page = PAGES.get(name)
    if page is not None and page.prepare_first is not None and needs_data(name, bundle):
        return page.prepare_first(bundle, tables or {})
    return prepare(name, bundle, tables)


def prepared_pages(bundle: Bundle) -> list[str]:
    """Pages whose data the load task computes before the tab is shown: the page the tab
    opens on and the pages prepared ahead (`Page.ahead`: the Timeline, the view a trace is
    opened for). Pure: safe on a worker."""
    names = [tab.name for tab in tabs_for(bundle)]
    wanted = names[:1] + [n for n in names if PAGES[n].ahead]
    return [n for n in dict.fromkeys(wanted) if needs_data(n, bundle)]


def derived(name: str, data: Any) -> dict[str, Any]:
    """Data of other pages that comes for free with page `name`'s (`Page.derives`: the
    Overview's findings are the Recommendations page's list), so that page needs no second
    computation."""
    page = PAGES.get(name)
    return {} if page is None or page.derives is None else page.derives(data)


__all__ = [
    "KINDS",
    "PAGES",
    "BarChart",
    "Kind",
    "Page",
    "PageTab",
    "Tab",
    "ViewError",
    "derived",
    "first_tables",
    "kind_of",
    "needs_data",
    "prepare",
    "prepare_first",
    "prepared_pages",
    "shows",
    "tabs_for",
]
