"""Overview page for torch traces: what the TensorBoard plugin's Overview showed, offline.

Top to bottom: one card per GPU the trace used (name, memory, SMs, compute capability), the
step-time statistics, a stacked bar per ProfilerStep splitting its time into the BREAKDOWN
categories (they add up to the step), the GPU busy/idle split per device and stream, and the
recommendations. All numbers come from `core.analysis.torch.overview`/`recommend` (through
`core.pages.data.OverviewData`), so the widget itself does no aggregation; the document tab
computes them on a worker thread.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.torch import overview
from perfview.core.analysis.torch.backends import device_label
from perfview.core.analysis.torch.findings import Finding
from perfview.core.model import Timeline
from perfview.core.model.units import format_bytes, format_ns
from perfview.core.pages.data import OverviewData
from perfview.qt import deferred
from perfview.qt.document import Document
from perfview.qt.views.recommendations_view import FindingsList
from perfview.qt.views.step_chart import BREAKDOWN_LABELS, StepBreakdownChart
from perfview.qt.views.table_view import TableView


def _card(title: str, rows: list[tuple[str, str]], parent: QWidget) -> QFrame:
    frame = QFrame(parent)
    frame.setObjectName("card")
    frame.setStyleSheet("#card { border: 1px solid palette(mid); border-radius: 6px; }")
    grid = QGridLayout(frame)
    grid.setContentsMargins(10, 8, 10, 8)
    grid.setHorizontalSpacing(12)
    grid.setVerticalSpacing(2)
    head = QLabel(f"<b>{title}</b>", frame)
    grid.addWidget(head, 0, 0, 1, 2)
    for i, (key, value) in enumerate(rows, start=1):
        k = QLabel(key, frame)
        k.setStyleSheet("color: palette(placeholder-text);")
        v = QLabel(value, frame)
        v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(k, i, 0)
        grid.addWidget(v, i, 1)
    return frame


def _section(text: str, parent: QWidget) -> QLabel:
    label = QLabel(f"<h3 style='margin:0'>{text}</h3>", parent)
    label.setContentsMargins(0, 10, 0, 2)
    return label


class TorchOverviewView(QScrollArea, deferred.BuiltInTurns):
    """The Overview tab. `open_recommendations` asks the document tab for the full list."""

    open_recommendations = Signal()
    chart_ready = Signal()  # the step breakdown chart exists (it may be built a turn later)

    def __init__(
        self,
        timeline: Timeline,
        document: Document | None = None,
        data: OverviewData | None = None,
        parent: QWidget | None = None,
        *,
        defer_chart: bool = False,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self._defer_chart = defer_chart
        self.data = data if data is not None else OverviewData.compute(timeline)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget(self)
        self.body_layout = QVBoxLayout(body)
        self.body_layout.setContentsMargins(12, 8, 12, 12)
        self._add_cards(body)
        self._add_breakdown(body)
        self.setWidget(body)
        # In a new tab the rest comes on the next event-loop turns, a few ms each: on a busy
        # machine every ms of GUI-thread work stretches 3-5x.
        self.build_in_turns(
            [lambda: self._add_utilization(body), lambda: self._add_findings(body)],
            defer_chart,
            lambda: self.body_layout.addStretch(1),
        )

    # --- sections ----------------------------------------------------------------------------
    def _add_cards(self, body: QWidget) -> None:
        row = QHBoxLayout()
        devices = self.data.devices
        used = devices[devices["used"]] if len(devices) else devices
        self.device_cards: list[QFrame] = []
        for dev in used.to_dict("records"):  # a handful of GPUs at most
            title = f"{device_label(dev.get('backend'))} {dev['id']}"
            card = _card(
                title if dev["name"] == title else f"{title}: {dev['name']}",
                [
                    ("Memory", format_bytes(float(dev["memory_bytes"]))),
                    ("SMs", str(dev["sms"])),
                    ("Compute capability", str(dev["compute_capability"])),
                ],
                body,
            )
            self.device_cards.append(card)
            row.addWidget(card)
        if not self.device_cards:
            none = ("Accelerator", "none recorded (CPU-only trace)")
            row.addWidget(_card("Devices", [none], body))
        if len(devices) > len(used):
            note = QLabel(f"(+{len(devices) - len(used)} idle GPUs on the machine)", body)
            note.setStyleSheet("color: palette(placeholder-text);")
            row.addWidget(note)
        s = self.data.stats
        self.steps_card = _card(
            f"Steps: {s.count}",
            [
                ("Mean", format_ns(s.mean_ns)),
                ("Median", format_ns(s.median_ns)),
                ("Min / max", f"{format_ns(float(s.min_ns))} / {format_ns(float(s.max_ns))}"),
            ]
            if s.count
            else [("ProfilerStep", "no ProfilerStep#N slices in this trace")],
            body,
        )
        row.addWidget(self.steps_card)
        row.addStretch(1)
        self.body_layout.addLayout(row)

    def _add_breakdown(self, body: QWidget) -> None:
        steps = self.data.steps
        self.body_layout.addWidget(_section("Step time breakdown", body))
        if not len(steps):
            self.chart: StepBreakdownChart | None = None
            if self.data.no_steps is None:
                self.body_layout.addWidget(QLabel("No ProfilerStep#N slices to break down.", body))
                return
            from perfview.qt.views.no_steps_view import NoStepsPanel

            self.no_steps = NoStepsPanel(
                self.data.no_steps, self.document, body, defer=self._defer_chart
            )
            self.no_steps.chart_ready.connect(self.chart_ready)
            self.body_layout.addWidget(self.no_steps)
            return
        total = float(steps["dur_ns"].sum())
        shares = [
            f"{BREAKDOWN_LABELS[n]} {steps[f'{n}_ns'].sum() * 100 / total:.1f} %"
            for n in overview.BREAKDOWN
            if total > 0 and steps[f"{n}_ns"].sum() > 0
        ]
        caption = QLabel("Share of all step time: " + " · ".join(shares), body)
        caption.setWordWrap(True)
        self.body_layout.addWidget(caption)
        self.chart = StepBreakdownChart(steps, body)
        self.body_layout.addWidget(self.chart)
        if self._defer_chart:  # as when a turn builds it: the signal after the page's own
            deferred.later(self.chart, self.chart_ready.emit)

    def _add_utilization(self, body: QWidget) -> None:
        self.body_layout.addWidget(_section("GPU utilization", body))
        util = self.data.utilization
        if not len(util):
            self.utilization_table: TableView | None = None
            self.body_layout.addWidget(QLabel("No GPU activity in this trace.", body))
            return
        self.utilization_table = TableView(util, None, kind="op", key_column="stream")
        self.utilization_table.filter_edit.hide()
        rows = len(util) + 1
        height = self.utilization_table.table.verticalHeader().defaultSectionSize()
        self.utilization_table.setFixedHeight(min(rows, 12) * height + 48)
        self.body_layout.addWidget(self.utilization_table)

    def _add_findings(self, body: QWidget) -> None:
        head = QHBoxLayout()
        head.addWidget(_section("Recommendations", body))
        head.addStretch(1)
        button = QPushButton("Open the Recommendations tab", body)
        button.clicked.connect(self._on_open_recommendations)
        head.addWidget(button)
        self.body_layout.addLayout(head)
        self.findings: FindingsList | None = None
        self._finding_label: QLabel | None = None
        if self.data.findings is None:  # found in the background (`set_findings`)
            self._finding_label = QLabel("Looking for recommendations…", body)
            self.body_layout.addWidget(self._finding_label)
        else:
            self._add_findings_list(self.data.findings, body, self.body_layout.count())

    def _add_findings_list(self, findings: list[Finding], body: QWidget, index: int) -> None:
        self.findings = FindingsList(findings, compact=True, parent=body)
        if self.document is not None:  # a click selects the finding's slices in the Timeline
            for card in self.findings.cards:
                card.make_clickable(self._show_evidence)
        self.body_layout.insertWidget(index, self.findings)

    def set_findings(self, data: OverviewData) -> None:
        """Show the findings a worker found after the page was drawn (`with_findings`)."""
        self.ensure_built()
        if self.findings is not None or data.findings is None:
            return
        self.data = data
        label, self._finding_label = self._finding_label, None
        index = self.body_layout.count() - 1  # before the closing stretch
        if label is not None:
            index = self.body_layout.indexOf(label)
            self.body_layout.removeWidget(label)
            label.hide()
            label.deleteLater()
        body = self.widget()
        assert body is not None
        self._add_findings_list(data.findings, body, index)

    def _show_evidence(self, finding: Finding) -> None:
        if self.document is not None:
            self.document.show_slices(finding.rows)

    def _on_open_recommendations(self) -> None:
        self.open_recommendations.emit()
        if self.document is not None:
            self.document.request_view("recommendations")

    # --- test / script helpers ---------------------------------------------------------------
    def step_count(self) -> int:
        return int(self.data.stats.count)


__all__ = ["OverviewData", "StepBreakdownChart", "TorchOverviewView"]
