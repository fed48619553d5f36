"""Generic sortable, filterable table of a DataFrame, linked to the document selection.

Used for every tabular view (functions, callers, ops, kernels, lanes, memory summaries…).
A row click selects the row's `key_column` value in the Document; a selection made elsewhere
(icicle, timeline) selects the matching row here. A guard flag plus the Document's own
"emit only on change" rule keep the two directions from feeding each other.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from perfview.core.layout.columns import PADDING, fit_widths
from perfview.core.model.units import Unit
from perfview.qt.document import Document, Selection
from perfview.qt.models.table_model import DataFrameModel, TableProxy


class _Table(QTableView):
    """QTableView whose Copy key copies the selected rows as CSV.

    QAbstractItemView claims the Copy key itself (it copies one cell's text), before any
    QShortcut sees it, so the override has to be in keyPressEvent.
    """

    copy_requested = Signal()
    resized = Signal()  # the view's width changed: the name column is fitted again

    def viewportEvent(self, event: QEvent) -> bool:
        # the viewport, not the view: a vertical scroll bar appearing narrows only it
        handled = super().viewportEvent(event)
        if event.type() == QEvent.Type.Resize:
            assert isinstance(event, QResizeEvent)
            if event.size().width() != event.oldSize().width():
                self.resized.emit()
        return handled

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_requested.emit()
            event.accept()
            return
        super().keyPressEvent(event)


# Rows a table measures its columns' content from: the rows shown first (a sorted table's
# top rows hold its widest numbers); the full names are in the cells' tooltips.
SIZE_ROWS = 50


class TableView(QWidget):
    """Filter box + table + "Copy CSV". `kind` is the Selection kind rows stand for.

    `names` (a Series aligned with the frame's index) gives the Selection name of each row
    when it is not the key column's text (pstats rows show `file:line(function)` but select
    the bare function name).
    `id_selection` makes a row click also send the row's frame index as `Selection.function`
    (pstats function ids), and lets incoming selections match on that id first.
    """

    row_selected = Signal(object)  # the Selection this table sent

    def __init__(
        self,
        frame: pd.DataFrame,
        document: Document | None = None,
        *,
        kind: str = "op",
        key_column: str | None = None,
        headers: dict[str, str] | None = None,
        units: dict[str, Unit | None] | None = None,
        sort_column: str | None = None,
        id_selection: bool = False,
        stretch_column: str | None = None,
        names: pd.Series | None = None,
        caption: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.kind = kind
        self.key_column = key_column or (str(frame.columns[0]) if len(frame.columns) else "")
        self.id_selection = id_selection
        self._syncing = False
        self._sizing = False  # the table sets its widths itself (not the user dragging)
        self._names = None if names is None else names.reindex(frame.index).to_numpy(dtype=object)

        self.model = DataFrameModel(frame, headers=headers, units=units, parent=self)
        self.proxy = TableProxy(self)
        self.proxy.setSourceModel(self.model)

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter rows (substring of any text column)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.set_filter)
        self.count_label = QLabel(self)
        self.copy_button = QToolButton(self)
        self.copy_button.setText("Copy table as CSV")
        self.copy_button.setToolTip("Copy every visible row (raw values) to the clipboard")
        self.copy_button.clicked.connect(self.copy_table)

        self.table = _Table(self)
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSortIndicatorShown(True)
        header.setHighlightSections(False)
        if sort_column is not None and sort_column in frame.columns:
            header.setSortIndicator(
                self.model.column_index(sort_column), Qt.SortOrder.DescendingOrder
            )
        else:
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # keep the frame's order
        self.table.setSortingEnabled(True)
        self._size_columns(stretch_column)

        self.table.copy_requested.connect(self.copy_selection)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 4, 4, 0)
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.count_label)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        # The figures' definition, where a user reads them (idle, overlap: see the page).
        self.caption = QLabel(caption, self)
        self.caption.setWordWrap(True)
        self.caption.setVisible(bool(caption))
        self.caption.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 1)
        self._update_count()

        if document is not None:
            document.selection_changed.connect(self._on_document_selection)
            if document.selection is not None:
                self._on_document_selection(document.selection)

    # --- sizing ----------------------------------------------------------------------------
    def _size_columns(self, stretch_column: str | None) -> None:
        """Numeric columns as wide as their numbers (a long header on two lines), the name
        column (`stretch_column`, else the widest text column) the rest of the view: see
        `core.layout.columns`. Measured once from the first rows (fast on big tables); the split is
        redone when the view's width changes, until the user drags a column."""
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        # size from the first rows only (SIZE_ROWS): Qt asks the model ~10 questions a cell,
        # and 200 rows of a few tables cost a page 0.05-0.1 s of the GUI thread (issue 37)
        header.setResizeContentsPrecision(SIZE_ROWS)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        names = self.model.column_names()
        count = len(names)
        numeric = [self.model.is_numeric(i) for i in range(count)]
        content = [self.table.sizeHintForColumn(i) for i in range(count)]
        for i in range(count):
            if numeric[i] and header.sectionSizeHint(i) > content[i] + 3 * PADDING:
                self.model.wrap_header(i)  # "registers per thread" over a 3-digit column
        heads = [header.sectionSizeHint(i) for i in range(count)]
        if stretch_column not in names:
            text_columns = [i for i in range(count) if not numeric[i]]
            stretch_column = (
                names[max(text_columns, key=content.__getitem__)] if text_columns else None
            )
        self._stretch = names.index(stretch_column) if stretch_column is not None else None
        self._measured = (content, heads, numeric)
        self._user_sized = False
        self._apply_widths()
        header.sectionResized.connect(self._on_section_resized)
        self.table.resized.connect(self._apply_widths)

    def _apply_widths(self) -> None:
        if self._user_sized or not self._measured[0]:
            return
        content, heads, numeric = self._measured
        viewport = self.table.viewport().width()
        widths = fit_widths(content, heads, numeric, self._stretch, viewport)
        header = self.table.horizontalHeader()
        self._sizing = True
        try:
            for i, width in enumerate(widths):
                header.resizeSection(i, width)
        finally:
            self._sizing = False

    def _on_section_resized(self, _index: int, _old: int, _new: int) -> None:
        if not self._sizing:
            self._user_sized = True  # the user's widths stay

    # --- filter / copy ---------------------------------------------------------------------
    def set_filter(self, text: str) -> None:
        """Show only rows containing `text` (case-insensitive) in a text column."""
        if self.filter_edit.text() != text:
            self.filter_edit.setText(text)  # re-enters through textChanged
            return
        self.proxy.set_filter_text(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(f"{shown:,} rows" if shown == total else f"{shown:,} of {total:,}")

    def selected_proxy_rows(self) -> list[int]:
        return sorted({i.row() for i in self.table.selectionModel().selectedIndexes()})

    def selection_csv(self) -> str:
        """CSV of the selected cells' rectangle (raw values), with a header row."""
        indexes = self.table.selectionModel().selectedIndexes()
        if not indexes:
            return ""
        rows = sorted({i.row() for i in indexes})
        columns = sorted({i.column() for i in indexes})
        return self.proxy.to_csv(rows, columns)

    def copy_selection(self) -> str:
        text = self.selection_csv()
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    def table_csv(self) -> str:
        return self.proxy.to_csv()

    def copy_table(self) -> str:
        text = self.table_csv()
        QGuiApplication.clipboard().setText(text)
        return text

    def _context_menu(self, pos: Any) -> None:
        menu = QMenu(self)
        copy_sel = QAction("Copy selection as CSV", menu)
        copy_sel.setShortcut(QKeySequence.StandardKey.Copy)
        copy_sel.triggered.connect(self.copy_selection)
        copy_all = QAction("Copy table as CSV", menu)
        copy_all.triggered.connect(self.copy_table)
        menu.addAction(copy_sel)
        menu.addAction(copy_all)
        menu.popup(self.table.viewport().mapToGlobal(pos))

    # --- selection linking -----------------------------------------------------------------
    def selection_for_row(self, proxy_row: int) -> Selection | None:
        src = self.proxy.mapToSource(self.proxy.index(proxy_row, 0))
        if not src.isValid():
            return None
        name = ""
        if self._names is not None:
            name = str(self._names[self.model.source_row(src.row())])
        elif self.key_column in self.model.column_names():
            value = self.model.raw(src.row(), self.model.column_index(self.key_column))
            name = "" if value is None else str(value)
        function = None
        if self.id_selection:
            row_id = self.model.row_id(src.row())
            function = int(row_id) if isinstance(row_id, int) else None
        return Selection(kind=self.kind, name=name, function=function, source=self)

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        selection = self.selection_for_row(current.row())
        if selection is None:
            return
        self.row_selected.emit(selection)
        if self.document is not None:
            self.document.select(selection)

    def _on_document_selection(self, selection: Selection | None) -> None:
        if selection is None or selection.source is self:
            return
        source_row = None
        if self.id_selection and selection.function is not None:
            source_row = self.model.find_id(selection.function)
        if source_row is None and self._names is not None:
            source_row = self.model.find_source_position(self._names, selection.name)
        if source_row is None and self.key_column in self.model.column_names():
            rows = self.model.find_rows(self.key_column, selection.name)
            source_row = rows[0] if rows else None
        if source_row is None:
            return
        proxy_index = self.proxy.mapFromSource(self.model.index(source_row, 0))
        if not proxy_index.isValid():
            return  # filtered out: leave the user's filter alone
        self._syncing = True
        try:
            self.table.selectionModel().setCurrentIndex(
                proxy_index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.table.scrollTo(proxy_index, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._syncing = False


__all__ = ["TableView"]
