"""Mean step time over a log directory's spans and runs: did my change help?

One point per span (a schedule cycle's file), in the order the spans started, one colour per
run, points of the same run and worker joined by a line; hovering a point names its span.
Painted with QPainter like the Overview's step chart (`step_chart.py`): a static picture,
cheap to build, no pyqtgraph set-up on the GUI thread.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from perfview.core.model.units import format_ns
from perfview.qt.views.step_chart import nice_ticks

RUN_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948")
_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_PAD, _RADIUS = 8.0, 4.0


class SpanTrend(QWidget):
    """Mean step time per span (y) over the spans in start order (x), coloured by run.

    `table` is a log directory's runs table (`perfview.core.model.logdir.LogDir.table`)."""

    def __init__(self, table: pd.DataFrame, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(180)
        self.setMouseTracking(True)
        self._points: list[QPointF] = []
        self.set_table(table)

    def set_table(self, table: pd.DataFrame) -> None:
        """Show `table` (a live log directory grows): spans with a step time, by start."""
        shown = table[table["steps"] > 0].sort_values(["started_ns", "run", "worker"])
        self.frame = shown.reset_index(drop=True)
        runs = list(dict.fromkeys(self.frame["run"]))
        self.colors = {run: QColor(RUN_COLORS[i % len(RUN_COLORS)]) for i, run in enumerate(runs)}
        self.values = self.frame["step_mean_ns"].to_numpy(dtype=np.float64)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:  # ended here, not when the frame goes: a profiler may hold on to the frame
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.Text)
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = QFontMetricsF(self.font())
        line = fm.height()
        painter.setPen(text)
        painter.drawText(QPointF(_PAD, _PAD + fm.ascent()), "Mean step time per span")
        x = _PAD + fm.horizontalAdvance("Mean step time per span") + 16
        for run, color in self.colors.items():  # the legend: one swatch per run
            painter.fillRect(QRectF(x, _PAD + 2, 10, 10), color)
            painter.drawText(QPointF(x + 14, _PAD + fm.ascent()), run)
            x += 14 + fm.horizontalAdvance(run) + 14
        top_value = float(np.nanmax(self.values)) if len(self.values) else 0.0
        scale, unit = next(((s, u) for s, u in _UNITS if top_value >= s), _UNITS[-1])
        ticks = nice_ticks(top_value / scale)
        labels = [f"{t:g} {unit}" for t in ticks]
        left = _PAD + max(fm.horizontalAdvance(s) for s in labels) + 6
        plot = QRectF(left, _PAD + line + 10, self.width() - left - _PAD, 0)
        plot.setBottom(self.height() - line - 12)
        self._points = []
        if plot.width() <= 10 or plot.height() <= 10:
            return
        span_top = float(ticks[-1]) * scale or 1.0
        grid = QPen(palette.color(QPalette.ColorRole.Mid))
        for tick, label in zip(ticks, labels, strict=True):
            y = plot.bottom() - plot.height() * tick * scale / span_top
            painter.setPen(grid)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(text)
            painter.drawText(QPointF(_PAD, y + fm.ascent() / 2 - 1), label)
        n = len(self.values)
        step = plot.width() / max(n, 1)
        for i, value in enumerate(self.values):
            px = plot.left() + step * (i + 0.5)
            self._points.append(QPointF(px, plot.bottom() - plot.height() * value / span_top))
        self._paint_series(painter)
        painter.setPen(text)
        axis = "spans, in the order they started"
        painter.drawText(
            QRectF(plot.left(), plot.bottom() + 4, plot.width(), line),
            Qt.AlignmentFlag.AlignCenter,
            axis,
        )

    def _paint_series(self, painter: QPainter) -> None:
        for (run, _worker), rows in self.frame.groupby(["run", "worker"], sort=False):
            color = self.colors[str(run)]
            points = [self._points[i] for i in rows.index]
            painter.setPen(QPen(color, 1.5))
            for a, b in itertools.pairwise(points):
                painter.drawLine(a, b)
            painter.setBrush(color)
            for p in points:
                painter.drawEllipse(p, _RADIUS, _RADIUS)

    def point_at(self, pos: QPointF) -> int | None:
        """The span whose point is under `pos` (within a few pixels), else None."""
        for i, p in enumerate(self._points):
            if abs(p.x() - pos.x()) <= _RADIUS + 2 and abs(p.y() - pos.y()) <= _RADIUS + 2:
                return i
        return None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            i = self.point_at(QPointF(event.pos()))
            if i is None:
                QToolTip.hideText()
            else:
                row = self.frame.iloc[i]
                QToolTip.showText(
                    event.globalPos(),
                    f"{row['run']} · {row['worker']} · span {row['span']}\n"
                    f"{row['started']} UTC · {row['steps']} steps · "
                    f"mean {format_ns(float(row['step_mean_ns']))}",
                    self,
                )
            return True
        return super().event(event)


__all__ = ["SpanTrend"]
