"""The stacked step-breakdown chart the Overview shows, one bar per step (or per stand-in
step of a recording without steps), one fixed colour per category."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from perfview.core.analysis.torch import overview
from perfview.qt.widgets.plot_style import style_plot

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


class StepBreakdownChart(pg.PlotWidget):
    """Stacked bars, one per step, one colour per BREAKDOWN category (ms on the y axis)."""

    def __init__(
        self, steps: pd.DataFrame, parent: QWidget | None = None, *, fill: bool = True
    ) -> None:
        super().__init__(parent)
        style_plot(self)
        self.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        item = self.getPlotItem()
        item.setLabel("left", "step time", units="s")
        item.setLabel("bottom", "ProfilerStep")
        self.bars: dict[str, pg.BarGraphItem] = {}
        self.legend: pg.LegendItem | None = None
        self.setMinimumHeight(260)
        if fill:
            self.add_bars(steps)
            self.add_legend()

    def add_bars(self, steps: pd.DataFrame) -> None:
        """The stacked bars and the axes' ranges (`fill=False` leaves this to the caller, so
        that the plot's set-up, its bars and its legend can run on separate event-loop turns:
        ~10 ms of GUI-thread work each)."""
        item = self.getPlotItem()
        x = steps["step"].to_numpy(dtype=np.float64)
        bottom = np.zeros(len(steps), dtype=np.float64)
        for name in overview.BREAKDOWN:
            height = steps[f"{name}_ns"].to_numpy(dtype=np.float64) / 1e9
            color = QColor(BREAKDOWN_COLORS[name])
            bar = pg.BarGraphItem(
                x=x, y0=bottom.copy(), height=height, width=0.7, brush=color, pen=pg.mkPen(None)
            )
            item.addItem(bar)
            self.bars[name] = bar
            bottom += height
        if len(x):
            item.getAxis("bottom").setTicks([[(float(s), f"#{int(s)}") for s in x]])
            item.setXRange(float(x.min()) - 0.6, float(x.max()) + 0.6, padding=0)
            item.setYRange(0, float(bottom.max()) * 1.35 or 1.0, padding=0)

    def add_legend(self) -> None:
        """The legend of the bars `add_bars` drew."""
        self.legend = self.getPlotItem().addLegend(offset=(-10, 10), colCount=4)
        for name, bar in self.bars.items():
            self.legend.addItem(bar, BREAKDOWN_LABELS[name])


__all__ = ["BREAKDOWN_COLORS", "BREAKDOWN_LABELS", "StepBreakdownChart"]
