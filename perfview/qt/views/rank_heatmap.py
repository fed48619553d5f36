"""Rank × step heat map: one cell per (rank, ProfilerStep), coloured by the step's duration.

A straggler shows as a row that is hot in many columns; a slow step of the whole job as a hot
column. Built from `core.analysis.torch.job.heatmap` (a small pivot table), never from events.
Hovering a cell shows its rank, step and value; a small map writes each cell's value in it,
and a colour bar beside the map says what the colours span.

Scales (`heat_scale`, pure): step times are coloured by their difference from the median step
(blue faster, red slower, white the median), symmetric and never narrower than ±`MIN_SPREAD`:
a min-max scale painted a 3.9 % spread as black against bright yellow, as if one step took
forever. Lateness (0: on time) is coloured from 0 up, in time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from perfview.core.model.units import format_ns

MIN_SPREAD = 0.05  # ±5 % of the median: the narrowest relative scale
MAX_LABELLED_CELLS = 240  # cells that get their value written in them


def heat_scale(values: np.ndarray, relative: bool) -> tuple[np.ndarray, float, float]:
    """What the colours encode, and its (low, high) levels. `relative`: the % difference from
    the median of the finite values, symmetric around 0 and at least ±MIN_SPREAD; else the
    values as they are (ns), from 0 (or the lowest, if below) to the highest."""
    finite = values[np.isfinite(values)]
    if not finite.size:
        return np.zeros_like(values), 0.0, 1.0
    if relative:
        median = float(np.median(finite))
        shown = (values / median - 1.0) * 100.0 if median > 0 else values * 0.0
        half = max(float(np.nanmax(np.abs(shown[np.isfinite(shown)]))), MIN_SPREAD * 100.0)
        return shown, -half, half
    lo, hi = min(0.0, float(finite.min())), float(finite.max())
    return values, lo, hi if hi > lo else lo + 1.0


class RankHeatmap(QWidget):
    """Heat map of a rank × step table (index: ranks, columns: steps, values: ns).
    `relative`: coloured by the difference from the median (step times), else from 0."""

    def __init__(
        self,
        matrix: pd.DataFrame,
        title: str,
        parent: QWidget | None = None,
        *,
        relative: bool = False,
    ) -> None:
        super().__init__(parent)
        self.matrix = matrix
        self.relative = relative
        self.values = matrix.to_numpy(dtype=np.float64) if matrix.size else np.zeros((0, 0))
        self.shown, self.lo, self.hi = heat_scale(self.values, relative)
        self.label = QLabel(self._summary(title), self)
        self.label.setContentsMargins(8, 8, 8, 4)
        self.plot = pg.PlotWidget(parent=self, background="w")
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().invertY(True)
        self.plot.setLabel("bottom", "ProfilerStep")
        self.plot.setLabel("left", "rank")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self._draw()
        self.hover = QLabel(" ", self)
        self.hover.setContentsMargins(8, 2, 8, 6)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)

    def _summary(self, title: str) -> str:
        if not self.values.size:
            return f"<b>{title}</b>: no ProfilerStep in these traces."
        finite = self.values[np.isfinite(self.values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
        shape = f"{self.values.shape[0]} ranks × {self.values.shape[1]} steps"
        if self.relative and finite.size:
            median = float(np.median(finite))
            spread = (hi - lo) * 100.0 / median if median > 0 else 0.0
            return (
                f"<b>{title}</b>: {shape}, {format_ns(lo)} to {format_ns(hi)} "
                f"({spread:.1f} % of the median {format_ns(median)}); colour: the difference "
                f"from the median, ±{self.hi:.0f} % (blue faster, red slower)."
            )
        return f"<b>{title}</b>: {shape}, from {format_ns(lo)} to {format_ns(hi)}."

    def _draw(self) -> None:
        if not self.values.size:
            return
        shown = np.where(np.isfinite(self.shown), self.shown, np.nan)
        fill = 0.0 if self.relative else self.lo
        self.image.setImage(np.nan_to_num(shown, nan=fill), levels=(self.lo, self.hi))
        cmap = pg.colormap.get("CET-D1" if self.relative else "CET-L18")
        self.image.setColorMap(cmap)
        bar = pg.ColorBarItem(
            values=(self.lo, self.hi),
            colorMap=cmap,
            interactive=False,
            width=14,
            label="% vs median" if self.relative else "time",
        )
        bar.setImageItem(self.image, insert_in=self.plot.getPlotItem())
        if not self.relative:  # the bar's ticks in time units
            bar.axis.tickStrings = lambda values, _scale, _spacing: [  # type: ignore[method-assign]
                format_ns(v) for v in values
            ]
        self.colour_bar = bar
        ranks = [int(r) for r in self.matrix.index]
        steps = [int(s) for s in self.matrix.columns]
        every_r = max(1, len(ranks) // 16)
        every_s = max(1, len(steps) // 12)
        left = [(i + 0.5, str(r)) for i, r in enumerate(ranks) if i % every_r == 0]
        bottom = [(i + 0.5, str(s)) for i, s in enumerate(steps) if i % every_s == 0]
        self.plot.getAxis("left").setTicks([left])
        self.plot.getAxis("bottom").setTicks([bottom])
        self._label_cells()

    def _label_cells(self) -> None:
        """Each cell's value written in it, when the map is small enough to read them."""
        self.cell_labels: list[pg.TextItem] = []
        if self.values.size > MAX_LABELLED_CELLS:
            return
        for i, j in np.ndindex(self.values.shape):
            value = float(self.values[i, j])
            if not np.isfinite(value):
                continue
            level = (float(self.shown[i, j]) - self.lo) / (self.hi - self.lo)
            dark = level > 0.75 or (self.relative and abs(level - 0.5) > 0.4)
            colour = (255, 255, 255) if dark else (20, 20, 24)  # readable on its cell
            text = pg.TextItem(format_ns(value), color=colour, anchor=(0.5, 0.5))
            text.setPos(j + 0.5, i + 0.5)
            self.plot.addItem(text)
            self.cell_labels.append(text)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(rank, step) of the cell at view coordinates, or None outside the map."""
        i, j = int(np.floor(y)), int(np.floor(x))
        if 0 <= i < self.values.shape[0] and 0 <= j < self.values.shape[1]:
            return int(self.matrix.index[i]), int(self.matrix.columns[j])
        return None

    def _on_move(self, pos: QPointF) -> None:
        point = self.plot.getViewBox().mapSceneToView(pos)
        cell = self.cell_at(point.x(), point.y())
        if cell is None:
            self.hover.setText(" ")
            return
        i, j = int(np.floor(point.y())), int(np.floor(point.x()))
        value = float(self.values[i, j])
        shown = format_ns(value) if np.isfinite(value) else "no such step"
        self.hover.setText(f"rank {cell[0]}, ProfilerStep#{cell[1]}: {shown}")


__all__ = ["RankHeatmap"]
