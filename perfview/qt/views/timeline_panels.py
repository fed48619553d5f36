"""The timeline's side tabs: Details, Range (the table of what a time range holds), Search
(results list), and the Tracks and Bookmarks tabs their own modules install.

Their own module so that `timeline_view.py` keeps the plot and its interaction; these functions
only build and fill widgets, stored as attributes of the view (`view.side`, `view.details`,
`view.range_table`, …) where tests and other modules find them.
"""

from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtWidgets

from perfview.core.layout import timeline_layout
from perfview.core.model.units import format_ns
from perfview.qt.views import bookmarks, tracks_panel
from perfview.qt.views.details_panel import DetailsPanel
from perfview.qt.views.search_results import SearchResults

RANGE_ROWS = 300


def assemble(view: Any) -> None:
    """The view's layout: the search bar over the plot, beside `view.side`, an empty tab
    widget here that `build_side` fills (possibly a turn later: `TimelineView(defer=True)`)."""
    view.side = QtWidgets.QTabWidget()
    view.side.setMinimumWidth(260)
    splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
    left = QtWidgets.QWidget()
    lay = QtWidgets.QVBoxLayout(left)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    lay.addWidget(view.search_bar)
    lay.addWidget(view.path_track)  # hidden until it has a path (torch traces)
    lay.addWidget(view.plot)
    splitter.addWidget(left)
    splitter.addWidget(view.side)
    splitter.setStretchFactor(0, 1)
    # the side tabs start folded away: an empty "Nothing selected" took a third of the
    # width; a selection, a range or a search opens them (`open_side`), and the handle,
    # dragged left, opens them by hand
    splitter.setCollapsible(1, True)
    splitter.setHandleWidth(7)
    splitter.handle(1).setToolTip("Drag left for the Details, Range, Search and Tracks tabs")
    splitter.setSizes([1440, 0])
    view.side_splitter = splitter
    outer = QtWidgets.QVBoxLayout(view)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(splitter)


def open_side(view: Any) -> None:
    """Unfold the side tabs when they are folded away (a selection was made)."""
    splitter = view.side_splitter
    sizes = splitter.sizes()
    if len(sizes) == 2 and sizes[1] == 0:
        total = sum(sizes) or view.width()
        side = max(view.side.minimumWidth(), min(340, total // 4))
        splitter.setSizes([max(total - side, 1), side])


def build_side(view: Any) -> None:
    """The side tabs, into `view.side` (an empty QTabWidget), with `view.details`,
    `view.range_table`, `view.results`."""
    view.details = DetailsPanel()
    view.details.event_activated.connect(view.select_event)
    view.range_label = QtWidgets.QLabel("Shift+drag (or right-drag) to select a time range")
    view.range_label.setWordWrap(True)
    view.range_table = QtWidgets.QTableWidget(0, 3)
    view.range_table.setHorizontalHeaderLabels(["Name", "Calls", "Time in range"])
    header = view.range_table.horizontalHeader()
    header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
    view.range_table.verticalHeader().hide()
    view.range_table.verticalHeader().setDefaultSectionSize(
        view.range_table.fontMetrics().height() + 6
    )
    view.range_table.setWordWrap(False)
    view.range_table.setTextElideMode(QtCore.Qt.TextElideMode.ElideMiddle)
    view.range_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    range_page = QtWidgets.QWidget()
    lay = QtWidgets.QVBoxLayout(range_page)
    lay.setContentsMargins(6, 6, 6, 6)
    lay.addWidget(view.range_label)
    lay.addWidget(view.range_table)
    view.side.addTab(view.details, "Details")
    view.side.addTab(range_page, "Range")
    view.results = SearchResults()  # names and args (core.search), F3 steps through
    view.results.activated.connect(lambda pos: view.next_match(pos - view._match_pos))
    view.side.addTab(view.results, "Search")
    view.tracks_panel = tracks_panel.install(view)  # pin/hide/collapse/reorder, flows
    view.bookmarks = bookmarks.install(view)  # Ctrl+B; saved in workspaces


def fill_range_table(view: Any, lo: int, hi: int) -> None:
    """The Range tab for [lo, hi] ns: per name, calls and time in range (shown at once)."""
    table = timeline_layout.range_summary(view.timeline.events, lo, hi)
    view.range_summary = table
    view.range_label.setText(
        f"{format_ns(lo)} – {format_ns(hi)}  (span {format_ns(hi - lo)}): "
        f"{int(table['calls'].sum()) if len(table) else 0} slices, {len(table)} names"
    )
    shown = table.head(RANGE_ROWS)
    view.range_table.setRowCount(len(shown))
    for i, (name, calls, total) in enumerate(
        zip(shown["name"], shown["calls"], shown["total_ns"], strict=True)
    ):
        view.range_table.setItem(i, 0, QtWidgets.QTableWidgetItem(str(name)))
        for col, text in ((1, f"{int(calls):,}"), (2, format_ns(int(total)))):
            cell = QtWidgets.QTableWidgetItem(text)
            cell.setTextAlignment(
                QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter
            )
            view.range_table.setItem(i, col, cell)
    view.side.setCurrentIndex(1)
    open_side(view)
