"""memory_profiler line-by-line report: one profiled function at a time, as annotated source.

Rows are the function's source lines with Mem usage, Increment (heat-coloured: red where memory
grew, blue where it shrank, stronger for bigger changes), Occurrences and the line itself in a
monospace font, i.e. what `python -m memory_profiler` prints, but sortable and easier to scan.
The heat colour is a translucent tint over the palette's base colour, so it reads in light and
dark themes alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.profile_tables import entry_rows, growth_increments
from perfview.core.model import LineReport
from perfview.core.model.units import format_bytes
from perfview.qt.document import Document, Selection

AnyIndex = QModelIndex | QPersistentModelIndex
HEADERS = ("Line #", "Mem usage", "Increment", "Occurrences", "Line Contents")
LINE, MEM, INC, OCC, CONTENT = range(len(HEADERS))
RAW_ROLE = Qt.ItemDataRole.UserRole + 1
ENTRY_TIP = (
    "memory_profiler's Increment on a function's first line is the memory when the function "
    "was entered (a baseline, not growth), so it is not coloured or counted as growth"
)


def heat_color(increment: float, scale: float) -> QColor | None:
    """Red for growth, blue for release, alpha by sqrt(|increment| / scale); None if zero."""
    if not scale or not increment or math.isnan(increment):
        return None
    strength = min(1.0, math.sqrt(abs(increment) / scale))
    base = QColor(220, 38, 38) if increment > 0 else QColor(37, 99, 235)
    base.setAlpha(int(30 + 170 * strength))
    return base


class LineReportModel(QAbstractTableModel):
    """The rows of one function block of a `LineReport`."""

    def __init__(self, rows: pd.DataFrame | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._rows = pd.DataFrame()
        self._scale = 0.0
        self._entry = np.zeros(0, dtype=bool)
        self.set_rows(rows if rows is not None else pd.DataFrame())

    def set_rows(self, rows: pd.DataFrame) -> None:
        self.beginResetModel()
        self._rows = rows.reset_index(drop=True)
        growth = growth_increments(self._rows) if len(rows) else pd.Series(dtype=np.float64)
        self._entry = entry_rows(self._rows) if len(rows) else np.zeros(0, dtype=bool)
        inc = growth.to_numpy(np.float64)
        finite = np.abs(inc[np.isfinite(inc)])
        self._scale = float(finite.max()) if len(finite) else 0.0
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def _raw(self, row: int, column: int) -> Any:
        record = self._rows.iloc[row]
        if column == LINE:
            return int(record["line"])
        if column == MEM:
            return float(record["mem_bytes"])
        if column == INC:
            return float(record["increment_bytes"])
        if column == OCC:
            return float(record["occurrences"])
        return str(record["content"])

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row, column = index.row(), index.column()
        if role in (Qt.ItemDataRole.DisplayRole, RAW_ROLE):
            value = self._raw(row, column)
            if role == RAW_ROLE or column in (LINE, CONTENT):
                return value
            if math.isnan(value):
                return ""
            if column == OCC:
                return f"{int(value):,}"
            text = format_bytes(value, digits=4)
            return f"+{text}" if column == INC and value > 0 else text
        if role == Qt.ItemDataRole.BackgroundRole and column == INC:
            if self._entry[row]:  # a baseline, not growth: not on the heat scale
                return None
            return heat_color(self._raw(row, INC), self._scale)
        if role == Qt.ItemDataRole.ToolTipRole and column == INC and self._entry[row]:
            return ENTRY_TIP
        if role == Qt.ItemDataRole.FontRole and column in (LINE, CONTENT):
            return self._font
        if role == Qt.ItemDataRole.TextAlignmentRole and column != CONTENT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(HEADERS)
        ):
            return HEADERS[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class LineReportView(QWidget):
    """Function selector + annotated source table for a memory_profiler report."""

    def __init__(
        self, report: LineReport, document: Document | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.report = report
        self.document = document
        self.selector = QComboBox(self)
        self.summary = QLabel(self)
        self.model = LineReportModel(parent=self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 4)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setShowGrid(False)

        n_reports = int(report.blocks["report"].nunique()) if len(report.blocks) else 0
        blocks = report.blocks
        columns = [
            blocks[c].to_numpy() for c in ("block", "report", "file", "function", "first_line")
        ]
        for block, report_no, file, function, first in zip(*columns, strict=True):  # few rows
            name = str(function) or f"block {int(block) + 1}"
            text = f"{name}  —  {file}:{int(first)}"
            if n_reports > 1:
                text += f"  (report {int(report_no) + 1})"
            self.selector.addItem(text, int(block))
        self.selector.currentIndexChanged.connect(self._on_block)

        top = QHBoxLayout()
        top.addWidget(QLabel("Function:", self))
        top.addWidget(self.selector, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        if self.selector.count():
            self._on_block(0)
        else:
            self.summary.setText("The report holds no profiled function.")
        if document is not None:
            document.selection_changed.connect(self._on_document_selection)

    def block_count(self) -> int:
        return self.selector.count()

    def show_block(self, position: int) -> None:
        self.selector.setCurrentIndex(position)

    def _on_block(self, position: int) -> None:
        if position < 0:
            return
        block = int(self.selector.itemData(position))
        lines = self.report.lines
        rows = lines[lines["block"] == block]
        self.model.set_rows(rows)
        self.table.resizeColumnsToContents()
        self._summarise(rows)
        if self.document is not None:
            name = str(
                self.report.blocks.loc[self.report.blocks["block"] == block, "function"].iat[0]
            )
            if name:
                self.document.select(Selection(kind="function", name=name, source=self))

    def _summarise(self, rows: pd.DataFrame) -> None:
        mem = rows["mem_bytes"].to_numpy(np.float64)
        inc = growth_increments(rows).to_numpy(np.float64)
        if not len(rows) or not np.isfinite(mem).any():
            self.summary.setText(f"{len(rows)} lines, none executed")
            return
        k = int(np.nanargmax(mem))
        grow = np.where(np.isfinite(inc), inc, 0)
        g = int(np.argmax(grow))
        line = rows["line"].to_numpy()
        text = (
            f"{len(rows)} lines  ·  peak {format_bytes(mem[k], 4)} at line {int(line[k])}"
            f"  ·  largest increment {format_bytes(grow[g], 4)} at line {int(line[g])}"
        )
        self.summary.setText(text)

    def _on_document_selection(self, selection: Selection | None) -> None:
        if selection is None or selection.source is self or selection.kind != "function":
            return
        blocks = self.report.blocks
        hits = np.flatnonzero(blocks["function"].astype(str).to_numpy() == selection.name)
        if len(hits):
            self.selector.setCurrentIndex(int(hits[0]))


__all__ = ["LineReportModel", "LineReportView", "heat_color"]
