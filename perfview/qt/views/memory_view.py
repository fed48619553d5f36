"""Memory over time: mprof `.dat` runs (`MprofMemoryView`) and torch `[memory]` totals
(`TraceMemoryView`).

mprof appends every `mprof run -o FILE` to the same file, so one file may hold several runs
taken hours apart. Each run is drawn as its own curve with x = seconds since *that run's* start,
which is how `mprof plot` overlays files and the only way runs are comparable. Child-process
samples (CHLD) are thinner dashed curves in their run's colour; FUNC spans of `@profile`
functions are brackets over the curve, all in one NaN-separated line item (one draw call however
many spans there are). Long series use pyqtgraph's clip-to-view and peak downsampling.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from perfview.core.model import MemoryProfile, Timeline
from perfview.core.model.units import MIB, format_bytes, format_ns
from perfview.qt.document import Document
from perfview.qt.items.labels import BytesAxis
from perfview.qt.widgets.plot_style import muted, series_color, side_legend, style_plot

MAX_SPAN_LABELS = 40


def _make_plot(parent: QWidget, x_label: str, x_units: str | None) -> pg.PlotWidget:
    plot = pg.PlotWidget(parent, axisItems={"left": BytesAxis("left", per_unit=MIB)})
    style_plot(plot)
    item = plot.getPlotItem()
    item.setClipToView(True)
    item.setDownsampling(auto=True, mode="peak")
    item.setLabel("bottom", x_label, units=x_units)
    item.setLabel("left", "memory")
    if x_units is None:
        item.getAxis("bottom").enableAutoSIPrefix(False)
    return plot


def _add_legend(plot: pg.PlotWidget) -> pg.LegendItem:
    return side_legend(plot)


def _elide(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class MprofMemoryView(QWidget):
    """One curve per mprof run, CHLD child curves, FUNC brackets and a peak marker per run."""

    def __init__(
        self, memory: MemoryProfile, document: Document | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.memory = memory
        self.document = document
        self.run_curves: list[pg.PlotDataItem] = []
        self.child_curves: list[pg.PlotDataItem] = []
        self.peak_markers: list[pg.ScatterPlotItem] = []
        self.span_item: pg.PlotDataItem | None = None
        self.span_labels: list[pg.TextItem] = []

        self.summary = QLabel(self)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = _make_plot(self, "time since run start", "s")
        self.legend = _add_legend(self.plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot, 1)
        self._draw()

    def run_starts(self) -> dict[int, int]:
        """Earliest timestamp (ns) of each run over MEM, CHLD and FUNC records."""
        parts = [self.memory.samples[["run", "ts_ns"]]]
        if len(self.memory.children):
            parts.append(self.memory.children[["run", "ts_ns"]])
        if len(self.memory.spans):
            parts.append(
                self.memory.spans[["run", "start_ns"]].rename(columns={"start_ns": "ts_ns"})
            )
        both = pd.concat(parts, ignore_index=True)
        if not len(both):
            return {}
        starts = both.groupby("run", sort=True)["ts_ns"].min()
        return dict(
            zip(
                starts.index.to_numpy(np.int64).tolist(),
                starts.to_numpy(np.int64).tolist(),
                strict=True,
            )
        )

    def _draw(self) -> None:
        starts = self.run_starts()
        runs = sorted(starts)
        samples = self.memory.samples
        best: tuple[int, int, int] | None = None  # (peak bytes, run, ts)
        peak_xy: tuple[float, float, Any] = (0.0, 0.0, None)
        for i, run in enumerate(runs):
            color = series_color(i)
            rows = samples[samples["run"] == run]
            x = (rows["ts_ns"].to_numpy(np.int64) - starts[run]) / 1e9
            y = rows["rss_bytes"].to_numpy(np.float64) / MIB
            cmd = self.memory.cmdlines[run] if run < len(self.memory.cmdlines) else ""
            peak = int(rows["rss_bytes"].max()) if len(rows) else 0
            name = f"run {run}" + (f", peak {format_bytes(peak)}" if len(rows) else "")
            name += f": {_elide(cmd, 24)}" if cmd else ""
            curve = self.plot.plot(x, y, pen=pg.mkPen(color, width=2), name=name)
            curve.setToolTip(cmd)
            self.run_curves.append(curve)
            if len(y):
                k = int(np.argmax(y))
                self._mark_peak(float(x[k]), float(y[k]), color)
                if best is None or peak > best[0]:
                    ts = rows["ts_ns"].to_numpy(np.int64)
                    best = (peak, run, int(ts[k]) - starts[run])
                    peak_xy = (float(x[k]), float(y[k]), color)
            self._draw_children(run, starts[run], color)
        self._draw_spans(starts)
        if best is not None:
            # Only the overall peak gets a text label: per-run labels collide when runs peak
            # at similar values (the legend names each run's peak instead).
            label = pg.TextItem(
                f"peak {format_bytes(best[0])}", color=peak_xy[2], anchor=(0.5, 1.3)
            )
            label.setPos(peak_xy[0], peak_xy[1])
            self.plot.addItem(label)
        self._set_summary(runs, best)

    def _mark_peak(self, x: float, y: float, color: Any) -> None:
        marker = pg.ScatterPlotItem([x], [y], symbol="o", size=9, brush=pg.mkBrush(color), pen=None)
        self.plot.addItem(marker)
        self.peak_markers.append(marker)

    def _draw_children(self, run: int, start: int, color: Any) -> None:
        children = self.memory.children
        if not len(children):
            return
        rows = children[children["run"] == run]
        for child, part in rows.groupby("child", sort=True):
            x = (part["ts_ns"].to_numpy(np.int64) - start) / 1e9
            y = part["rss_bytes"].to_numpy(np.float64) / MIB
            pen = pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine)
            first = not self.child_curves
            curve = self.plot.plot(x, y, pen=pen, name="child processes" if first else None)
            curve.setToolTip(f"run {run}, child {child}")
            self.child_curves.append(curve)

    def _draw_spans(self, starts: dict[int, int]) -> None:
        """FUNC spans as ⊓-shaped brackets: ticks at entry/exit memory, bar above the higher."""
        spans = self.memory.spans
        if not len(spans):
            return
        offset = spans["run"].map(starts).fillna(0).to_numpy(np.int64)
        x0 = (spans["start_ns"].to_numpy(np.int64) - offset) / 1e9
        x1 = (spans["end_ns"].to_numpy(np.int64) - offset) / 1e9
        m0 = spans["mem_start"].to_numpy(np.float64) / MIB
        m1 = spans["mem_end"].to_numpy(np.float64) / MIB
        level = spans["level"].to_numpy(np.float64).clip(min=0)
        top = np.maximum(m0, m1) * (1.02 + 0.02 * level)
        nan = np.full(len(spans), np.nan)
        xs = np.column_stack([x0, x0, x1, x1, nan]).ravel()
        ys = np.column_stack([m0, top, top, m1, nan]).ravel()
        pen = pg.mkPen(muted(self.palette()), width=1.5)
        self.span_item = self.plot.plot(xs, ys, pen=pen, connect="finite", name="@profile calls")
        widest = np.argsort(-(x1 - x0), kind="stable")[:MAX_SPAN_LABELS]
        for i in widest:
            text = f"{spans['name'].iat[i]} ({format_bytes(m1[i] * MIB - m0[i] * MIB)})"
            label = pg.TextItem(_elide(str(text), 40), color=muted(self.palette()), anchor=(0.5, 1))
            label.setPos(float((x0[i] + x1[i]) / 2), float(top[i]))
            self.plot.addItem(label)
            self.span_labels.append(label)

    def _set_summary(self, runs: list[int], best: tuple[int, int, int] | None) -> None:
        parts = [f"{len(runs)} run{'s' if len(runs) != 1 else ''}"]
        if best is not None:
            where = f" in run {best[1]}" if len(runs) > 1 else ""
            parts.append(f"peak {format_bytes(best[0])}{where} at {format_ns(best[2])}")
        parts.append(f"{len(self.memory.samples):,} samples")
        if len(self.memory.children):
            n_children = self.memory.children.groupby(["run", "child"]).ngroups
            parts.append(f"{len(self.memory.children):,} child samples ({n_children} children)")
        if len(self.memory.spans):
            parts.append(f"{len(self.memory.spans):,} @profile calls")
        self.summary.setText("  ·  ".join(parts))


def _device_label(device_type: int, device_id: int) -> str:
    if device_type == 0:
        return "CPU"
    if device_type == 1:
        return f"GPU {device_id}"
    return f"device {device_type}:{device_id}"


def _steps(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step-function points: each value holds until the next event."""
    if len(x) < 2:
        return x, y
    return np.repeat(x, 2)[1:], np.repeat(y, 2)[:-1]


