"""An axis that draws what pyqtgraph's `AxisItem` draws, in a fraction of its time.

A horizontal drag changes the x range every frame, and pyqtgraph then lays its axes out
afresh: a job's time axis spent ~2.4 ms of each 10-17 ms frame there, most of it in Python
per tick (two `Point`s, a pen and a `drawLine` for each of ~76 ticks) and in measuring each
label again with the painter. `QuickAxis` keeps pyqtgraph's rules (tick levels, which labels
fit, where they sit, the pens) and its draw specs' shape, but computes the ticks' places with
numpy, draws each level's ticks in one `drawLines`, and remembers each label's size for the
font. `tests/qt/test_quick_axis.py` pins its specs and pixels to pyqtgraph's.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import QtCore, QtGui

_TEXT_SIZES_KEPT = 4096  # labels' sizes remembered per axis, then forgotten all at once
_MEASURE_IN = QtCore.QRectF(0, 0, 100, 100)  # where pyqtgraph measures a label

Lines = list[QtCore.QLineF]


class QuickAxis(pg.AxisItem):
    """`pg.AxisItem`, with its draw specs made and drawn in bulk (see the module's note).

    Its `generateDrawSpecs` returns pyqtgraph's three parts, but the tick part holds one
    (pen, lines) pair per tick level instead of one (pen, start, end) triple per tick; an
    axis with a grid or stopped at its ticks is made by pyqtgraph's own code."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        self._label_html: str | None = None  # what the title was last set to
        super().__init__(orientation, **kwargs)
        self._text_sizes: dict[tuple[str, str], tuple[float, float]] = {}

    def _updateLabel(self) -> None:
        """pyqtgraph sets the title's HTML again on every change of range (for its SI
        prefix), laying the text out afresh each frame of a drag: here only when it differs."""
        html = self.labelString()
        if html != self._label_html:
            self._label_html = html
            self.label.setHtml(html)
            self._adjustSize()
        self.picture = None
        self.update()

    def _text_size(self, painter: QtGui.QPainter, font_key: str, text: str) -> tuple[float, float]:
        """A label's width and height as pyqtgraph counts them (its height × 0.8)."""
        size = self._text_sizes.get((font_key, text))
        if size is None:
            if len(self._text_sizes) >= _TEXT_SIZES_KEPT:
                self._text_sizes.clear()
            rect = painter.boundingRect(_MEASURE_IN, QtCore.Qt.AlignmentFlag.AlignCenter, text)
            size = (rect.width(), rect.height() * 0.8)
            self._text_sizes[(font_key, text)] = size
        return size

    def generateDrawSpecs(self, p: QtGui.QPainter) -> Any:
        if self.grid is not False or any(self.style["stopAxisAtTick"]):
            return super().generateDrawSpecs(p)
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        span, tick_start, tick_stop, tick_dir, axis = _frame(self.orientation, bounds)
        ends = [self.mapToDevice(point) for point in span]
        if ends[0] is None or ends[1] is None:
            return None
        along_device = ends[1] - ends[0]
        length_px = math.hypot(along_device.x(), along_device.y())
        if length_px == 0:
            return None

        levels, fixed_strings = self._levels(length_px)
        lo, hi = self.range
        dif = hi - lo
        if dif == 0:
            scale, offset = 1.0, 0.0
        elif axis == 0:
            scale = -bounds.height() / dif
            offset = lo * scale - bounds.height()
        else:
            scale = bounds.width() / dif
            offset = lo * scale
        ends_x = (lo * scale - offset, hi * scale - offset)
        x_min, x_max = min(ends_x), max(ends_x)

        base_pen = self.tickPen()
        positions: list[tuple[np.ndarray, np.ndarray]] = []  # each level's ticks in range: (i, x)
        tick_specs: list[tuple[QtGui.QPen, Lines]] = []
        for i, (_spacing, values) in enumerate(levels):
            x = np.asarray(values, dtype=np.float64) * scale - offset
            inside = np.flatnonzero((x >= x_min) & (x <= x_max))  # pyqtgraph's bounds test
            positions.append((inside, x[inside]))
            length = self.style["tickLength"] / (i * 0.5 + 1.0)
            tip = tick_stop + length * tick_dir
            shown = x[inside].tolist()
            if axis == 1:
                lines = [QtCore.QLineF(v, tick_start, v, tip) for v in shown]
            else:
                lines = [QtCore.QLineF(tick_start, v, tip, v) for v in shown]
            if lines:
                tick_specs.append((self._level_pen(base_pen, i), lines))

        axis_spec = (self.pen(), span[0], span[1])
        if not self.style["showValues"]:
            return axis_spec, tick_specs, []
        text_specs, last_size2 = self._texts(
            p, levels, fixed_strings, positions, tick_stop, axis, length_px
        )
        self._updateMaxTextSize(last_size2)
        return axis_spec, tick_specs, text_specs

    def tickValues(self, minVal: float, maxVal: float, size: float) -> Any:
        """pyqtgraph's tick values, a finer level dropping the ticks a coarser one has: the
        same sums, with the nearness test written out (`np.isclose` with `rtol=0` is this
        test, for finite values, at a tenth of its cost)."""
        lo, hi = sorted((minVal, maxVal))
        lo, hi = lo * self.scale, hi * self.scale
        ticks = []
        seen = np.empty(0)
        for spacing, offset in self.tickSpacing(lo, hi, size):
            start = math.ceil((lo - offset) / spacing) * spacing + offset
            count = int((hi - start) / spacing) + 1
            values = (np.arange(count) * spacing + start) / self.scale
            if len(seen) and len(values):
                near = np.abs(seen - values[:, np.newaxis]) <= spacing / self.scale * 0.01
                values = values[~near.any(axis=-1)]
            seen = np.concatenate([seen, values])
            ticks.append((spacing / self.scale, values.tolist()))
        if self.logMode:
            return self.logTickValues(lo, hi, size, ticks)
        return ticks

    def _levels(
        self, length_px: float
    ) -> tuple[list[tuple[Any, list[float]]], list[list[str]] | None]:
        """The tick levels (spacing, values), and their strings where the ticks were set."""
        if self._tickLevels is None:
            return self.tickValues(self.range[0], self.range[1], length_px), None
        levels = [(None, [v for v, _s in level]) for level in self._tickLevels]
        return levels, [[s for _v, s in level] for level in self._tickLevels]

    def _level_pen(self, pen: QtGui.QPen, level: int) -> QtGui.QPen:
        """The tick pen of a level, faded as pyqtgraph fades it (`generateDrawSpecs`)."""
        alpha = self.style["tickAlpha"]
        if alpha is None:
            alpha = 255 / (level + 1)
        elif isinstance(alpha, float):
            alpha = min(255, max(0, round(alpha * 255)))
        if pen.brush().style() == QtCore.Qt.BrushStyle.SolidPattern:
            pen = QtGui.QPen(pen)
            color = QtGui.QColor(pen.color())
            color.setAlpha(int(alpha))
            pen.setColor(color)
        return pen

    def _texts(
        self,
        p: QtGui.QPainter,
        levels: list[tuple[Any, list[float]]],
        fixed_strings: list[list[str]] | None,
        positions: list[tuple[np.ndarray, np.ndarray]],
        tick_stop: float,
        axis: int,
        length_px: float,
    ) -> tuple[list[tuple[QtCore.QRectF, Any, str]], float]:
        """The labels that fit, level by level, by pyqtgraph's rules: the first level always,
        a finer one only while the labels so far fill less than `textFillLimits` allow."""
        device = p.device()  # a picture and an image measure a font differently
        font_key = (
            f"{p.font().key()}@{device.logicalDpiX()}x{device.logicalDpiY()}"
            if device
            else p.font().key()
        )
        along: list[float] = []  # every label measured so far, all levels: its length
        across: list[float] = []  # and its size across the axis
        text_specs: list[tuple[QtCore.QRectF, Any, str]] = []
        last_size2 = 0.0
        room = self.boundingRect()
        gap = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][axis]
        flags = _ALIGN[self.orientation] | QtCore.Qt.TextFlag.TextDontClip
        for i in range(min(len(levels), self.style["maxTextLevel"] + 1)):
            if fixed_strings is None:
                spacing, values = levels[i]
                strings = self.tickStrings(values, self.autoSIPrefixScale * self.scale, spacing)
            else:
                strings = fixed_strings[i]
            if len(strings) == 0:
                continue
            shown, places = positions[i][0].tolist(), positions[i][1].tolist()
            level_sizes = {j: self._text_size(p, font_key, strings[j]) for j in shown}
            for w, h in level_sizes.values():
                along.append(w if axis == 1 else h)
                across.append(h if axis == 1 else w)
            fill = float(np.sum(along)) if along else 0.0  # as pyqtgraph sums them
            size2 = max(across, default=0.0)
            if i > 0 and any(
                len(text_specs) >= n and fill / length_px >= limit
                for n, limit in self.style["textFillLimits"]
            ):
                break
            last_size2 = size2
            for j, place in zip(shown, places, strict=True):
                width, height = level_sizes[j]
                rect = _label_rect(self.orientation, place, tick_stop, gap, width, height)
                if room & rect != rect:
                    continue
                text_specs.append((rect, flags, strings[j]))
        return text_specs, last_size2

    def drawPicture(self, p: QtGui.QPainter, axisSpec: Any, tickSpecs: Any, textSpecs: Any) -> None:
        if tickSpecs and not isinstance(tickSpecs[0][1], list):
            super().drawPicture(p, axisSpec, tickSpecs, textSpecs)  # pyqtgraph's own specs
            return
        p.setRenderHint(p.RenderHint.Antialiasing, False)
        p.setRenderHint(p.RenderHint.TextAntialiasing, True)
        pen, start, end = axisSpec
        p.setPen(pen)
        p.drawLine(start, end)
        for pen, lines in tickSpecs:
            p.setPen(pen)
            p.drawLines(lines)
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        p.setClipRect(self.boundingRect().toAlignedRect())
        for rect, flags, text in textSpecs:
            p.drawText(rect, int(flags), text)


