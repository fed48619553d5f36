"""Two mprof recordings overlaid on one time axis, aligned at each run's start.

x is seconds since the start of each run (what `mprof plot` does when it overlays files): two
recordings taken hours apart only compare that way. A is drawn solid, B dashed in another
colour, so the two stay apart in print and for colour-blind readers too. The header gives the
peak and final memory of both files and their deltas; below the plot, the per-run delta table
(the core's `memory` view) lists every run of the files.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from perfview.core.compare.diff import Comparison, pct_change
from perfview.core.model import MemoryProfile
from perfview.core.model.units import MIB, Unit, format_bytes
from perfview.qt.items.labels import BytesAxis
from perfview.qt.views.compare_view import CompareView, _pct, _signed
from perfview.qt.widgets.plot_style import series_color, side_legend, style_plot

SIDE_STYLE = {"A": Qt.PenStyle.SolidLine, "B": Qt.PenStyle.DashLine}
SIDE_COLOUR = {"A": 0, "B": 1}  # indexes into plot_style.SERIES_COLORS: blue, orange


def run_curves(memory: MemoryProfile) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(run, seconds since that run's first sample, MiB) for every run of an mprof file."""
    samples = memory.samples
    out: list[tuple[int, np.ndarray, np.ndarray]] = []
    for run, rows in samples.groupby("run", sort=True):
        ts = rows["ts_ns"].to_numpy(np.int64)
        x = (ts - ts.min()) / 1e9 if len(ts) else np.zeros(0)
        y = rows["rss_bytes"].to_numpy(np.float64) / MIB
        out.append((int(run), x, y))  # type: ignore[arg-type]
    return out


def final_bytes(memory: MemoryProfile) -> float:
    """RSS at the last sample of the last run (what the process held when it ended)."""
    samples = memory.samples
    if not len(samples):
        return 0.0
    last = samples[samples["run"] == samples["run"].max()]
    return float(last["rss_bytes"].to_numpy(np.float64)[np.argmax(last["ts_ns"].to_numpy())])


def delta_html(label: str, a: float, b: float) -> str:
    return (
        f"{label}: <b>A</b> {format_bytes(a)} → <b>B</b> {format_bytes(b)} "
        f"<b>{_pct(pct_change(a, b))}</b> ({_signed(b - a, Unit.BYTES)})"
    )


class CompareMemoryView(QWidget):
    """Overlaid memory curves (A solid, B dashed), peak/final deltas, and the run table."""

    def __init__(
        self,
        comparison: Comparison,
        memory_a: MemoryProfile,
        memory_b: MemoryProfile,
        names: tuple[str, str] = ("A", "B"),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.comparison = comparison
        self.curves: dict[str, list[pg.PlotDataItem]] = {"A": [], "B": []}
        peak_a = float(memory_a.samples["rss_bytes"].max()) if len(memory_a.samples) else 0.0
        peak_b = float(memory_b.samples["rss_bytes"].max()) if len(memory_b.samples) else 0.0
        self.peaks = (peak_a, peak_b)
        self.finals = (final_bytes(memory_a), final_bytes(memory_b))
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.header.setText(
            delta_html("peak", *self.peaks) + " &nbsp;·&nbsp; " + delta_html("final", *self.finals)
        )
        self.plot = pg.PlotWidget(self, axisItems={"left": BytesAxis("left", per_unit=MIB)})
        style_plot(self.plot)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "time since run start", units="s")
        item.setLabel("left", "memory")
        side_legend(self.plot)
        for side, memory, name in (("A", memory_a, names[0]), ("B", memory_b, names[1])):
            self._draw_side(side, memory, name)
        self.table = CompareView(comparison, compact=True)
        plot_box = QWidget(self)
        box = QVBoxLayout(plot_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.header)
        box.addWidget(self.plot, 1)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(plot_box)
        splitter.addWidget(self.table)
        splitter.setSizes([3000, 1000])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

    def _draw_side(self, side: str, memory: MemoryProfile, name: str) -> None:
        colour = series_color(SIDE_COLOUR[side])
        runs = run_curves(memory)
        for i, (run, x, y) in enumerate(runs):
            pen = pg.mkPen(colour, width=2, style=SIDE_STYLE[side])
            label = f"{side}: {name}" + (f" (run {run})" if len(runs) > 1 else "")
            curve = self.plot.plot(x, y, pen=pen, name=label if i == 0 or len(runs) > 1 else None)
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
            self.curves[side].append(curve)
            if len(y):
                k = int(np.argmax(y))
                marker = pg.ScatterPlotItem(
                    [float(x[k])], [float(y[k])], symbol="o", size=8, pen=None, brush=colour
                )
                self.plot.addItem(marker)
                text = pg.TextItem(f"{side} peak {format_bytes(float(y[k]) * MIB)}", color=colour)
                text.setAnchor((0.5, 1.3) if side == "A" else (0.5, -0.3))
                text.setPos(float(x[k]), float(y[k]))
                self.plot.addItem(text)

    def curve_count(self) -> int:
        return len(self.curves["A"]) + len(self.curves["B"])


__all__ = ["CompareMemoryView", "delta_html", "final_bytes", "run_curves"]
