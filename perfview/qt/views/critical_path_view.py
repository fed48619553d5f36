"""The Critical path page: what bounds each step, why the GPU idles, and what-if replays.

Top left, charts: each step's critical path stacked by category, each stream's idle time
stacked by cause, and the predicted timeline of a what-if beside the measured one. Top right,
the what-if edits, one per line, replayed in a worker as you type (a replay of the dependency
graph takes milliseconds; the first builds the graph). Below, the path's top contributors:
clicking one selects its slices on the Timeline (`Document.show_slices`). Bars are one
`BarGraphItem` per category, never one item per slice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.torch.critical_path import what_if
from perfview.core.analysis.torch.critical_path.graph import CATEGORIES
from perfview.core.analysis.torch.critical_path.idle_gaps import CAUSES
from perfview.core.analysis.torch.critical_path.path import steps_of
from perfview.core.model import Timeline
from perfview.core.model.units import format_ns
from perfview.core.pages.data import CriticalPathData
from perfview.qt.document import Document
from perfview.qt.tasks import Task
from perfview.qt.views.critical_path_track import CATEGORY_COLORS
from perfview.qt.views.table_view import TableView

CAUSE_COLORS = dict(zip(CAUSES, (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#bab0ac",
), strict=True))  # fmt: skip
EXAMPLE_EDITS = "kernel:*gemm*=0.5\n"
REPLAY_DELAY_MS = 250
IGNORED = (
    "The replay ignores contention (a faster kernel leaves its neighbours as they were), "
    "allocator and clock effects, and hand-offs between threads other than a join (the "
    "autograd thread ending the main thread's wait) or a wake of an idle thread."
)


def stacked_bars(
    plot: pg.PlotItem, labels: list[str], series: list[tuple[str, np.ndarray, str]]
) -> str:
    """One bar per label, stacked by series (values in ns, drawn in ms); returns the legend
    as HTML (a label beside the plot: a legend inside it hides bars)."""
    plot.clear()
    x = np.arange(len(labels), dtype=float)
    bottom = np.zeros(len(labels))
    shown = []
    for name, values, color in series:
        ms = np.asarray(values, dtype=float) / 1e6
        if not ms.any():
            continue
        plot.addItem(pg.BarGraphItem(x=x, height=ms, y0=bottom, width=0.7, brush=color, pen=None))
        bottom = bottom + ms
        shown.append(f"<span style='color:{color}'>■</span>&nbsp;{name}")
    axis = plot.getAxis("bottom")
    axis.setTicks([list(zip(x.tolist(), labels, strict=True))])
    axis.setHeight(44 if any("\n" in label for label in labels) else None)  # two-line labels
    plot.setLabel("left", "ms")
    plot.setXRange(-0.6, len(labels) - 0.4, padding=0)
    plot.setYRange(0, float(bottom.max()) * 1.05 if len(bottom) and bottom.max() > 0 else 1)
    return " &nbsp; ".join(shown)


def _chart(parent: QWidget) -> tuple[QWidget, pg.PlotWidget, QLabel]:
    """A white plot with its legend line under it."""
    box = QWidget(parent)
    plot = pg.PlotWidget(box, background="w")
    legend = QLabel(box)
    legend.setWordWrap(True)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(plot, 1)
    layout.addWidget(legend)
    return box, plot, legend


class CriticalPathView(QWidget):
    """The page: charts, what-if edits with their prediction, top contributors."""

    replayed = Signal(object)  # the per-step prediction table (None: the edits were refused)

    def __init__(
        self,
        data: CriticalPathData,
        document: Document | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.data = data
        self.document = document
        self.timeline: Timeline = data.timeline
        self._generation = 0
        self.prediction: pd.DataFrame | None = None
        heading = QLabel(f"<h3>Critical path</h3>{data.definition}", self)
        heading.setWordWrap(True)
        self.charts = QTabWidget(self)
        path_box, self.path_plot, self.path_legend = _chart(self)
        self.charts.addTab(path_box, "Path by category")
        # the other two charts are made when their tab is first shown: a plot costs 10-30 ms
        # of the GUI thread, a third of the page's build right after a click (issue 37)
        self._later_charts: dict[int, Callable[[], None]] = {
            self.charts.addTab(QWidget(self), "GPU idle by cause"): self._make_idle,
            self.charts.addTab(QWidget(self), "Predicted timeline"): self._make_predicted,
        }
        self.idle_plot: pg.PlotWidget | None = None
        self.predicted_plot: pg.PlotWidget | None = None
        self._predicted_frame: pd.DataFrame | None = None  # drawn once its chart is made
        self.charts.currentChanged.connect(self._on_chart_tab)
        self._draw_path()
        top = QSplitter(Qt.Orientation.Horizontal, self)
        top.addWidget(self.charts)
        top.addWidget(self._what_if_panel())
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        self.contributors = TableView(data.breakdown, None, key_column="name", parent=self)
        self.contributors.table.selectionModel().currentRowChanged.connect(self._on_row)
        steps = TableView(data.steps, None, key_column="step", parent=self)
        tables = QTabWidget(self)
        tables.addTab(self.contributors, "Top contributors")
        tables.addTab(steps, "Steps")
        body = QSplitter(Qt.Orientation.Vertical, self)
        body.addWidget(top)
        body.addWidget(tables)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(heading)
        layout.addWidget(body, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REPLAY_DELAY_MS)
        self._timer.timeout.connect(self.replay)
        self.edits.textChanged.connect(self._timer.start)
        self.replay()

    # --- charts ----------------------------------------------------------------------------
    def _draw_path(self) -> None:
        table = self.data.breakdown
        steps = self.data.steps["step"].tolist()
        wide = table.pivot_table(index="step", columns="category", values="ns", aggfunc="sum")
        wide = wide.reindex(index=steps, columns=list(CATEGORIES)).fillna(0)
        series = [(c, wide[c].to_numpy(), CATEGORY_COLORS[c]) for c in CATEGORIES]
        labels = [f"#{s}" for s in steps]
        self.path_legend.setText(stacked_bars(self.path_plot.getPlotItem(), labels, series))

    def _on_chart_tab(self, index: int) -> None:
        make = self._later_charts.pop(index, None)
        if make is not None:
            make()

    def _chart_in(self, index: int) -> tuple[pg.PlotWidget, QLabel]:
        """A chart made in tab `index`'s (empty) page."""
        box, plot, legend = _chart(self)
        page = self.charts.widget(index)
        assert page is not None
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(box)
        return plot, legend

    def _make_idle(self) -> None:
        self.idle_plot, self.idle_legend = self._chart_in(1)
        self._draw_idle()

    def _make_predicted(self) -> None:
        self.predicted_plot, self.predicted_legend = self._chart_in(2)
        if self._predicted_frame is not None:
            self._draw_predicted(self._predicted_frame)

    def _draw_idle(self) -> None:
        assert self.idle_plot is not None
        idle = self.data.idle
        labels = [
            f"#{s}\n{str(t).replace('stream ', 's')}"
            for s, t in zip(idle["step"], idle["stream"], strict=True)
        ]
        series = [(c, idle[c].to_numpy(), CAUSE_COLORS[c]) for c in CAUSES if c in idle]
        legend = stacked_bars(self.idle_plot.getPlotItem(), labels, series)
        self.idle_legend.setText(f"{legend}<br>bars: step and stream (s7 = stream 7)")

    def _what_if_panel(self) -> QWidget:
        panel = QWidget(self)
        self.edits = QPlainTextEdit(panel)
        self.edits.setPlaceholderText("one edit per line, e.g. kernel:*gemm*=0.5 or sync:remove")
        self.edits.setPlainText(EXAMPLE_EDITS)
        self.edits.setMaximumHeight(140)
        self.step_box = QComboBox(panel)
        for step in self.data.steps["step"].tolist():
            self.step_box.addItem(f"step {step}", int(step))
        self.step_box.currentIndexChanged.connect(lambda _i: self.replay())
        self.result = QLabel(panel)
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.RichText)
        self.result.setAlignment(Qt.AlignmentFlag.AlignTop)
        help_text = QLabel(f"{what_if.HELP}. {IGNORED}", panel)
        help_text.setWordWrap(True)
        help_text.setStyleSheet("color: palette(placeholder-text);")
        self.show_path = QPushButton("Show path on Timeline", panel)
        self.show_path.setToolTip(
            "Select every slice, kernel and call the step's critical path runs through on the "
            "Timeline (the rest is muted)"
        )
        self.show_path.clicked.connect(self.show_path_on_timeline)
        self.show_path.setEnabled(self.document is not None)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>What if…</b>", panel))
        row.addStretch(1)
        row.addWidget(self.show_path)
        row.addWidget(self.step_box)
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.edits, 1)
        layout.addWidget(self.result, 2)
        layout.addWidget(help_text)
        return panel

    # --- what-if -----------------------------------------------------------------------------
    def replay(self) -> None:
        """Replay the edits on a worker; a newer replay makes an older result stale."""
        self._generation += 1
        generation = self._generation
        texts = [t.strip() for t in self.edits.toPlainText().splitlines() if t.strip()]
        step = self.step_box.currentData()
        timeline = self.timeline
        task = Task(lambda _p: (generation, *_replay(timeline, texts, step)), name="what-if")
        task.finished.connect(self._on_replayed)
        task.start()

    def _on_replayed(
        self, result: tuple[int, str, pd.DataFrame | None, pd.DataFrame | None]
    ) -> None:
        generation, message, table, frame = result
        if generation != self._generation:
            return
        self.prediction = table
        if table is None:
            self.result.setText(f"<span style='color:#d1495b'>{message}</span>")
        else:
            self.result.setText(_result_html(table, message))
            if frame is not None:
                self._draw_predicted(frame)
        self.replayed.emit(table)

    def _draw_predicted(self, frame: pd.DataFrame) -> None:
        """The step's slices and GPU activities, measured (grey) above predicted (blue), one
        row pair per lane: two BarGraphItems in all (once its tab is shown)."""
        self._predicted_frame = frame
        if self.predicted_plot is None:
            return
        plot = self.predicted_plot.getPlotItem()
        plot.clear()
        lanes = sorted(set(frame["lane"].tolist()))
        index = {lane: i for i, lane in enumerate(lanes)}
        y = frame["lane"].map(index).to_numpy(dtype=float)
        t0 = float(frame["start_ns"].min()) if len(frame) else 0.0
        for start, end, offset, color in (
            ("start_ns", "end_ns", 0.0, "#9a9a9a"),
            ("predicted_start_ns", "predicted_end_ns", 0.45, "#4e79a7"),
        ):
            x0 = (frame[start].to_numpy(dtype=float) - t0) / 1e6
            width = np.maximum((frame[end] - frame[start]).to_numpy(dtype=float) / 1e6, 1e-4)
            plot.addItem(pg.BarGraphItem(x0=x0, y0=y + offset, width=width, height=0.4,
                                         brush=color, pen=None))  # fmt: skip
        labels = self.timeline.lanes.set_index("lane")["thread"].astype(str)
        full = [str(labels.get(lane, lane)) for lane in index]
        short = [_short(text) for text in full]
        names = [s if short.count(s) == 1 else f[:24] for s, f in zip(short, full, strict=True)]
        ticks = [(i + 0.42, name) for i, name in enumerate(names)]
        plot.getAxis("left").setTicks([ticks])
        plot.getAxis("left").setWidth(150)
        plot.setLabel("bottom", "ms from the step's start")
        self.predicted_legend.setText(
            "<span style='color:#9a9a9a'>■</span>&nbsp;measured &nbsp; "
            "<span style='color:#4e79a7'>■</span>&nbsp;predicted (each lane: measured below)"
        )

    # --- click-through -----------------------------------------------------------------------
    def show_path_on_timeline(self) -> None:
        """The chosen step's whole path, highlighted on the Timeline."""
        step = int(self.step_box.currentData() or 0)
        rows = self.data.path_rows.get(step)
        if self.document is None or rows is None or not len(rows):
            return
        self.document.show_slices(rows.tolist())
        span = self._step_span(step)
        if span is not None:  # the whole step in view, not just its first slice
            self.document.set_range(*span)

    def _step_span(self, step: int) -> tuple[int, int] | None:
        steps = steps_of(self.timeline)
        hit = np.flatnonzero(steps["step"].to_numpy() == step)
        if not len(hit):
            return None
        start = steps["start_ns"].to_numpy(dtype=np.int64)[hit[0]]
        end = steps["end_ns"].to_numpy(dtype=np.int64)[hit[0]]
        return int(start), int(end)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        view = self.contributors
        src = view.proxy.mapToSource(view.proxy.index(current.row(), 0))
        if self.document is None or not src.isValid():
            return
        row = self.data.breakdown.iloc[view.model.source_row(src.row())]
        rows = self.data.rows.get((int(row["step"]), str(row["category"]), str(row["name"])))
        if rows is not None and len(rows):
            self.document.show_slices(rows.tolist())


