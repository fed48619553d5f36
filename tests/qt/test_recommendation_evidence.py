"""Clicking a recommendation selects its evidence slices in the Timeline, zoomed to the first."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from perfview.loaders import load
from tests.conftest import DATA

pytestmark = pytest.mark.gui


def test_click_selects_the_loop_in_the_timeline(qtbot: Any) -> None:
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    doc = Document(load(DATA / "demos" / "pairwise-loop-slow.pt.trace.json.gz"))
    tab = DocumentTab(doc)
    qtbot.addWidget(tab)
    tab.show()
    assert tab.show_view("recommendations")
    view = tab.view_widget("recommendations")
    card = next(c for c in view.list.cards if c.finding.title.startswith("Element-wise Python"))
    rows = card.finding.rows
    assert "evidence slices" in card.toolTip()
    with qtbot.waitSignal(doc.slices_requested) as blocker:
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert blocker.args == [rows]
    assert tab.current_view() == "timeline"
    timeline = tab.view_widget("timeline")
    assert timeline.selected_row == rows[0]  # the loop's Python frame
    assert list(timeline._matches) == list(rows)
    assert timeline.batch._highlight is not None  # the evidence stands out, the rest is muted
    assert "click: 501 slices in the Timeline" in card.metric_label.text()
    assert timeline.match_label.text() == f"{len(rows):,} slices"
    ev = doc.bundle.timeline.events
    lo, hi = timeline.x_range()
    ts, dur = int(ev["ts"].iat[rows[0]]), int(ev["dur"].iat[rows[0]])
    assert lo <= ts
    assert ts + dur <= hi
    assert hi - lo < dur * 1.2
    assert doc.selection is not None
    assert doc.selection.event == rows[0]


def test_findings_without_rows_are_not_clickable(qtbot: Any) -> None:
    from perfview.core.analysis.torch.recommend import Finding
    from perfview.qt.document import Document
    from perfview.qt.views.recommendations_view import RecommendationsView

    doc = Document(load(DATA / "demos" / "elementwise-chain-fixed.pt.trace.json.gz"))
    view = RecommendationsView([Finding("t", "low", "e", "m", 1.0, 0.0)], doc)
    qtbot.addWidget(view)
    assert view.list.cards[0].on_click is None


def test_overview_findings_are_clickable_too(qtbot: Any) -> None:
    from perfview.qt.document import Document
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = Document(load(DATA / "demos" / "elementwise-chain-slow.pt.trace.json.gz"))
    view = TorchOverviewView(doc.bundle.timeline, doc)
    qtbot.addWidget(view)
    card = view.findings.cards[0]
    assert card.finding.title == "Chains of unfused element-wise operators"
    with qtbot.waitSignal(doc.slices_requested) as blocker:
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    assert blocker.args == [card.finding.rows]
