"""Launch delays page: the delays' histogram beside their definitions, the per-stream table,
and the launches of the bucket clicked (the outliers until then).

The histogram (`streams.delay_histogram`: log-scale buckets at 1-2-5 steps of ns) and the
tables come from one `LaunchDelaysData`, so a bar's count is the number of launches it lists.
Clicking a bar lists its launches, selects the longest on the document and highlights all of
them together on the Timeline (`Document.select_slices`); a double-click on a launch opens it
on the Timeline, as on the Kernels page.
Painted with QPainter like `bar_chart.py`: a static picture, no pyqtgraph set-up cost.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QEvent, QModelIndex, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.torch import streams
from perfview.core.model.units import format_ns
from perfview.core.pages import PAGES
from perfview.core.pages.data import LaunchDelaysData
from perfview.qt.document import Document, Selection
from perfview.qt.views.answer_page import caption
from perfview.qt.views.step_chart import nice_ticks
from perfview.qt.views.table_view import TableView
from perfview.qt.views.torch_ops_view import set_rows

_PAD, _SWATCH = 8.0, 10.0
_NORMAL, _OUTLIER = QColor("#4e79a7"), QColor("#e15759")
LAUNCH_COLUMNS = ["name", "device", "stream", "delay_ns", "start_ns", "outlier", "row"]


class DelayHistogram(QWidget):
    """Launches per delay bucket, the outliers stacked on top in red; `bucket_clicked(i)`."""

    bucket_clicked = Signal(int)

    def __init__(self, histogram: pd.DataFrame, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.histogram = histogram
        self.counts = histogram["launches"].to_numpy(dtype=np.int64)
        self.outliers = histogram["outliers"].to_numpy(dtype=np.int64)
        self.selected = -1
        self.setMouseTracking(True)
        self.setMinimumHeight(170)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def edge_label(self, i: int) -> str:
        return format_ns(int(self.histogram["lo_ns"].to_numpy()[i]))

    def _plot_rect(self) -> QRectF:
        m = QFontMetricsF(self.font())
        left = _PAD + m.horizontalAdvance("00000") + _PAD
        top = _PAD * 2 + m.height() * 2
        bottom = self.height() - _PAD - m.height() * 2
        return QRectF(left, top, max(self.width() - left - _PAD * 2, 10.0), max(bottom - top, 10))

    def bucket_at(self, pos: QPointF) -> int:
        plot = self._plot_rect()
        n = len(self.counts)
        if not n or not (plot.left() <= pos.x() < plot.right()) or pos.y() > plot.bottom():
            return -1
        return min(int((pos.x() - plot.left()) / plot.width() * n), n - 1)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, p: QPainter) -> None:
        m = QFontMetricsF(self.font())
        text = self.palette().color(QPalette.ColorRole.WindowText)
        p.setPen(text)
        p.drawText(
            QPointF(_PAD, _PAD + m.ascent()),
            "Launches by launch → start delay (log scale; click a bar to list its launches)",
        )
        x = _PAD
        for name, colour in (("launches", _NORMAL), ("outliers", _OUTLIER)):
            y = _PAD + m.height() + _PAD / 2
            p.fillRect(QRectF(x, y + (m.height() - _SWATCH) / 2, _SWATCH, _SWATCH), colour)
            p.drawText(QPointF(x + _SWATCH + 4, y + m.ascent()), name)
            x += _SWATCH + 4 + m.horizontalAdvance(name) + _PAD * 2
        plot = self._plot_rect()
        n = len(self.counts)
        if not n:
            return
        ticks = nice_ticks(float(self.counts.max()), 4)
        top = float(ticks[-1]) or 1.0
        grid = QPen(QColor(0, 0, 0, 30))
        for tick in ticks:  # count axis
            ty = plot.bottom() - plot.height() * float(tick) / top
            p.setPen(grid)
            p.drawLine(QPointF(plot.left(), ty), QPointF(plot.right(), ty))
            p.setPen(text)
            label = f"{int(tick):,}"
            p.drawText(
                QPointF(plot.left() - _PAD / 2 - m.horizontalAdvance(label), ty + m.ascent() / 2),
                label,
            )
        width = plot.width() / n
        every = max(1, int(np.ceil(m.horizontalAdvance("500 ms ") / width)))
        for i in range(n):
            x0 = plot.left() + i * width
            whole = plot.height() * self.counts[i] / top
            red = plot.height() * self.outliers[i] / top
            bar = QRectF(x0 + 1, plot.bottom() - whole, width - 2, whole)
            p.fillRect(bar.adjusted(0, 0, 0, -red), _NORMAL)
            p.fillRect(QRectF(x0 + 1, plot.bottom() - red, width - 2, red), _OUTLIER)
            if i == self.selected:
                p.setPen(QPen(QColor(0, 90, 200), 2.0))
                p.drawRect(QRectF(x0, plot.top(), width, plot.height()))
            if i % every == 0:  # bucket edges under the bars
                p.setPen(text)
                p.drawText(QPointF(x0, plot.bottom() + m.ascent() + 2), self.edge_label(i))
        p.setPen(text)
        p.drawText(
            QPointF(plot.left(), plot.bottom() + m.height() + m.ascent() + 2),
            "delay from the launch call's start to the GPU start",
        )

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            assert isinstance(e, QHelpEvent)
            i = self.bucket_at(QPointF(e.pos()))
            if i < 0:
                QToolTip.hideText()
            else:
                hi = format_ns(int(self.histogram["hi_ns"].to_numpy()[i]))
                QToolTip.showText(
                    e.globalPos(),
                    f"<b>{self.edge_label(i)} – {hi}</b><br>{self.counts[i]:,} launches, "
                    f"{self.outliers[i]:,} outliers",
                    self,
                )
            return True
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        i = self.bucket_at(e.position())
        if i >= 0 and e.button() == Qt.MouseButton.LeftButton:
            self.selected = i
            self.update()
            self.bucket_clicked.emit(i)
        super().mousePressEvent(e)


class LaunchDelaysView(QWidget):
    """Histogram and definitions, the per-stream table, the listed launches."""

    def __init__(
        self,
        data: LaunchDelaysData,
        document: Document | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.data = data
        self.rows = data.rows
        self.histogram = DelayHistogram(data.histogram)
        self.caption = caption(PAGES["launch-delays"].definitions)
        self.caption.setMinimumWidth(260)
        top = QWidget(self)
        row = QHBoxLayout(top)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.histogram, 3)
        row.addWidget(self.caption, 2, Qt.AlignmentFlag.AlignTop)
        self.table = TableView(data.table, document, kind="op", key_column="worst")
        self.launch_label = QLabel(self)
        self.launch_label.setTextFormat(Qt.TextFormat.RichText)
        self.outliers_button = QPushButton("Show the outliers", self)
        self.outliers_button.clicked.connect(self.show_outliers)
        self.launches = TableView(self.rows[LAUNCH_COLUMNS].iloc[:0], None, kind="event",
                                  key_column="row", units={"row": None},
                                  headers={"row": "event", "start_ns": "start"})  # fmt: skip
        self.launches.table.doubleClicked.connect(self._on_double_click)
        listed = QWidget(self)
        box = QVBoxLayout(listed)
        box.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.launch_label, 1)
        head.addWidget(self.outliers_button)
        box.addLayout(head)
        box.addWidget(self.launches, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.table)
        split.addWidget(listed)
        split.setStretchFactor(2, 1)
        rows = min(len(data.table), 6)  # the per-stream table shows its streams whole
        split.setSizes([215, 80 + 22 * rows, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.histogram.bucket_clicked.connect(self.show_bucket)
        self.show_outliers()

    def _list(self, mask: np.ndarray, what: str) -> None:
        shown = self.rows.loc[mask, LAUNCH_COLUMNS]
        shown = shown.sort_values("delay_ns", ascending=False, kind="stable")
        set_rows(self.launches, shown.reset_index(drop=True))
        self.launch_label.setText(
            f"<b>{len(shown):,}</b> {what} of {len(self.rows):,} launches "
            "(double-click one to show it on the timeline)"
        )

    def show_outliers(self) -> None:
        """List the launches slower than their stream's outlier limit (the page's start)."""
        self.histogram.selected = -1
        self.histogram.update()
        self._list(self.rows["outlier"].to_numpy(dtype=bool), "outliers")

    def show_bucket(self, i: int) -> None:
        """List bucket i's launches, longest first, select the longest on the document (its
        details) and all of the bucket's launches together on the Timeline."""
        h = self.data.histogram
        lo, hi = int(h["lo_ns"].to_numpy()[i]), int(h["hi_ns"].to_numpy()[i])
        mask = streams.in_bucket(self.rows, lo, hi, first=i == 0)
        self._list(mask, f"launches delayed {format_ns(lo)} – {format_ns(hi)}")
        if self.document is not None and mask.any():
            ordered = self.rows.loc[mask].sort_values("delay_ns", ascending=False, kind="stable")
            worst = ordered.iloc[0]
            pick = Selection("event", str(worst["name"]), event=int(worst["row"]), source=self)
            self.document.select(pick)
            self.document.select_slices(ordered["row"].to_numpy(dtype=np.int64).tolist())

    def launch_row(self, proxy_row: int) -> int:
        """The event row (in Timeline.events) of the launch shown at `proxy_row`."""
        src = self.launches.proxy.mapToSource(self.launches.proxy.index(proxy_row, 0)).row()
        return int(self.launches.model.raw(src, self.launches.model.column_index("row")))

    def _on_double_click(self, index: QModelIndex) -> None:
        if not index.isValid() or self.document is None:
            return
        row = self.launch_row(index.row())
        name = str(self.rows.loc[self.rows["row"] == row, "name"].iat[0])
        self.document.request_view("timeline")
        self.document.select(Selection(kind="event", name=name, event=row, source=self))


__all__ = ["LAUNCH_COLUMNS", "DelayHistogram", "LaunchDelaysView"]
