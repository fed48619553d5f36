"""One open file: a `Bundle` plus the state that views share (selection, time range, search).

Views never talk to each other directly. Each view holds the `Document` and both *tells* it what
the user did (`select`, `set_range`, `set_search`) and *listens* to its signals. The document only
emits when the value really changes, so a view that reacts to `selection_changed` by selecting the
same thing again does not start a signal loop.

The data (bundle, summary tables, call tree) belongs to the Qt-free owner of the open document
(`perfview.documents.OpenDocument`), which computes each on first use and keeps it, so several
views showing the same table share one DataFrame; this object adds what views share on screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import QObject, Signal

from perfview.core.analysis.sampled_threads import ALL, ThreadChoice
from perfview.core.model import Bundle, CallTree
from perfview.documents import OpenDocument

SELECTION_KINDS = ("function", "op", "event", "node")


@dataclass(frozen=True)
class Selection:
    """What the user picked, in terms every view understands.

    `kind` is "function" (pstats function or call-tree frame), "op" (a trace operator name),
    "event" (one slice of the timeline) or "node" (one node of a call tree). `name` is always
    set, so a view that cannot locate the exact row/node can still match by name.
    Optional fields pin the exact item when the emitting view knows it:
    `event` is a row of `Timeline.events`, `node` a `CallTree` node id, `function` a row of
    `PstatsProfile.functions`. `source` is the emitting view (views ignore their own echo).
    """

    kind: str
    name: str
    event: int | None = None
    node: int | None = None
    function: int | None = None
    source: Any = None

    def same_target(self, other: Selection | None) -> bool:
        """True when `other` designates the same thing (ignoring who emitted it)."""
        if other is None:
            return False
        return (self.kind, self.name, self.event, self.node, self.function) == (
            other.kind,
            other.name,
            other.event,
            other.node,
            other.function,
        )


class Document(QObject):
    """A loaded file and the shared view state. Created on the GUI thread after a load.

    Signals:
        selection_changed(object): a `Selection`, or None when cleared.
        range_changed(int, int): visible/selected time range in ns (lo, hi), relative to the
            trace origin. Emitted by `set_range`.
        search_changed(str): the search text views should highlight.
        view_requested(str): someone asked the document tab to show view `name`.
        slices_requested(object): a tuple of event rows to select together in the Timeline,
            zooming to the first (a recommendation's evidence). Emitted by `show_slices` and
            `select_slices`.
    """

    selection_changed = Signal(object)
    # object, not int: ns ranges pass 2**31 (2.1 s), which a 32-bit `int` signal argument overflows.
    range_changed = Signal(object, object)
    search_changed = Signal(str)
    view_requested = Signal(str)
    slices_requested = Signal(object)
    # a sampled profile's thread choice (`sampled_threads.ThreadChoice`), once its tree is set
    thread_changed = Signal(object)

    def __init__(self, opened: OpenDocument | Bundle, parent: QObject | None = None) -> None:
        super().__init__(parent)
        if isinstance(opened, Bundle):  # a bundle loaded elsewhere (tests, comparisons)
            opened = OpenDocument(Path(opened.path), opened)
        self.opened = opened
        self.bundle = opened.bundle
        self.path: Path = Path(self.bundle.path)
        self.title: str = self.bundle.title
        self.selection: Selection | None = None
        self.range: tuple[int, int] | None = None
        self.search: str = ""
        self.slices: tuple[int, ...] = ()
        # the thread the flame graphs show (`Page.per_thread`), with its tree; ALL: merged
        self.thread_choice: ThreadChoice = ALL
        self._thread_tree: CallTree | None = None

    # --- shared state -----------------------------------------------------------------------
    def select(self, selection: Selection | None) -> None:
        """Make `selection` current; emits `selection_changed` only if the target changed."""
        if selection is None:
            if self.selection is None:
                return
        elif selection.same_target(self.selection):
            return
        self.selection = selection
        self.selection_changed.emit(selection)

    def set_range(self, lo: int, hi: int) -> None:
        """Set the time range (ns). Emits `range_changed` only when it differs."""
        lo, hi = int(lo), int(hi)
        if hi < lo:
            lo, hi = hi, lo
        if self.range == (lo, hi):
            return
        self.range = (lo, hi)
        self.range_changed.emit(lo, hi)

    def set_search(self, text: str) -> None:
        """Set the search text every view highlights. Emits `search_changed` when it differs."""
        if text == self.search:
            return
        self.search = text
        self.search_changed.emit(text)

    def request_view(self, name: str) -> None:
        """Ask the tab showing this document to switch to view `name` (e.g. "timeline")."""
        self.view_requested.emit(name)

    def show_slices(self, rows: tuple[int, ...] | list[int]) -> None:
        """Show the Timeline with these event rows selected together, zoomed to the first."""
        self.request_view("timeline")  # builds the timeline first if it was never shown
        self.select_slices(rows)

    def select_slices(self, rows: tuple[int, ...] | list[int]) -> None:
        """Select these event rows together on the Timeline (highlighted, the first selected
        and zoomed to) without switching to it: a launch-delay bucket's launches, seen on the
        Timeline when the user goes there. Emits `slices_requested`."""
        self.slices = tuple(int(r) for r in rows)
        self.slices_requested.emit(self.slices)

    def set_thread(self, choice: ThreadChoice, tree: CallTree | None) -> None:
        """Show `choice`'s tree (`sampled_threads.thread_tree`, built off the GUI thread) in
        the pages that honour the thread choice. Emits `thread_changed` when it differs."""
        if choice == self.thread_choice:
            return
        self.thread_choice = choice
        self._thread_tree = tree if choice.thread is not None else None
        self.thread_changed.emit(choice)

    # --- the open document's data (kept by its owner) ---------------------------------------
    def tree(self) -> CallTree | None:
        """The call tree for icicle/sandwich views (pstats: estimated; traces: merged slices;
        a sampled profile: the chosen thread's, or every thread merged)."""
        if self._thread_tree is not None:
            return self._thread_tree
        return self.opened.tree()

    def table(self, view_name: str) -> pd.DataFrame:
        """Summary table `view_name` (a CLI view name: functions, ops, kernels …), memoised."""
        return self.opened.table(view_name)

    def has_table(self, view_name: str) -> bool:
        """True when summary table `view_name` is computed (showing it costs nothing)."""
        return view_name in self.opened.tables

    def seed_tables(self, tables: dict[str, pd.DataFrame]) -> None:
        """Adopt tables computed off-thread by the load task (keys are view names)."""
        for name, table in tables.items():
            self.opened.tables.setdefault(name, table)

    def available_views(self) -> list[str]:
        """Names of the summary views that apply to this file."""
        from perfview.core.pages import summary

        return list(summary.available_views(self.bundle))


__all__ = ["SELECTION_KINDS", "Document", "Selection"]
