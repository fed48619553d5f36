"""Plots for allocation captures (CUDA snapshots, memray): stacked memory by site, segment map.

`StackedBytesPlot` draws memory over time split into bands (one per allocation site, as
PyTorch's memory_viz colours its timeline), as one filled curve per band (its cumulative top
edge filled to zero, lower bands over higher): a dozen items however many allocations. An
optional region lets the user pick a time range (`range_selected`). `SegmentMap` draws the
CUDA allocator's segments as rows and their blocks as bars, one `BarGraphItem` per state.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from perfview.core.layout.extent import busy_start
from perfview.qt.items.labels import BytesAxis, TimeAxis
from perfview.qt.views.memory_view import _add_legend, _elide
from perfview.qt.widgets.plot_style import series_color, style_plot


class StackedBytesPlot(QWidget):
    """Stacked bands of bytes over x (ns when `time_axis`, else event index)."""

    range_selected = Signal(float, float)
    band_hovered = Signal(int)  # the band under the pointer, when it changes (-1: none)

    def __init__(
        self,
        x: np.ndarray,
        labels: list[str],
        bands: np.ndarray,
        *,
        time_axis: bool,
        title: str = "",
        selectable: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        axes = {"left": BytesAxis("left")}
        if time_axis:
            axes["bottom"] = TimeAxis("bottom")
        self.plot = pg.PlotWidget(axisItems=axes)
        style_plot(self.plot)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "time since first event" if time_axis else "allocation event #")
        item.setMouseEnabled(x=True, y=False)
        self.legend = _add_legend(self.plot)
        self.fills: list[pg.PlotCurveItem] = []
        self._x = np.zeros(0)
        self._tops = np.zeros((0, 0))  # each band's cumulative top edge at each x
        self._hovered = -1
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        self.samples: list[pg.PlotDataItem] = []
        self.region: pg.LinearRegionItem | None = None
        self.summary = QLabel(title)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)
        self.whole = QCheckBox("Show whole recording")
        self.whole.setToolTip(
            "The plot starts where memory use does; tick to show the empty time before it"
        )
        self.whole.toggled.connect(self._show_extent)
        self.extent: tuple[float, float] = (0.0, 1.0)
        self.start: float | None = None  # where the activity starts, when trimmed
        head = QHBoxLayout()
        head.addWidget(self.summary, 1)
        head.addWidget(self.whole, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(head)
        layout.addWidget(self.plot, 1)
        self.set_data(x, labels, bands)
        if selectable and len(x) > 1:
            lo, hi = self.start if self.start is not None else float(x[0]), float(x[-1])
            self.region = pg.LinearRegionItem(values=(lo, lo + (hi - lo) * 0.1))
            self.region.setZValue(20)
            self.region.sigRegionChangeFinished.connect(self._on_region)
            item.addItem(self.region)

    def set_data(self, x: np.ndarray, labels: list[str], bands: np.ndarray) -> None:
        """One filled curve per band: the band's top edge filled down to zero, lower bands
        drawn over higher ones. Filling to a level is the curve's own fast path; building a
        fill *between* two curves (FillBetweenItem) costs ~0.1 s per band on the GUI thread."""
        item = self.plot.getPlotItem()
        for old in self.fills:
            item.removeItem(old)
        self.fills = []
        self.samples = []
        self._x, self._tops = np.zeros(0), np.zeros((0, 0))
        self.legend.clear()
        if len(x) == 0 or len(bands) == 0:
            return
        x = np.asarray(x, dtype=np.float64)
        tops = np.cumsum(np.asarray(bands, dtype=np.float64), axis=0)
        self._x, self._tops = x, tops
        for i, upper in enumerate(tops):
            color = series_color(i)
            if i == len(bands) - 1 and len(bands) > 1:
                color = pg.mkColor("#bab0ac")
            pen = pg.mkPen(color.darker(120), width=1)
            brush = pg.mkBrush(color)
            curve = pg.PlotCurveItem(x, upper, pen=pen, fillLevel=0.0, brush=brush)
            curve.setZValue(len(tops) - i)  # the bottom band paints last, over the others
            item.addItem(curve)
            self.fills.append(curve)
            sample = pg.PlotDataItem([], [], pen=pen, fillLevel=0, fillBrush=brush)
            self.samples.append(sample)
            self.legend.addItem(sample, _elide(labels[i], 36))
        item.setYRange(0, float(tops[-1].max()) * 1.05 or 1.0, padding=0)
        self.extent = (float(x[0]), float(x[-1]))
        self.start = busy_start(x, tops[-1])
        self.whole.setVisible(self.start is not None)
        self._show_extent()

    def band_at(self, x: float, y: float) -> int:
        """The band drawn at data point (x, y): at the last sample at or before x, the lowest
        band whose top edge is above y (-1: outside the bands)."""
        if not len(self._x) or y < 0 or x < self._x[0] or x > self._x[-1]:
            return -1
        i = max(int(np.searchsorted(self._x, x, side="right")) - 1, 0)
        above = np.flatnonzero(self._tops[:, i] > y)
        return int(above[0]) if len(above) else -1

    def _on_move(self, pos: QPointF) -> None:
        """Say which band the pointer is over (`band_hovered`), once per change."""
        box = self.plot.getPlotItem().vb
        band = -1
        if box.sceneBoundingRect().contains(pos):
            point = box.mapSceneToView(pos)
            band = self.band_at(point.x(), point.y())
        if band != self._hovered:
            self._hovered = band
            self.band_hovered.emit(band)

    def _show_extent(self) -> None:
        """The trimmed view (from where memory use starts), or the whole recording."""
        lo, hi = self.extent
        if self.start is not None and not self.whole.isChecked():
            lo = self.start
        self.plot.getPlotItem().setXRange(lo, hi, padding=0.01)

    def _on_region(self) -> None:
        if self.region is not None:
            lo, hi = self.region.getRegion()
            self.range_selected.emit(float(lo), float(hi))


class SegmentMap(QWidget):
    """Each segment one row (largest at the top), each block a bar sized by its bytes."""

    def __init__(
        self,
        seg_rows: np.ndarray,
        offsets: np.ndarray,
        sizes: np.ndarray,
        used: np.ndarray,
        title: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(axisItems={"bottom": BytesAxis("bottom")})
        style_plot(self.plot)
        item = self.plot.getPlotItem()
        item.invertY(True)
        item.setLabel("bottom", "offset in segment")
        item.setLabel("left", "segment (largest first)")
        item.setMouseEnabled(x=True, y=True)
        self.bars: list[pg.BarGraphItem] = []
        for mask, color, name in ((used, "#4e79a7", "used"), (~used, "#d9d9d9", "free")):
            if not mask.any():
                continue
            bar = pg.BarGraphItem(
                x0=offsets[mask],
                y=seg_rows[mask],
                height=0.8,
                width=sizes[mask],
                brush=pg.mkBrush(color),
                pen=pg.mkPen("#555555", width=0.5),
                name=name,
            )
            item.addItem(bar)
            self.bars.append(bar)
        rows = int(seg_rows.max()) + 1 if len(seg_rows) else 1
        item.setYRange(-0.5, min(rows, 40) - 0.5, padding=0)
        label = QLabel(title)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(label)
        layout.addWidget(self.plot, 1)
