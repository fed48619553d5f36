"""The records of the page registry: `Page` (one page, declared once), `Tab` and `Kind` (which
pages a kind of document shows, in order), and `ViewError`. No entries here: those are in
`registry.py`, so this module imports nothing but the model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError

TableFn = Callable[[Bundle], pd.DataFrame]
# A table computed under `perfview summary --edit TEXT …` edits (the what-if page's).
EditedTableFn = Callable[[Bundle, Sequence[str]], pd.DataFrame]
HasData = Callable[[Bundle], bool]
Tables = Mapping[str, pd.DataFrame]
Prepare = Callable[[Bundle, Tables], Any]


class ViewError(LoadError):
    """The view does not exist or does not apply to this file; `str()` is one user sentence.

    A LoadError subclass so callers that already turn LoadError into "exit 2, one line" need
    nothing new.
    """


def _always(_bundle: Bundle) -> bool:
    return True


@dataclass(frozen=True)
class BarChart:
    """A chart of a page's table: one horizontal bar per row, named by the `label` columns,
    stacked from `parts` ((column, legend name, colour) in ns), plus `rest` (a total column
    and its legend name: the total less the parts). `rising`: the parts are rising marks of
    one distribution (median ≤ p95 ≤ max), so each segment runs from the mark before."""

    title: str
    label: tuple[str, ...]
    parts: tuple[tuple[str, str, str], ...]
    rest: tuple[str, str, str] | None = None
    rising: bool = False
    # Columns whose values (formatted by their unit) a bar's tooltip adds: figures that are
    # not times (a collective's bandwidth) beside the bar's segments.
    hover: tuple[str, ...] = ()
    # A log time axis: bars of one row span decades (a kernel's fastest and slowest launch),
    # and rows differ by orders of magnitude; each segment is drawn between its marks' logs.
    log: bool = False


@dataclass(frozen=True)
class Page:
    """One page: its CLI table per format (a job's is keyed "job"), when it has data, its
    off-thread data, its widget."""

    name: str
    title: str
    description: str
    tables: Mapping[str, TableFn] = field(default_factory=dict)
    has_data: HasData = _always
    widget: str | None = "table"  # key of the GUI's builder table; None: CLI only
    prepare: Prepare | None = None  # data computed off the GUI thread for the widget
    prepare_when: HasData = _always  # the bundles `prepare` has work for
    shown_when: HasData = _always  # graphics pages: the bundles they have anything to draw for
    # What a load prepares when this page is the one a tab opens on, when that is less than
    # `prepare` (the Overview leaves its findings for later; the rest comes through
    # `with_findings`, off the GUI thread). None: `prepare`.
    prepare_first: Prepare | None = None
    # Other pages' data that comes for free with this page's (the Overview's findings are the
    # Recommendations page's list), so those pages need no second computation.
    derives: Callable[[Any], dict[str, Any]] | None = None
    # Prepared as soon as a document is opened, before anyone clicks it: the view a trace is
    # opened for (the Timeline), laid out on a thread of its own beside the first page.
    ahead: bool = False
    # The store's entry kind that keeps this page's data across opens (`perfview.store`'s
    # PAGE_ENTRIES: "layout", "overview"); None: computed on every open.
    stored: str | None = None
    # Drawn from the document's call tree: the tree is built (off the GUI thread) first.
    needs_tree: bool = False
    # Honours a sampled profile's thread choice (all threads, or one): the window puts its
    # thread picker above the page and rebuilds it from that thread's tree, and
    # `perfview summary --view NAME --thread T` prints that thread's table.
    per_thread: bool = False
    # A cross-rank table: `perfview summary FILE --view NAME` opens even a single trace as a
    # one-rank job and prints the "job" table (a per-file table, if any, is the window's).
    across_ranks: bool = False
    edited: EditedTableFn | None = None  # the table under `--edit` edits; None: takes none
    # One sentence: the window and definition of a figure whose meaning is not obvious (idle,
    # overlap), shown as the page's caption and printed by `summary --view`, so a user who
    # checks with another tool (HTA) sees why the numbers differ.
    definition: str = ""
    # The navigation group the page belongs to wherever it is shown ("GPU", "Flame graphs"):
    # a document's tab bar shows one entry per group, its pages on a second row, so a trace's
    # pages fit a 1024 px window. None: a top-level entry of its own. A new page names its
    # group here and appears in it in every kind that lists it.
    group: str | None = None
    # What each figure the page shows means, one sentence per figure, for its caption in the
    # window and under its table in the CLI (`perfview summary --view NAME`).
    definitions: Mapping[str, str] = field(default_factory=dict)
    # The chart drawn above the page's table, per bundle format (as `tables`), from the same
    # rows: the picture people expect (HTA draws idle time and overlap as stacked bars).
    charts: Mapping[str, BarChart] = field(default_factory=dict)


@dataclass(frozen=True)
class Tab:
    """A page's place in one kind of document. `table`: the load worker precomputes the
    page's CLI table when this tab comes first (it is what the tab opens on). `group`: the
    page's navigation group in this kind when it differs from `Page.group` ("" for none)."""

    page: str
    title: str | None = None  # None: the page's own title
    table: bool = False
    # The widget this kind of document draws the page with, when not the page's own (a
    # capture's Timeline is its memory over time, drawn by the allocations widget).
    widget: str | None = None
    group: str | None = None  # None: the page's own group


@dataclass(frozen=True)
class Kind:
    """A kind of document and its tabs, in order. The first kind whose `matches` holds wins."""

    name: str
    matches: HasData
    tabs: tuple[Tab, ...]


__all__ = [
    "BarChart",
    "EditedTableFn",
    "HasData",
    "Kind",
    "Page",
    "Prepare",
    "Tab",
    "TableFn",
    "Tables",
    "ViewError",
]
