"""A page's chart drawn from its table (`core.pages.BarChart`): one horizontal stacked bar
per row, a legend above (never over the bars), a time axis below, the row's figures on hover,
and a click that selects the row in the table under it.

Painted with QPainter, like the Overview's step chart (`step_chart.py`): a static picture
built in well under a millisecond, where a pyqtgraph plot costs 10-15 ms of GUI-thread set-up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
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
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from perfview.core.model.units import Unit, column_unit, format_ns, format_value
from perfview.core.pages import BarChart
from perfview.qt.views.step_chart import nice_ticks

_PAD, _SWATCH, _BAR, _GAP = 8.0, 10.0, 16.0, 6.0
MAX_BARS = 40  # rows past this are left to the table (the chart would scroll)


def segments(frame: pd.DataFrame, chart: BarChart) -> tuple[list[str], np.ndarray, list[str]]:
    """Bar labels, each bar's segment lengths (rows × segments, ns) and the legend names.
    Pure: a test checks the numbers the bars are drawn from."""
    shown = frame.head(MAX_BARS)
    labels = [
        " · ".join(_label(c, shown[c].iat[i]) for c in chart.label if c in shown.columns)
        for i in range(len(shown))
    ]
    values = (
        np.column_stack(
            [shown[column].to_numpy(dtype=np.float64) for column, _name, _colour in chart.parts]
        )
        if chart.parts and len(shown)
        else np.zeros((len(shown), len(chart.parts)))
    )
    values = np.nan_to_num(values)
    names = [name for _column, name, _colour in chart.parts]
    if chart.rising and values.shape[1] > 1:  # marks of one distribution → the steps between
        values = np.diff(np.maximum.accumulate(values, axis=1), axis=1, prepend=0.0)
    if chart.rest is not None:
        total = np.nan_to_num(shown[chart.rest[0]].to_numpy(dtype=np.float64))
        values = np.column_stack([values, np.clip(total - values.sum(axis=1), 0, None)])
        names.append(chart.rest[1])
    return labels, values.clip(0, None), names


def _label(column: str, value: object) -> str:
    if column == "rank":
        return f"rank {value}"  # not a bare "0"
    if column.endswith("_ns"):
        return f"at {format_ns(int(value))}"  # type: ignore[call-overload]
    return str(value)


def _cell(column: str, value: object) -> str:
    unit = column_unit(column)
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        return str(value)
    return format_value(float(value), unit or Unit.COUNT)


def hover_lines(frame: pd.DataFrame, chart: BarChart) -> list[str]:
    """Per bar, the `chart.hover` columns' values in their units, for its tooltip."""
    columns = [c for c in chart.hover if c in frame.columns]
    shown = frame.head(MAX_BARS)
    return [
        "<br>".join(f"{c}: {_cell(c, shown[c].iat[i])}" for c in columns) for i in range(len(shown))
    ]


