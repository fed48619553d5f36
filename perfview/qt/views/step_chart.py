"""The stacked step-breakdown chart the Overview shows, one bar per step (or per stand-in
step of a recording without steps), one fixed colour per category.

Painted with QPainter rather than built from a pyqtgraph plot: it is a static picture (no zoom
or pan), and a pyqtgraph PlotWidget with its bars and legend cost 30-40 ms of GUI-thread set-up
in the first second of every torch trace's open, the longest pieces left there. This widget is
built in well under a millisecond and paints in one or two. The legend sits above the bars
(never over them), and hovering a bar shows its step's breakdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from PySide6.QtCore import QEvent, QPointF, QRectF
from PySide6.QtGui import QColor, QFontMetricsF, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from perfview.core.analysis.torch import overview
from perfview.core.model.units import format_ns

# Fixed colours per category so the chart reads the same in every trace (GPU work in cool
# tones, CPU-side causes of idle GPU in warm ones, `other` grey).
BREAKDOWN_COLORS = {
    "comm": "#b07aa1",
    "kernel": "#4e79a7",
    "memcpy": "#76b7b2",
    "memset": "#59a14f",
    "runtime": "#e15759",
    "dataloader": "#f28e2b",
    "cpu_exec": "#edc948",
    "other": "#bab0ac",
}
BREAKDOWN_LABELS = {
    "comm": "Communication",
    "kernel": "Kernel",
    "memcpy": "Memcpy",
    "memset": "Memset",
    "runtime": "Runtime",
    "dataloader": "DataLoader",
    "cpu_exec": "CPU exec",
    "other": "Other",
}
_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_PAD, _SWATCH, _TICK = 8.0, 10.0, 4.0


def nice_ticks(top: float, count: int = 5) -> np.ndarray:
    """Round tick values (1, 2 or 5 times a power of ten) from 0 up to at least `top`."""
    if not top > 0:
        return np.array([0.0, 1.0])
    raw = top / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)
    return np.arange(0.0, top + step * 0.999, step)


class StepBreakdownChart(QWidget):
    """Stacked bars, one per step, one colour per BREAKDOWN category (time on the y axis).

    `heights[name]` holds each step's time in that category (ns), `labels` the bars' names
    (`#N` for ProfilerStep N unless given) and `legend_names` the categories present."""

    def __init__(
        self,
        steps: pd.DataFrame,
        parent: QWidget | None = None,
        *,
        labels: Sequence[str] | None = None,
        x_title: str = "ProfilerStep",
    ) -> None:
        super().__init__(parent)
        self.heights = {
            name: steps[f"{name}_ns"].to_numpy(dtype=np.float64) for name in overview.BREAKDOWN
        }
        self.labels = (
            [str(s) for s in labels]
            if labels is not None
            else [f"#{int(s)}" for s in steps["step"].to_numpy()]
        )
        self.x_title = x_title
        present = [name for name, h in self.heights.items() if h.sum() > 0]
        self.legend_names = present or list(self.heights)
        self._totals = sum(self.heights.values(), np.zeros(len(self.labels)))
        self._plot = QRectF()
        self.setMinimumHeight(260)
        self.setMouseTracking(True)

    # --- geometry ------------------------------------------------------------------------------
    def _unit(self) -> tuple[float, str]:
        top = float(self._totals.max()) if len(self._totals) else 0.0
        return next(((s, u) for s, u in _UNITS if top >= s), _UNITS[-1])

    def _legend_rows(self, fm: QFontMetricsF, width: float) -> list[list[str]]:
        rows: list[list[str]] = [[]]
        used = 0.0
        for name in self.legend_names:
            need = _SWATCH + 4 + fm.horizontalAdvance(BREAKDOWN_LABELS[name]) + 14
            if rows[-1] and used + need > width:
                rows.append([])
                used = 0.0
            rows[-1].append(name)
            used += need
        return rows

    def _bar_at(self, x: float) -> int | None:
        n = len(self.labels)
        if not n or not self._plot.left() <= x <= self._plot.right():
            return None
        i = int((x - self._plot.left()) / self._plot.width() * n)
        return min(i, n - 1)

    # --- painting ----------------------------------------------------------------------------
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
        fm = QFontMetricsF(self.font())
        line = fm.height()
        rows = self._legend_rows(fm, self.width() - 2 * _PAD)
        self._paint_legend(painter, rows, fm, text)
        scale, unit = self._unit()
        ticks = nice_ticks(float(self._totals.max()) / scale if len(self._totals) else 0.0)
        tick_text = [f"{t:g}" for t in ticks]
        left = _PAD + line + 4 + max(fm.horizontalAdvance(s) for s in tick_text) + _TICK + 2
        top = _PAD + len(rows) * (line + 2) + 6
        bottom = self.height() - 2 * line - 10  # room for the x axis' labels and title
        self._plot = QRectF(left, top, self.width() - left - _PAD, bottom - top)
        if self._plot.width() <= 10 or self._plot.height() <= 10:
            return
        self._paint_y_axis(painter, ticks, tick_text, scale, unit, fm, text)
        self._paint_bars(painter, ticks[-1] * scale)
        self._paint_x_axis(painter, fm, text)

    def _paint_legend(
        self, painter: QPainter, rows: list[list[str]], fm: QFontMetricsF, text: QColor
    ) -> None:
        line = fm.height()
        for r, names in enumerate(rows):
            widths = [_SWATCH + 4 + fm.horizontalAdvance(BREAKDOWN_LABELS[n]) + 14 for n in names]
            x = self.width() - _PAD - sum(widths) + 14  # right-aligned, like the plot's corner
            y = _PAD + r * (line + 2)
            for name, w in zip(names, widths, strict=True):
                swatch = QRectF(x, y + (line - _SWATCH) / 2, _SWATCH, _SWATCH)
                painter.fillRect(swatch, QColor(BREAKDOWN_COLORS[name]))
                painter.setPen(text)
                painter.drawText(QPointF(x + _SWATCH + 4, y + fm.ascent()), BREAKDOWN_LABELS[name])
                x += w

    def _paint_y_axis(
        self,
        painter: QPainter,
        ticks: np.ndarray,
        tick_text: list[str],
        scale: float,
        unit: str,
        fm: QFontMetricsF,
        text: QColor,
    ) -> None:
        plot, y_top = self._plot, float(ticks[-1])
        grid = QColor(text)
        grid.setAlpha(40)
        for value, label in zip(ticks, tick_text, strict=True):
            y = plot.bottom() - plot.height() * float(value) / y_top
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.setPen(text)
            painter.drawLine(QPointF(plot.left() - _TICK, y), QPointF(plot.left(), y))
            w = fm.horizontalAdvance(label)
            painter.drawText(QPointF(plot.left() - _TICK - 3 - w, y + fm.ascent() / 2 - 1), label)
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        painter.save()
        title = f"step time ({unit})"
        painter.translate(_PAD + fm.ascent(), plot.center().y() + fm.horizontalAdvance(title) / 2)
        painter.rotate(-90)
        painter.drawText(QPointF(0, 0), title)
        painter.restore()

    def _paint_bars(self, painter: QPainter, y_top_ns: float) -> None:
        """One bar per step; more steps than pixels share a column, drawn as their mean."""
        plot, n = self._plot, len(self.labels)
        if not n or y_top_ns <= 0:
            return
        cols = min(n, max(1, int(plot.width())))
        column = np.arange(n) * cols // n
        counts = np.bincount(column, minlength=cols)
        slot = plot.width() / cols
        width = max(slot * 0.7, 1.0)
        per_ns = plot.height() / y_top_ns
        lefts = plot.left() + (np.arange(cols) + 0.5) * slot - width / 2
        bottom = np.zeros(cols)
        for name, steps in self.heights.items():
            height = np.bincount(column, weights=steps, minlength=cols) / counts
            color = QColor(BREAKDOWN_COLORS[name])
            for i in np.flatnonzero(height > 0):
                y0 = plot.bottom() - (bottom[i] + height[i]) * per_ns
                painter.fillRect(QRectF(lefts[i], y0, width, height[i] * per_ns), color)
            bottom += height

    def _paint_x_axis(self, painter: QPainter, fm: QFontMetricsF, text: QColor) -> None:
        plot, n = self._plot, len(self.labels)
        painter.setPen(text)
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        if n:
            slot = plot.width() / n
            widest = max(fm.horizontalAdvance(s) for s in self.labels) + 8
            every = max(1, math.ceil(widest / slot))  # labels never overlap
            for i in range(0, n, every):
                x = plot.left() + (i + 0.5) * slot
                label = self.labels[i]
                painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + _TICK))
                w = fm.horizontalAdvance(label)
                painter.drawText(QPointF(x - w / 2, plot.bottom() + _TICK + fm.ascent()), label)
        w = fm.horizontalAdvance(self.x_title)
        baseline = plot.bottom() + _TICK + fm.height() + 4 + fm.ascent()
        painter.drawText(QPointF(plot.center().x() - w / 2, baseline), self.x_title)

    # --- hover ---------------------------------------------------------------------------------
    def bar_tooltip(self, i: int) -> str:
        """One step's breakdown: its total, then each category present with its share."""
        total = float(self._totals[i])
        lines = [f"<b>{self.labels[i]}</b>: {format_ns(total)}"]
        for name, height in self.heights.items():
            if height[i] > 0:
                pct = height[i] * 100.0 / total if total > 0 else 0.0
                lines.append(
                    f"{BREAKDOWN_LABELS[name]}: {format_ns(float(height[i]))} ({pct:.1f} %)"
                )
        return "<br>".join(lines)

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            i = self._bar_at(float(e.pos().x()))
            if i is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(e.globalPos(), self.bar_tooltip(i), self)
            return True
        return super().event(e)


__all__ = ["BREAKDOWN_COLORS", "BREAKDOWN_LABELS", "StepBreakdownChart", "nice_ticks"]
