"""The Overview's stand-in for the step breakdown when a trace has no `ProfilerStep#N` slices.

Shows how to get real steps (one line), the recording (or each top-level user annotation) as
one bar of the usual breakdown chart, and the operators and Python frames with the most self
time, from `core.analysis.torch.no_steps.NoStepsData` (computed with the rest of the
overview, off the GUI thread).
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from perfview.core.analysis.torch import overview
from perfview.core.analysis.torch.no_steps import NoStepsData
from perfview.qt.document import Document
from perfview.qt.views.table_view import TableView

LABELS = {
    "comm": "Communication", "kernel": "Kernel", "memcpy": "Memcpy", "memset": "Memset",
    "runtime": "Runtime", "dataloader": "DataLoader", "cpu_exec": "CPU exec", "other": "Other",
}  # fmt: skip


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
    """Hint, whole-recording breakdown chart, top operators and Python frames by self time."""

    def __init__(
        self, data: NoStepsData, document: Document | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        from perfview.qt.views.step_chart import StepBreakdownChart

        self.data = data
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.hint = QLabel(data.hint, self)
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.hint)
        steps = data.steps
        total = float(steps["dur_ns"].sum())
        shares = [
            f"{LABELS[n]} {steps[f'{n}_ns'].sum() * 100 / total:.1f} %"
            for n in overview.BREAKDOWN
            if total > 0 and steps[f"{n}_ns"].sum() > 0
        ]
        names = ", ".join(dict.fromkeys(steps["label"].astype(str)))
        caption = QLabel(f"Treated as steps: {names}. Share of their time: " + " · ".join(shares))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        self.chart = StepBreakdownChart(steps, self)
        axis = self.chart.getPlotItem().getAxis("bottom")
        axis.setTicks([[(float(s), str(lbl)[:24]) for s, lbl in zip(steps["step"], steps["label"],
                                                                    strict=True)]])  # fmt: skip
        self.chart.getPlotItem().setLabel("bottom", "recording / top-level annotation")
        layout.addWidget(self.chart)
        row = QHBoxLayout()
        row.addWidget(_table(data.operators, "Top operators by self time", document, self), 1)
        row.addWidget(_table(data.python, "Top Python frames by self time", document, self), 1)
        layout.addLayout(row)


__all__ = ["NoStepsPanel"]
