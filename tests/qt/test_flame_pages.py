"""Bottom-up flame graph and flame sandwich pages, for pstats, traces and sampled profiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from perfview import loaders
from perfview.core.analysis import flame_sandwich
from perfview.core.analysis.calltree import tree_from_folded
from perfview.qt.document import Selection
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.qt.views.flame_pages import BottomUpView, FlameSandwichView

pytestmark = pytest.mark.gui

FOLDED = "main;a;f;g 3\nmain;b;f 2\nmain;f;f;h 4\nmain;c 1\n"


@pytest.fixture
def window(qtbot, tmp_path: Path) -> MainWindow:
    win = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(win)
    return win


def _open(window: MainWindow, qtbot, path: Path):
    with qtbot.waitSignal(window.document_opened, timeout=30_000) as blocker:
        window.open_path(path, remember=False)
    return blocker.args[0]


def test_core_callers_and_callees() -> None:
    tree = tree_from_folded(FOLDED)
    callers = flame_sandwich.callers_tree(tree, "f")
    top = callers.children(0)
    assert [callers.name(int(n)) for n in top] == ["f"]
    # f's outermost total is 3 + 2 + 4 = 9, split over its callers a, b and main
    kids = callers.children(int(top[0]))
    by_name = {callers.name(int(k)): callers.metrics["total_ns"][k] for k in kids}
    assert by_name == {"main": 4.0, "a": 3.0, "b": 2.0}
    callees = flame_sandwich.callees_tree(tree, "f")
    assert callees.metrics["total_ns"][0] == 9.0
    names = {callees.name(int(k)) for k in callees.children(int(callees.children(0)[0]))}
    assert names == {"f", "g"}
    assert flame_sandwich.heaviest_function(tree) == "h"


def test_sampled_tab_pages(window: MainWindow, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "stacks.folded"
    path.write_text(FOLDED)
    tab = _open(window, qtbot, path)
    names = tab.view_names()
    for page in ("icicle", "bottom-up", "functions", "sandwich", "callers", "tree"):
        assert page in names
    bottom = tab.view_widget("bottom-up")
    assert isinstance(bottom, BottomUpView)
    assert bottom.icicle is not None
    assert bottom.icicle.total[0] == 10.0
    top_names = {bottom.icicle.node_names[k] for k in bottom.icicle.tree.children(0)}
    assert top_names == {"h", "g", "f", "c"}  # where the samples were taken
    table = tab.view_widget("functions")
    assert "self_samples" in table.model.frame.columns


def test_sandwich_follows_selection(window: MainWindow, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "stacks.folded"
    path.write_text(FOLDED)
    tab = _open(window, qtbot, path)
    sandwich = tab.view_widget("sandwich")
    assert isinstance(sandwich, FlameSandwichView)
    assert sandwich.name == "h"  # the heaviest self weight first
    tab.document.select(Selection(kind="node", name="f"))
    assert sandwich.name == "h"  # hidden: nothing is derived until the page shows
    assert sandwich.pending == "f"
    window.show()
    tab.show_view("sandwich")
    qtbot.waitUntil(lambda: sandwich.name == "f", timeout=5000)
    tab.document.select(Selection(kind="node", name="g"))  # visible: at once
    assert sandwich.name == "g"
    tab.document.select(Selection(kind="node", name="f"))
    assert sandwich.callers is not None
    assert sandwich.callees is not None
    assert sandwich.callers.total[0] == 9.0
    assert not sandwich.callers.viewbox.yInverted()  # callers grow upwards
    assert sandwich.callees.viewbox.yInverted()


@pytest.mark.parametrize(
    "rel", ["pstats/gprof2dot_print1.pstats", "chrome_trace/catapult_simple_trace.json"]
)
def test_pstats_and_trace_tabs_get_flame_pages(
    window: MainWindow, qtbot, samples_dir: Path, rel: str
) -> None:
    tab = _open(window, qtbot, samples_dir / rel)
    names = tab.view_names()
    assert names.index("bottom-up") == names.index("icicle") + 1
    bottom = tab.view_widget("bottom-up")
    tree = tab.document.tree()
    # the bottom-up tree holds every bit of self time of the original tree
    assert bottom.icicle.total[0] == pytest.approx(tree.metrics["self_ns"][1:].sum())
    sandwich = tab.view_widget("sandwich")
    assert isinstance(sandwich, FlameSandwichView)
    assert sandwich.callers is not None


def test_speedscope_sample_has_threads_and_pages(window: MainWindow, qtbot, samples_dir) -> None:
    tab = _open(
        window, qtbot, samples_dir / "speedscope" / "pyspy_cs336_multithread.speedscope.json"
    )
    assert "threads" in tab.view_names()
    sandwich = tab.view_widget("sandwich")
    bundle = loaders.load(samples_dir / "speedscope" / "pyspy_cs336_multithread.speedscope.json")
    assert sandwich.callers is not None
    assert np.isclose(sandwich.callers.total[0], sandwich.callees.total[0])
    assert bundle.tree is not None


def test_compare_tab_for_two_sampled_profiles(window: MainWindow, qtbot, tmp_path: Path) -> None:
    a, b = tmp_path / "a.folded", tmp_path / "b.folded"
    a.write_text("main;hot 3\nmain;cold 1\n")
    b.write_text("main;hot 9\nmain;cold 1\n")
    with qtbot.waitSignal(window.compare_opened, timeout=30_000) as blocker:
        window.open_compare(a, b)
    tab = blocker.args[0]
    assert tab.view_names() == ["frames-samples"]
    view = tab.view_widget("frames-samples")
    assert view.comparison.table["function"].iat[0] == "hot"