class TraceMemoryView(QWidget):
    """torch.profiler memory: Total Allocated (solid) and Total Reserved (dashed) per device."""

    def __init__(
        self, timeline: Timeline, document: Document | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.document = document
        self.curves: list[pg.PlotDataItem] = []
        self.summary = QLabel(self)
        self.plot = _make_plot(self, "time", "s")
        _add_legend(self.plot)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot, 1)
        self._draw()
        if document is not None:
            document.range_changed.connect(self.show_range)

    def _draw(self) -> None:
        mem = self.timeline.memory
        if not len(mem):
            self.summary.setText("This trace has no memory events (profile_memory was off).")
            return
        parts = []
        groups = mem.sort_values("ts", kind="stable").groupby(["device_type", "device_id"])
        for i, ((dtype, did), part) in enumerate(groups):
            label = _device_label(int(dtype), int(did))  # type: ignore[call-overload]
            color = series_color(i)
            x = part["ts"].to_numpy(np.int64) / 1e9
            for column, style, what in (
                ("total_allocated", Qt.PenStyle.SolidLine, "allocated"),
                ("total_reserved", Qt.PenStyle.DashLine, "reserved"),
            ):
                y = part[column].to_numpy(np.float64) / MIB
                if what == "reserved" and not np.any(y):
                    continue  # CPU events carry no reserved total
                xs, ys = _steps(x, y)
                pen = pg.mkPen(color, width=2 if what == "allocated" else 1, style=style)
                curve = self.plot.plot(xs, ys, pen=pen, name=f"{label} {what}")
                self.curves.append(curve)
            peak = int(part["total_allocated"].max())
            n_oom = int(part["oom"].sum())
            oom = f", {n_oom} out-of-memory" if n_oom else ""
            parts.append(f"{label}: peak allocated {format_bytes(peak)}, {len(part):,} events{oom}")
        self.summary.setText("  ·  ".join(parts))

    def show_range(self, lo: int, hi: int) -> None:
        """Follow the document's time range (ns since trace origin)."""
        if hi > lo:
            self.plot.setXRange(lo / 1e9, hi / 1e9, padding=0)


__all__ = ["MprofMemoryView", "TraceMemoryView"]
