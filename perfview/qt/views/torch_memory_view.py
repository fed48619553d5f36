"""Memory page for torch traces: allocated/reserved curves per device, peak, allocation table.

The curves are `memory_alloc.memory_curves` drawn as steps (memory holds its value until the
next event); each device's peak of Total Allocated is marked and labelled. Below, the
allocations paired with their frees (`allocations_table`). Dragging the shaded range on the
plot filters the table to the allocations made or freed inside it (`filter_allocations`, the
TensorBoard plugin's rule); "Show all" clears the range.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.torch import memory_alloc
from perfview.core.layout.extent import busy_start
from perfview.core.model import Timeline
from perfview.core.model.units import format_bytes, format_ns
from perfview.core.pages.data import ALLOC_COLUMNS, MemoryData, display_allocations
from perfview.qt.document import Document
from perfview.qt.items.labels import BytesAxis
from perfview.qt.views.table_view import TableView
from perfview.qt.widgets.plot_style import series_color, side_legend, style_plot

display_frame = display_allocations  # the rows as shown (kept under its old name)


def _steps(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points of a step curve: each value holds until the next sample."""
    if len(x) < 2:
        return x, y
    xs = np.repeat(x, 2)[1:]
    ys = np.repeat(y, 2)[:-1]
    return xs, ys