def _short(thread: str) -> str:
    """A lane's short name: the thread's name in its label's brackets, else the label."""
    found = re.search(r"\(([^()]+)\)\s*$", thread)
    return (found.group(1) if found else thread)[:24]


def _replay(
    timeline: Timeline, texts: list[str], step: Any
) -> tuple[str, pd.DataFrame | None, pd.DataFrame | None]:
    """On the worker: (message, per-step table, predicted timeline of `step`)."""
    try:
        edits = what_if.parse_edits(texts)
    except what_if.EditError as exc:
        return str(exc), None, None
    prediction = what_if.predict(timeline, edits)
    frame = prediction.timeline(timeline, int(step)) if step is not None else None
    path = what_if.links_breakdown(timeline, prediction.predicted)
    top = path.groupby("category")["ns"].sum().sort_values(ascending=False)
    bound = f"new bound: {top.index[0]}" if len(top) else ""
    return bound, prediction.table(), frame


def _result_html(table: pd.DataFrame, bound: str) -> str:
    rows = "".join(
        f"<tr><td>#{r['step']}</td><td align=right>{format_ns(float(r['measured_ns']))}</td>"
        f"<td align=right>{format_ns(float(r['predicted_ns']))}</td>"
        f"<td align=right>{float(r['speedup']):.2f}×</td></tr>"
        for r in table.to_dict("records")
    )
    head = "<tr><th>step</th><th>measured</th><th>predicted</th><th>speedup</th></tr>"
    return f"<table cellspacing=6>{head}{rows}</table>{bound}"


__all__ = ["CriticalPathView", "stacked_bars"]
