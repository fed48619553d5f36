"""Recommendations page: the findings of `core.analysis.torch.recommend`, one card per finding.

A card shows the severity as a coloured badge, the title, and the evidence sentence with its
numbers, plus the metric against its threshold, so the user sees *why* a rule fired rather
than just that it did. The same widget, in compact form, sits at the bottom of the Overview.
A finding that names its evidence slices (`Finding.rows`) is clickable: the click selects those
slices together in the Timeline and zooms to the first (`Document.show_slices`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from perfview.core.analysis.torch.recommend import Finding
from perfview.qt.document import Document

SEVERITY_COLORS = {"high": "#d1495b", "medium": "#edae49", "low": "#66a182"}
SEVERITY_MARKS = {"high": "▲", "medium": "◆", "low": "●"}


def _metric_text(finding: Finding) -> str:
    value, threshold = finding.value, finding.threshold
    fmt = "{:,.1f}" if abs(value) < 1000 else "{:,.0f}"
    return f"{finding.metric} = {fmt.format(value)} (threshold {threshold:,.4g})"


class FindingCard(QFrame):
    """One finding: severity badge, bold title, evidence, metric vs threshold."""

    def __init__(self, finding: Finding, compact: bool = False, parent: QWidget | None = None):
        super().__init__(parent)
        self.finding = finding
        color = SEVERITY_COLORS.get(finding.severity, "#888888")
        self.setObjectName("findingCard")
        self.setStyleSheet(
            f"#findingCard {{ border: 1px solid palette(mid); border-left: 5px solid {color};"
            " border-radius: 4px; }"
        )
        mark = SEVERITY_MARKS.get(finding.severity, "•")
        self.badge = QLabel(f"{mark} {finding.severity.upper()}", self)
        self.badge.setStyleSheet(f"color: {color}; font-weight: bold;")
        self.badge.setMinimumWidth(80)
        self.title = QLabel(f"<b>{finding.title}</b>", self)
        self.evidence = QLabel(finding.evidence, self)
        self.evidence.setWordWrap(True)
        self.evidence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head = QHBoxLayout()
        head.addWidget(self.badge)
        head.addWidget(self.title, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(3)
        layout.addLayout(head)
        layout.addWidget(self.evidence)
        self.metric_label: QLabel | None = None
        if not compact:
            self.metric_label = QLabel(_metric_text(finding), self)
            self.metric_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            layout.addWidget(self.metric_label)
        self.on_click: Callable[[Finding], None] | None = None

    def make_clickable(self, on_click: Callable[[Finding], None]) -> None:
        """Clicking the card calls `on_click(finding)` (only for findings with evidence rows)."""
        if not self.finding.rows:
            return
        self.on_click = on_click
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        where = f" in {self.finding.where}" if self.finding.where else ""
        self.setToolTip(
            f"Click to select the {len(self.finding.rows):,} evidence slices{where} in the Timeline"
        )
        if self.metric_label is not None:
            count = f"{len(self.finding.rows):,} slices in the Timeline"
            self.metric_label.setText(f"{self.metric_label.text()} · click: {count}")

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.on_click is not None and event.button() == Qt.MouseButton.LeftButton:
            self.on_click(self.finding)
            event.accept()
            return
        super().mousePressEvent(event)


class FindingsList(QWidget):
    """Cards for `findings` (most severe first, as `recommendations` returns them)."""

    def __init__(
        self, findings: Sequence[Finding], compact: bool = False, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.findings = list(findings)
        self.cards = [FindingCard(f, compact, self) for f in self.findings]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        if not self.cards:
            empty = QLabel("No findings: none of the rules fired on this trace.", self)
            empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            layout.addWidget(empty)
        for card in self.cards:
            layout.addWidget(card)


class RecommendationsView(QScrollArea):
    """The Recommendations tab: a heading and a scrolling list of finding cards."""

    def __init__(
        self,
        findings: Sequence[Finding],
        document: Document | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 12, 12, 12)
        n = len(findings)
        heading = QLabel(
            f"<h3>Recommendations</h3>{n} finding{'s' if n != 1 else ''}, most severe first. "
            "Each states the numbers it is based on; click one that points at slices to "
            "select them in the Timeline.",
            body,
        )
        heading.setWordWrap(True)
        self.list = FindingsList(findings, parent=body)
        if document is not None:
            for card in self.list.cards:
                card.make_clickable(self.show_evidence)
        layout.addWidget(heading)
        layout.addWidget(self.list)
        layout.addStretch(1)
        self.setWidget(body)

    def titles(self) -> list[str]:
        return [f.title for f in self.list.findings]

    def show_evidence(self, finding: Finding) -> None:
        """Select the finding's evidence slices in the Timeline, zoomed to the first."""
        if self.document is not None and finding.rows:
            self.document.show_slices(finding.rows)


__all__ = ["SEVERITY_COLORS", "FindingCard", "FindingsList", "RecommendationsView"]