class TorchMemoryView(QWidget):
    """Curves (pyqtgraph, x in seconds from trace start) over a filterable allocation table."""

    def __init__(
        self,
        timeline: Timeline,
        document: Document | None = None,
        parent: QWidget | None = None,
        data: MemoryData | None = None,
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.document = document
        # `data` comes from a worker (document tab): curves and pairing cost a second at 1 GB.
        data = data if data is not None else MemoryData.compute(timeline)
        self.curves = data.curves
        self.peaks = data.peaks
        self.allocations = data.allocations
        self.range_ns: tuple[int, int] | None = None

        self.plot = pg.PlotWidget(self, axisItems={"left": BytesAxis("left")})
        style_plot(self.plot)
        item = self.plot.getPlotItem()
        item.setLabel("left", "memory")
        item.setLabel("bottom", "time", units="s")
        side_legend(self.plot)
        self._draw()
        lo, hi = self._extent()
        self.region = pg.LinearRegionItem(values=(lo, hi), brush=pg.mkBrush(120, 160, 255, 40))
        self.region.setZValue(-10)
        self.region.setVisible(False)
        item.addItem(self.region)
        self.region.sigRegionChangeFinished.connect(self._on_region)
        self.plot.scene().sigMouseClicked.connect(self._on_plot_click)

        self.hint = QLabel(self)
        self.select_button = QPushButton("Select range", self)
        self.select_button.setToolTip("Show a draggable range on the plot; the table follows it")
        self.select_button.clicked.connect(self._start_range)
        self.clear_button = QPushButton("Show all", self)
        self.clear_button.clicked.connect(self.clear_range)
        self.whole = QCheckBox("Show whole recording", self)
        self.whole.setToolTip("The plot starts where memory use does; tick to show the time before")
        self.start = self._busy_start()
        self.whole.setVisible(self.start is not None)
        self.whole.toggled.connect(self._show_extent)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(self.hint, 1)
        bar.addWidget(self.whole)
        bar.addWidget(self.select_button)
        bar.addWidget(self.clear_button)

        self.table = TableView(
            data.shown,
            document,
            kind="op",
            key_column="op",
            units={"addr": None},
            stretch_column="op",
        )
        top = QWidget(self)
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addLayout(bar)
        tv.addWidget(self.plot, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.table)
        split.setSizes([550, 450])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._update_hint()
        self._show_extent()

    # --- drawing -----------------------------------------------------------------------------
    def _extent(self) -> tuple[float, float]:
        if not len(self.curves):
            return 0.0, 1.0
        ts = self.curves["ts_ns"].to_numpy(dtype=np.float64) / 1e9
        return float(ts.min()), float(ts.max())

    def _busy_start(self) -> float | None:
        """Where memory use starts (s), when the time before it is worth leaving out: the
        earliest device's start (`core.layout.extent.busy_start`), None if any starts busy."""
        starts = []
        for _device, part in self.curves.groupby("device", sort=True):
            x = part["ts_ns"].to_numpy(dtype=np.float64) / 1e9
            start = busy_start(x, part["allocated_bytes"].to_numpy(dtype=np.float64))
            if start is None:
                return None
            starts.append(start)
        return min(starts) if starts else None

    def _show_extent(self) -> None:
        lo, hi = self._extent()
        if self.start is not None and not self.whole.isChecked():
            lo = self.start
        self.plot.getPlotItem().setXRange(lo, hi, padding=0.01)

    def _draw(self) -> None:
        item = self.plot.getPlotItem()
        self.curve_items: list[pg.PlotDataItem] = []
        for i, (device, part) in enumerate(self.curves.groupby("device", sort=True)):
            x = part["ts_ns"].to_numpy(dtype=np.float64) / 1e9
            color = series_color(i)
            for column, label, style in (
                ("allocated_bytes", "Total Allocated", Qt.PenStyle.SolidLine),
                ("reserved_bytes", "Total Reserved", Qt.PenStyle.DashLine),
            ):
                y = part[column].to_numpy(dtype=np.float64)
                if column == "reserved_bytes" and not y.any():
                    continue  # old files record no reserved total
                xs, ys = _steps(x, y)
                pen = pg.mkPen(color, width=2 if style == Qt.PenStyle.SolidLine else 1.5)
                pen.setStyle(style)
                curve = item.plot(xs, ys, pen=pen, name=f"{device} {label}")
                curve.setClipToView(True)
                curve.setDownsampling(auto=True, method="peak")
                self.curve_items.append(curve)
        self.peak_items: list[pg.GraphicsObject] = []
        peak_ts = self.peaks["peak_ts_ns"].to_numpy(dtype=np.float64)
        peak_bytes = self.peaks["peak_allocated_bytes"].to_numpy(dtype=np.float64)
        for i, (ts, y) in enumerate(zip(peak_ts.tolist(), peak_bytes.tolist(), strict=True)):
            x = ts / 1e9
            dot = pg.ScatterPlotItem([x], [y], size=10, symbol="t",
                                     brush=series_color(i), pen=pg.mkPen("k"))  # fmt: skip
            label = pg.TextItem(
                f"peak {format_bytes(y)} @ {format_ns(ts)}",
                color=series_color(i),
                anchor=(0.5, 1.4),
            )
            label.setPos(x, y)
            item.addItem(dot)
            item.addItem(label)
            self.peak_items += [dot, label]

    # --- range filter ------------------------------------------------------------------------
    def _start_range(self) -> None:
        lo, hi = self.plot.getPlotItem().viewRange()[0]
        width = hi - lo
        self.set_range_ns(int((lo + width * 0.35) * 1e9), int((lo + width * 0.65) * 1e9))

    def _on_plot_click(self, event: object) -> None:
        double = getattr(event, "double", None)
        if callable(double) and double():
            self._start_range()

    def set_range_ns(self, start_ns: int, end_ns: int) -> int:
        """Show the range on the plot and filter the table to it; returns the row count."""
        self.region.setVisible(True)
        self.region.blockSignals(True)
        self.region.setRegion((start_ns / 1e9, end_ns / 1e9))
        self.region.blockSignals(False)
        return self._apply(int(start_ns), int(end_ns))

    def clear_range(self) -> None:
        self.region.setVisible(False)
        self.range_ns = None
        self.table.model.set_frame(display_frame(self.allocations))
        self.table._update_count()
        self._update_hint()

    def _on_region(self) -> None:
        lo, hi = self.region.getRegion()
        self._apply(round(float(lo) * 1e9), round(float(hi) * 1e9))

    def _apply(self, start_ns: int, end_ns: int) -> int:
        self.range_ns = (start_ns, end_ns)
        shown = memory_alloc.filter_allocations(self.allocations, start_ns, end_ns)
        self.table.model.set_frame(display_frame(shown))
        self.table._update_count()
        self._update_hint()
        return len(shown)

    def _update_hint(self) -> None:
        n = len(self.allocations)
        if self.range_ns is None:
            peaks = ", ".join(
                f"{d}: peak {format_bytes(float(b))}"
                for d, b in zip(
                    self.peaks["device"].tolist(),
                    self.peaks["peak_allocated_bytes"].tolist(),
                    strict=True,
                )
            )
            self.hint.setText(
                f"{n:,} allocations. {peaks}. "
                "Select a range (or double-click the plot) to filter the table."
            )
        else:
            lo, hi = self.range_ns
            self.hint.setText(
                f"Allocations made or freed in {format_ns(float(lo))} – {format_ns(float(hi))}: "
                f"{self.table.model.rowCount():,} of {n:,}"
            )


def has_torch_memory(timeline: Timeline | None) -> bool:
    """True when the trace holds `[memory]` events (profile_memory=True)."""
    return (
        timeline is not None
        and isinstance(timeline.memory, pd.DataFrame)
        and len(timeline.memory) > 0
    )


__all__ = ["ALLOC_COLUMNS", "TorchMemoryView", "has_torch_memory"]
