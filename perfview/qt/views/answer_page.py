"""A table page with its answer on top: the figures' definitions as a caption and the page's
chart (`bar_chart.py`) over its table, from the same rows (`Page.definitions`, `Page.charts`).

GPU idle, Comm overlap and Launch delays were 2-3-row tables filling a tenth of the page with
no word on what "host wait" or "overlap %" mean; here the definitions sit where the figures
are, the bars show the split at a glance, and a click on a bar selects its row below (a row
selected below outlines its bar).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

import pandas as pd
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget

from perfview.core.pages import BarChart
from perfview.qt.views.bar_chart import BarChartView
from perfview.qt.views.table_view import TableView


def caption(definitions: Mapping[str, str]) -> QLabel:
    """One line per figure: its name in bold, what it means."""
    text = "<br>".join(
        f"<b>{escape(name)}</b>: {escape(meaning)}." for name, meaning in definitions.items()
    )
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setContentsMargins(8, 6, 8, 2)
    return label


class AnswerPage(QWidget):
    """Caption, chart and the page's `TableView` (as `table`), linked both ways."""

    def __init__(
        self,
        table: TableView,
        frame: pd.DataFrame,
        chart: BarChart | None,
        definitions: Mapping[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.table = table
        self._frame = frame
        self.chart: BarChartView | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        if definitions:
            self.caption = caption(definitions)
            layout.addWidget(self.caption)
        if chart is None or not len(frame):
            layout.addWidget(table, 1)
            return
        self.chart = BarChartView(frame, chart)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.chart)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(scroll)
        splitter.addWidget(table)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([min(self.chart.height() + 4, 420), 400])
        self.splitter = splitter
        self._sized = False
        layout.addWidget(splitter, 1)
        self.chart.bar_clicked.connect(self._select_row)
        table.table.selectionModel().currentRowChanged.connect(self._on_row)

    def showEvent(self, event: QShowEvent) -> None:
        """Once, at the first real size: the chart at most half the height, so a short
        window (1024×700) keeps rows of the table in sight (sizes set before the page had a
        height left the table one row)."""
        super().showEvent(event)
        if self.chart is None or self._sized or self.splitter.height() < 100:
            return
        self._sized = True
        total = self.splitter.height()
        top = min(self.chart.height() + 4, total // 2)
        self.splitter.setSizes([top, total - top])

    def _select_row(self, position: int) -> None:
        """Select the table row of the frame's `position`-th row (the bar clicked)."""
        model = self.table.model
        row = model.find_id(self._frame.index[position])
        if row is None:
            return
        index = self.table.proxy.mapFromSource(model.index(row, 0))
        if index.isValid():
            self.table.table.selectRow(index.row())
            self.table.table.scrollTo(index)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.chart is None or not current.isValid():
            return
        source = self.table.proxy.mapToSource(current)
        row_id = self.table.model.row_id(source.row())
        found = (self._frame.index == row_id).nonzero()[0]  # the index may repeat a value
        if len(found):
            self.chart.set_selected(int(found[0]))


__all__ = ["AnswerPage", "caption"]
