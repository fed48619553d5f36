"""IcicleView: click zooms to the node, breadcrumb returns, document selection highlights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.core.layout.test_flame import make_tree

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui


def small_tree(estimated: bool = False):
    #          root(10)
    #        /        \
    #     a(6)        b(3)
    #    /    \
    #  c(4)   d(1)
    tree = make_tree([-1, 0, 0, 1, 1], ["", "a", "b", "c", "d"], [10, 6, 3, 4, 1])
    tree.estimated = estimated
    return tree


@pytest.fixture
def icicle(qtbot):
    from perfview.qt.views.icicle_view import IcicleView

    view = IcicleView(small_tree())
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_layout_and_root_range(icicle) -> None:
    assert icicle.x_range() == pytest.approx((0.0, 10.0))
    assert icicle.node_span(3) == (0.0, 4.0)
    assert icicle.node_span(2) == (6.0, 9.0)
    assert not icicle.badge.isVisibleTo(icicle)


def test_click_zooms_to_the_node_and_breadcrumb_goes_back(icicle) -> None:
    icicle._on_click(7.5, 1.5)  # inside b = [6, 9] at depth 1
    assert icicle.x_range() == pytest.approx((6.0, 9.0))
    assert icicle.path == [0, 2]
    assert 'href="0"' in icicle.breadcrumb.text()
    icicle.breadcrumb.linkActivated.emit("0")
    assert icicle.x_range() == pytest.approx((0.0, 10.0))


def test_hover_tooltip_text(icicle) -> None:
    text = icicle.tooltip(1)
    assert "<b>a</b>" in text
    assert "60.0 % of root" in text


def test_search_highlights_matching_nodes(icicle) -> None:
    assert icicle.set_search("C") == 1
    assert icicle.set_search("") == 0


def test_estimated_badge_shown(qtbot) -> None:
    from perfview.qt.views.icicle_view import ESTIMATED_TEXT, IcicleView

    view = IcicleView(small_tree(estimated=True))
    qtbot.addWidget(view)
    assert view.badge.isVisibleTo(view)
    assert view.badge.text() == ESTIMATED_TEXT


def test_document_selection_highlights_node(qtbot) -> None:
    from perfview.core.model import Bundle
    from perfview.qt.document import Document, Selection
    from perfview.qt.views.icicle_view import IcicleView

    tree = small_tree()
    doc = Document(Bundle(format="trace", path=Path("t.json"), tree=tree))
    view = IcicleView(tree, doc)
    qtbot.addWidget(view)
    view.resize(900, 400)
    doc.select(Selection(kind="op", name="d"))
    highlighted = view.batch._highlight
    assert highlighted is not None
    assert highlighted.rects.node.tolist() == [4]
    assert view.batch._selected == (4.0, 5.0, 2)
    # And the other way: clicking a node tells the document.
    with qtbot.waitSignal(doc.selection_changed):
        view.select_node(3)
    assert doc.selection.kind == "node"
    assert doc.selection.name == "c"
    assert doc.selection.node == 3


def test_sandwich_from_tree(qtbot) -> None:
    from perfview.qt.views.sandwich_view import SandwichView

    view = SandwichView(small_tree())
    qtbot.addWidget(view)
    view.show_function("a")
    callees = [view.callees.item(i, 0).text() for i in range(view.callees.rowCount())]
    assert callees == ["c", "d"]
    assert view.callers.item(0, 0).text() == "(root)"


def test_many_nodes_render(qtbot) -> None:
    from perfview.qt.views.icicle_view import IcicleView

    rng = np.random.default_rng(1)
    n = 5000
    parent = np.r_[-1, [rng.integers(0, i) for i in range(1, n)]]
    total = rng.random(n) + 0.1
    # Totals must cover children: accumulate bottom-up (children have larger ids).
    for i in range(n - 1, 0, -1):
        total[parent[i]] += total[i]
    tree = make_tree(parent.tolist(), ["", *[f"f{i % 50}" for i in range(1, n)]], total.tolist())
    view = IcicleView(tree)
    qtbot.addWidget(view)
    view.resize(1000, 500)
    view.show()
    qtbot.waitExposed(view)
    view.plot.grab()
    stats = view.batch.stats
    assert 0 < stats["visible"] <= n


def test_lane_selector_rebuilds_the_tree_off_thread(qtbot, tmp_path: Path) -> None:
    from perfview.core.analysis import bundle_tree
    from perfview.loaders import load
    from perfview.qt.document import Document
    from perfview.qt.views.icicle_view import IcicleView
    from tests.core.analysis.test_trace_tree import _kineto

    _kineto(tmp_path)
    bundle = load(tmp_path / "k.json")
    doc = Document(bundle)
    tree = doc.tree()
    assert tree is bundle_tree.tree_for(bundle)
    view = IcicleView(tree, doc)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.lanes_ready, timeout=10_000):
        pass  # the lane list is found on a worker; its result arrives through the event loop
    keys = [view.lanes_box.itemData(i).key for i in range(view.lanes_box.count())]
    assert keys[:3] == ["cpu", "gpu", "all"]
    assert view.total[0] == 900_000
    with qtbot.waitSignal(view.lanes_changed, timeout=10_000) as blocker:
        view.lanes_box.setCurrentIndex(keys.index("gpu"))
    assert blocker.args == ["gpu"]
    assert view.total[0] == 300_000
    assert view.tree is not tree
    assert doc.tree() is tree  # other views keep the document's tree


def test_unplaced_time_badge(qtbot) -> None:
    from perfview.loaders import load
    from perfview.qt.views.icicle_view import IcicleView
    from tests.conftest import DATA

    bundle = load(DATA / "module_eval_collision.prof")
    view = IcicleView(bundle.tree, None, bundle.profile)
    qtbot.addWidget(view)
    assert view.notes_badge.isVisibleTo(view)
    assert "colliding pstats keys" in view.notes_badge.text()
    assert "moved to extra top-level nodes" in view.notes_badge.text()
    assert "run_module" in view.notes_badge.toolTip()
    assert not view.lanes_box.isVisibleTo(view)  # no lanes to choose in a pstats profile
    plain = IcicleView(small_tree(estimated=True))
    qtbot.addWidget(plain)
    assert not plain.notes_badge.isVisibleTo(plain)
