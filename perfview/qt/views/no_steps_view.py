"""The Overview's stand-in for the step breakdown when a trace has no `ProfilerStep#N` slices.

Shows how to get real steps (one line), the recording (or each top-level user annotation) as
one bar of the usual breakdown chart, and the operators and Python frames with the most self
time, from `core.analysis.torch.no_steps.NoStepsData` (computed with the rest of the
overview, off the GUI thread).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from perfview.core.analysis.torch import overview
from perfview.core.analysis.torch.no_steps import NoStepsData
from perfview.qt import deferred
from perfview.qt.document import Document
from perfview.qt.views.step_chart import BREAKDOWN_LABELS, StepBreakdownChart
from perfview.qt.views.table_view import TableView


def _table(frame: pd.DataFrame, title: str, document: Document | None, parent: QWidget) -> QWidget:
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(QLabel(f"<b>{title}</b>", box))
    if not len(frame):
        empty = QLabel("none recorded (record with --with-stack for Python frames)", box)
        empty.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(empty)
        return box
    table = TableView(frame, document, kind="op", key_column="name")
    table.filter_edit.hide()
    height = table.table.verticalHeader().defaultSectionSize()
    table.setFixedHeight((len(frame) + 1) * height + 48)
    layout.addWidget(table)
    return box


class NoStepsPanel(QWidget):
    """Hint, whole-recording breakdown chart, top operators and Python frames by self time.

    `defer`: the chart and the two tables (tens of ms of widget set-up, whatever the trace's
    size) are built on coming event-loop turns, one each, so that a new tab that opens on this
    page never blocks the window for their sum (`chart_ready` fires after the chart's)."""

    chart_ready = Signal()

    def __init__(
        self,
        data: NoStepsData,
        document: Document | None = None,
        parent: QWidget | None = None,
        *,
        defer: bool = False,
    ) -> None:
        super().__init__(parent)
        self.data = data
        self.document = document
        self.chart: StepBreakdownChart | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.hint = QLabel(data.hint, self)
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.hint)
        steps = data.steps
        total = float(steps["dur_ns"].sum())
        shares = [
            f"{BREAKDOWN_LABELS[n]} {steps[f'{n}_ns'].sum() * 100 / total:.1f} %"
            for n in overview.BREAKDOWN
            if total > 0 and steps[f"{n}_ns"].sum() > 0
        ]
        names = ", ".join(dict.fromkeys(steps["label"].astype(str)))
        caption = QLabel(f"Treated as steps: {names}. Share of their time: " + " · ".join(shares))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        chart_box, ops_box, py_box = self._holder(), self._holder(), self._holder()
        chart_box.setMinimumHeight(260 if defer else 0)
        layout.addWidget(chart_box)
        row = QHBoxLayout()
        row.addWidget(ops_box, 1)
        row.addWidget(py_box, 1)
        layout.addLayout(row)
        parts = [
            *self._chart_parts(chart_box),
            lambda: self._fill(ops_box, data.operators, "Top operators by self time"),
            lambda: self._fill(py_box, data.python, "Top Python frames by self time"),
        ]
        for part in parts:
            if defer:
                deferred.later(self, part)
            else:
                part()

    def _holder(self) -> QWidget:
        box = QWidget(self)
        QVBoxLayout(box).setContentsMargins(0, 0, 0, 0)
        return box

    def _chart_parts(self, holder: QWidget) -> list[Callable[[], None]]:
        """The chart (well under a millisecond to build), then `chart_ready`."""

        def chart() -> None:
            steps = self.data.steps
            labels = [str(label)[:24] for label in steps["label"]]
            self.chart = StepBreakdownChart(
                steps, holder, labels=labels, x_title="recording / top-level annotation"
            )
            box_layout = holder.layout()
            if box_layout is not None:
                box_layout.addWidget(self.chart)

        return [chart, self.chart_ready.emit]

    def _fill(self, holder: QWidget, frame: pd.DataFrame, title: str) -> None:
        box_layout = holder.layout()
        if box_layout is not None:
            box_layout.addWidget(_table(frame, title, self.document, holder))


__all__ = ["NoStepsPanel"]