def quick_plot(
    axes: Mapping[str, pg.AxisItem] | None = None,
    shown: Collection[str] | None = None,
    **plot_options: Any,
) -> pg.PlotWidget:
    """A plot whose every side is a `QuickAxis` (or the axis given in `axes`), showing only
    the sides in `shown` (default: those of `axes`). pyqtgraph tells its hidden axes of every
    range change too, so a plain one there costs each frame what a shown one did; and it shows
    every axis it is given, so the sides not shown are hidden here, once."""
    given = dict(axes or {})
    every = {
        side: given[side] if side in given else QuickAxis(side)
        for side in ("left", "bottom", "right", "top")
    }
    plot = pg.PlotWidget(axisItems=every, **plot_options)
    for side in every:
        plot.getPlotItem().showAxis(side, side in (given if shown is None else shown))
    return plot


_A = QtCore.Qt.AlignmentFlag
_ALIGN = {
    "left": _A.AlignRight | _A.AlignVCenter,
    "right": _A.AlignLeft | _A.AlignVCenter,
    "top": _A.AlignHCenter | _A.AlignBottom,
    "bottom": _A.AlignHCenter | _A.AlignTop,
}


def _frame(
    orientation: str, bounds: QtCore.QRectF
) -> tuple[tuple[QtCore.QPointF, QtCore.QPointF], float, float, int, int]:
    """The axis line's ends, where ticks start and stop, their direction and the axis
    (0: vertical, 1: horizontal), as pyqtgraph places them for an axis without a grid."""
    P = QtCore.QPointF
    if orientation == "left":
        span = (bounds.topRight() + P(-1, -1), bounds.bottomRight() + P(-1, 1))
        return span, bounds.right(), bounds.right(), -1, 0
    if orientation == "right":
        span = (bounds.topLeft() + P(1, -1), bounds.bottomLeft() + P(1, 1))
        return span, bounds.left(), bounds.left(), 1, 0
    if orientation == "top":
        span = (bounds.bottomLeft() + P(-1, -1), bounds.bottomRight() + P(1, -1))
        return span, bounds.bottom(), bounds.bottom(), -1, 1
    span = (bounds.topLeft() + P(-1, 1), bounds.topRight() + P(1, 1))
    return span, bounds.top(), bounds.top(), 1, 1


def _label_rect(
    orientation: str, x: float, tick_stop: float, gap: float, width: float, height: float
) -> QtCore.QRectF:
    """Where a label sits beside its tick at `x`, as pyqtgraph places it."""
    if orientation == "left":
        return QtCore.QRectF(tick_stop - gap - width, x - height / 2, width, height)
    if orientation == "right":
        return QtCore.QRectF(tick_stop + gap, x - height / 2, width, height)
    if orientation == "top":
        return QtCore.QRectF(x - width / 2.0, tick_stop - gap - height, width, height)
    return QtCore.QRectF(x - width / 2.0, tick_stop + gap, width, height)


__all__ = ["QuickAxis", "quick_plot"]
