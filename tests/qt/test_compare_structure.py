"""The compare tab's Structure view on two torch recordings (tests/data/diff/structure: the
candidate inserts `aten::tanh` in each forward pass; see tests/core/compare/test_structure.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyqtgraph")

from pytestqt.qtbot import QtBot

from perfview.qt.compare_tab import CompareTab
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.qt.views.compare_structure import CompareStructureView
from perfview.qt.views.compare_timelines import CompareTimelines

STRUCTURE = Path(__file__).resolve().parent.parent / "data" / "diff" / "structure"
pytestmark = pytest.mark.gui


@pytest.fixture
def tab(qtbot: QtBot) -> CompareTab:
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.compare_opened, timeout=30000) as blocker:
        window.open_compare(STRUCTURE / "a.pt.trace.json.gz", STRUCTURE / "b.pt.trace.json.gz")
    tab = blocker.args[0]
    assert isinstance(tab, CompareTab)
    return tab


def test_structure_view_lists_the_aligned_tree(tab: CompareTab) -> None:
    assert tab.view_names()[-2:] == ["timelines", "structure"]
    assert tab.show_view("structure")
    view = tab.view_widget("structure")
    assert isinstance(view, CompareStructureView)
    assert view.model.rowCount() == 71
    assert "forward/aten::tanh" in view.summary.text()
    view.only.setChecked(True)
    frame = view.model.frame
    assert list(frame["status"]) == ["changed", "inserted", "changed", "inserted"]
    assert list(frame["node"].str.strip()) == [
        "forward",
        "aten::tanh",
        "forward#1",
        "aten::tanh",
    ]
    assert frame["node"].iloc[1].startswith("    ")  # indented under its forward pass


def test_first_divergence_shows_both_timelines_there(tab: CompareTab) -> None:
    tab.show_view("structure")
    view = tab.view_widget("structure")
    assert isinstance(view, CompareStructureView)
    view.first_button.click()
    assert tab.tabs.currentIndex() == tab.view_names().index("timelines")
    pair = tab.view_widget("timelines")
    assert isinstance(pair, CompareTimelines)
    structure = tab.result.structure
    assert structure is not None
    assert structure.first_divergence is not None
    node = structure.table.iloc[structure.first_divergence]
    lo_b, hi_b = pair.view_b.x_range()
    assert lo_b < node["b_at"] < hi_b  # the inserted op, in B
    lo_a, hi_a = pair.view_a.x_range()
    assert lo_a < node["a_at"] < hi_a  # where it would be in A: just after A's ReLU