class BarChartView(QWidget):
    """The chart of `chart` over `frame`. `bar_clicked(i)`: the user clicked row i's bar."""

    bar_clicked = Signal(int)

    def __init__(self, frame: pd.DataFrame, chart: BarChart, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chart = chart
        self.labels, self.values, self.names = segments(frame, chart)
        self.hover = hover_lines(frame, chart)
        self.colours = [QColor(colour) for _c, _n, colour in chart.parts]
        if chart.rest is not None:
            self.colours.append(QColor(chart.rest[2]))
        self._selected = -1
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._height())

    def _height(self) -> int:
        line = QFontMetricsF(self.font()).height()
        rows = len(self.labels)
        return int(_PAD * 3 + line * 3 + rows * (_BAR + _GAP))

    def set_selected(self, row: int) -> None:
        self._selected = row
        self.update()

    # --- geometry ---------------------------------------------------------------------------
    def _plot_rect(self) -> QRectF:
        metrics = QFontMetricsF(self.font())
        label_w = max((metrics.horizontalAdvance(t) for t in self.labels), default=0.0)
        left = _PAD + min(label_w, self.width() * 0.3) + 2 * _PAD  # elided to label_w
        top = _PAD * 2 + metrics.height() * 2  # title, legend
        bottom = self.height() - _PAD - metrics.height()  # axis
        return QRectF(left, top, max(self.width() - left - _PAD * 2, 10.0), bottom - top)

    def _scale(self) -> tuple[float, np.ndarray]:
        top = float(self.values.sum(axis=1).max()) if len(self.values) else 0.0
        if self.chart.log:
            ends = np.cumsum(self.values, axis=1)
            positive = ends[ends > 0]
            lo = 10.0 ** np.floor(np.log10(positive.min())) if len(positive) else 1.0
            hi = 10.0 ** np.ceil(np.log10(max(top, lo * 10)))
            self._log_lo = lo
            return hi, 10.0 ** np.arange(np.log10(lo), np.log10(hi) + 0.5)
        ticks = nice_ticks(top)
        return float(ticks[-1]) or 1.0, ticks

    def _fraction(self, value: float, top: float) -> float:
        """Where `value` sits along the axis, 0-1 (its log between the decades when log)."""
        if not self.chart.log:
            return value / top
        lo = getattr(self, "_log_lo", 1.0)
        if value <= lo:
            return 0.0
        return float(np.log10(value / lo) / np.log10(top / lo))

    def _bar_at(self, pos: QPointF) -> int:
        plot = self._plot_rect()
        if not plot.top() <= pos.y() <= plot.bottom():
            return -1
        row = int((pos.y() - plot.top()) // (_BAR + _GAP))
        return row if 0 <= row < len(self.labels) else -1

    # --- painting ---------------------------------------------------------------------------
    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, p: QPainter) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        metrics = QFontMetricsF(self.font())
        text = self.palette().color(QPalette.ColorRole.WindowText)
        line = metrics.height()
        p.setPen(text)
        p.drawText(QPointF(_PAD, _PAD + metrics.ascent()), self.chart.title)
        x = _PAD
        for name, colour in zip(self.names, self.colours, strict=True):  # the legend
            if colour.alpha() == 0:
                continue  # an invisible lead-in (a log strip's "under min") needs no swatch
            y = _PAD + line + _PAD / 2
            p.fillRect(QRectF(x, y + (line - _SWATCH) / 2, _SWATCH, _SWATCH), colour)
            p.drawText(QPointF(x + _SWATCH + 4, y + metrics.ascent()), name)
            x += _SWATCH + 4 + metrics.horizontalAdvance(name) + _PAD * 2
        plot = self._plot_rect()
        top, ticks = self._scale()
        grid = QPen(QColor(0, 0, 0, 30))
        for tick in ticks:  # the axis under the bars
            tx = plot.left() + plot.width() * self._fraction(float(tick), top)
            p.setPen(grid)
            p.drawLine(QPointF(tx, plot.top()), QPointF(tx, plot.bottom()))
            p.setPen(text)
            label = format_ns(int(tick)) if tick else "0"
            w = metrics.horizontalAdvance(label)
            p.drawText(
                QPointF(
                    min(tx - w / 2, self.width() - w - 2), plot.bottom() + metrics.ascent() + 2
                ),
                label,
            )
        for row, name in enumerate(self.labels):
            y = plot.top() + row * (_BAR + _GAP)
            p.setPen(text)
            elided = metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, plot.left() - 3 * _PAD)
            p.drawText(
                QRectF(_PAD, y, plot.left() - 2 * _PAD, _BAR),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                elided,
            )
            x, end = plot.left(), 0.0
            for value, colour in zip(self.values[row], self.colours, strict=True):
                end += float(value)
                right = plot.left() + plot.width() * self._fraction(end, top)
                p.fillRect(QRectF(x, y, right - x, _BAR), colour)
                x = right
            if row == self._selected:
                p.setPen(QPen(QColor(0, 90, 200), 2.0))
                p.drawRect(QRectF(plot.left(), y, x - plot.left(), _BAR))

    # --- interaction --------------------------------------------------------------------------
    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            assert isinstance(e, QHelpEvent)
            row = self._bar_at(QPointF(e.pos()))
            if row < 0:
                QToolTip.hideText()
            else:
                if self.chart.rising:  # the marks themselves: min, median, p95…
                    marks = np.cumsum(self.values[row])
                    parts = "<br>".join(
                        f"{column.removesuffix('_ns')}: {format_ns(int(v))}"
                        for (column, _n, _c), v in zip(self.chart.parts, marks, strict=False)
                    )
                else:
                    parts = "<br>".join(
                        f"{name}: {format_ns(int(v))}"
                        for name, v in zip(self.names, self.values[row], strict=True)
                    )
                extra = f"<br>{self.hover[row]}" if self.hover and self.hover[row] else ""
                QToolTip.showText(
                    e.globalPos(), f"<b>{self.labels[row]}</b><br>{parts}{extra}", self
                )
            return True
        return super().event(e)

    def mousePressEvent(self, e: QMouseEvent) -> None:
        row = self._bar_at(e.position())
        if row >= 0 and e.button() == Qt.MouseButton.LeftButton:
            self.set_selected(row)
            self.bar_clicked.emit(row)
        super().mousePressEvent(e)


__all__ = ["MAX_BARS", "BarChartView", "segments"]
