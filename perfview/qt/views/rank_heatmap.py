"""Rank × step heat map: one cell per (rank, ProfilerStep), coloured by the step's duration.

A straggler shows as a row that is hot in many columns; a slow step of the whole job as a hot
column. Built from `core.analysis.torch.job.heatmap` (a small pivot table), never from events.
Hovering a cell shows its rank, step and value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from perfview.core.model.units import format_ns


class RankHeatmap(QWidget):
    """Heat map of a rank × step table (index: ranks, columns: steps, values: ns)."""

    def __init__(self, matrix: pd.DataFrame, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matrix = matrix
        self.values = matrix.to_numpy(dtype=np.float64) if matrix.size else np.zeros((0, 0))
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
        return (
            f"<b>{title}</b>: {self.values.shape[0]} ranks × {self.values.shape[1]} steps, "
            f"from {format_ns(lo)} (dark) to {format_ns(hi)} (bright yellow)."
        )

    def _draw(self) -> None:
        if not self.values.size:
            return
        values = np.where(np.isfinite(self.values), self.values, np.nan)
        lo, hi = np.nanmin(values), np.nanmax(values)
        self.image.setImage(np.nan_to_num(values, nan=lo), levels=(lo, hi if hi > lo else lo + 1))
        self.image.setColorMap(pg.colormap.get("inferno"))  # dark = fast, bright = slow
        ranks = [int(r) for r in self.matrix.index]
        steps = [int(s) for s in self.matrix.columns]
        every_r = max(1, len(ranks) // 16)
        every_s = max(1, len(steps) // 12)
        left = [(i + 0.5, str(r)) for i, r in enumerate(ranks) if i % every_r == 0]
        bottom = [(i + 0.5, str(s)) for i, s in enumerate(steps) if i % every_s == 0]
        self.plot.getAxis("left").setTicks([left])
        self.plot.getAxis("bottom").setTicks([bottom])

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
