"""A line-by-line report (memory_profiler's, Scalene's): one block at a time, as annotated source.

Rows are the block's source lines with the report's number columns (`LineReport.columns`) and
the line itself in a monospace font. For memory_profiler: Mem usage, Increment (heat-coloured:
red where memory grew, blue where it shrank, stronger for bigger changes) and Occurrences, i.e.
what `python -m memory_profiler` prints, but sortable and easier to scan. For Scalene: CPU time
(Python, native, system), GPU, memory (average, peak, allocated, its share) and copy volume,
each share tinted by its size. The heat colour is a translucent tint over the palette's base
colour, so it reads in light and dark themes alike.
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
from perfview.core.model import MEMORY_PROFILER_COLUMNS, LineColumn, LineReport
from perfview.core.model.units import format_bytes
from perfview.qt.document import Document, Selection

AnyIndex = QModelIndex | QPersistentModelIndex
# memory_profiler's columns (a Scalene report has its own: `LineReportModel.headers`)
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


def _text(value: float, kind: str, column: LineColumn) -> str:
    """A number as the column shows it; "" where the line has none."""
    if math.isnan(value):
        return ""
    if kind == "count":
        return f"{int(value):,}"
    if kind == "pct":
        return f"{value:.1f}%" if value else ""
    if kind == "rate":
        return f"{format_bytes(value, digits=3)}/s" if value else ""
    if kind == "bytes" and column.column != "mem_bytes" and not value:
        return ""  # Scalene's zeros: nothing allocated there
    text = format_bytes(value, digits=4)
    return f"+{text}" if kind == "increment" and value > 0 else text


class LineReportModel(QAbstractTableModel):
    """The rows of one block of a `LineReport`, with the report's number columns."""

    def __init__(
        self,
        rows: pd.DataFrame | None = None,
        parent: Any = None,
        columns: tuple[LineColumn, ...] = MEMORY_PROFILER_COLUMNS,
    ) -> None:
        super().__init__(parent)
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.columns = columns
        self.headers = ("Line #", *(c.header for c in columns), "Line Contents")
        self.content = len(self.headers) - 1
        self._rows = pd.DataFrame()
        self._scale = 0.0
        self._scales: dict[str, float] = {}
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
        self._scales = {
            c.column: float(np.nanmax(np.abs(self._rows[c.column].to_numpy(np.float64)), initial=0))
            for c in self.columns
            if c.kind == "pct" and c.column in self._rows
        }
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def _raw(self, row: int, column: int) -> Any:
        if column == LINE:
            return int(self._rows["line"].to_numpy()[row])
        if column == self.content:
            return str(self._rows["content"].to_numpy()[row])
        return float(self._rows[self.columns[column - 1].column].to_numpy(np.float64)[row])

    def _background(self, row: int, column: int) -> QColor | None:
        spec = self.columns[column - 1]
        if spec.kind == "increment":
            if self._entry[row]:  # a baseline, not growth: not on the heat scale
                return None
            return heat_color(self._raw(row, column), self._scale)
        if spec.kind == "pct":
            value = self._raw(row, column)
            return heat_color(abs(value), self._scales.get(spec.column, 0.0))
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        row, column = index.row(), index.column()
        numbers = 0 < column < self.content
        if role in (Qt.ItemDataRole.DisplayRole, RAW_ROLE):
            value = self._raw(row, column)
            if role == RAW_ROLE or not numbers:
                return value
            spec = self.columns[column - 1]
            return _text(value, spec.kind, spec)
        if role == Qt.ItemDataRole.BackgroundRole and numbers:
            return self._background(row, column)
        increment = numbers and self.columns[column - 1].kind == "increment"
        if role == Qt.ItemDataRole.ToolTipRole and increment and self._entry[row]:
            return ENTRY_TIP
        if role == Qt.ItemDataRole.FontRole and not numbers:
            return self._font
        if role == Qt.ItemDataRole.TextAlignmentRole and column != self.content:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.headers)
        ):
            return self.headers[section]
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
        self.model = LineReportModel(parent=self, columns=report.columns)
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
        top.addWidget(QLabel(f"{report.block_kind}:", self))
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
        if self.report.columns != MEMORY_PROFILER_COLUMNS:
            self.summary.setText(_most(rows, self.report.columns))
            return
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


def _most(rows: pd.DataFrame, columns: tuple[LineColumn, ...], shown: int = 4) -> str:
    """The block's line count and, for its first `shown` columns with any value, the line
    where each is largest (a report other than memory_profiler's)."""
    parts = [f"{len(rows)} lines"]
    line = rows["line"].to_numpy()
    for spec in columns:
        values = np.nan_to_num(rows[spec.column].to_numpy(np.float64))
        if len(parts) > shown or not len(values) or values.max() <= 0:
            continue
        k = int(np.argmax(values))
        parts.append(f"most {spec.header}: {_text(values[k], spec.kind, spec)} at line {line[k]}")
    return "  ·  ".join(parts)


__all__ = ["LineReportModel", "LineReportView", "heat_color"]
