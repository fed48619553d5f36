"""CompareView on the recorded cProfile pair: header, sortable delta table, swap, icicle colours."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyqtgraph")

from PySide6.QtCore import Qt

from perfview.core.compare.diff import Comparison, diff_profiles
from perfview.core.layout import colors
from perfview.qt.views.compare_view import STEPS, CompareView

DIFF = Path(__file__).resolve().parent.parent / "data" / "diff"
pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    from perfview.loaders import load

    return diff_profiles(load(DIFF / "run_a.prof"), load(DIFF / "run_b.prof"))


def node_named(view: CompareView, name: str) -> int:
    tree = view.comparison.tree
    assert tree is not None
    return next(i for i in range(len(tree)) if tree.name(i) == name)


def test_header_table_and_icicle(qtbot, comparison: Comparison, tmp_path: Path) -> None:
    view = CompareView(comparison)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    qtbot.waitExposed(view)
    header = view.header.text()
    assert "run_a.prof" in header
    assert "+135" in header or "+13" in header  # B's total is about 2.4x A's
    assert view.table_view is not None
    model = view.table_view.model
    assert model.rowCount() == len(comparison.table)
    assert model.display(0, model.column_index("function")) == "hot"
    column = model.column_index("tottime_ns_pct")
    # a long header over short numbers is drawn on two lines; its tooltip is the one line
    assert model.headerData(column, Qt.Orientation.Horizontal).replace("\n", " ") == "Δ% tottime"
    tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert tip == "Δ% tottime"
    assert model.display(0, model.column_index("tottime_ns_a")).endswith("ms")
    # Sorting by Δ% ascending puts a shrinking row first.
    view.table_view.proxy.sort(model.column_index("tottime_ns_pct"), Qt.SortOrder.AscendingOrder)
    assert model.display(0, model.column_index("status")) == "-"
    # Icicle: one rect per merged node; `hot` is red (slower), and hover shows both runs.
    rects = view.icicle.rects
    assert comparison.tree is not None
    assert len(rects) == len(comparison.tree)
    hot = node_named(view, "hot")
    bucket = int(rects.bucket[np.flatnonzero(rects.node == hot)[0]])
    assert bucket == STEPS - 1
    assert colors.diverging_palette(STEPS)[bucket][0] > 200  # red end
    text = view.hover_text(hot)
    assert text.startswith("hot\nA: 75.2 ms   B: 214 ms")
    assert "+185" in text
    path = tmp_path / "compare.png"
    assert view.grab().save(str(path))
    assert path.stat().st_size > 10_000


def test_swap_flips_order_and_colours(qtbot, comparison: Comparison) -> None:
    view = CompareView(comparison)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.swapped, timeout=5000) as blocker:
        view.swap_button.click()
    swapped = blocker.args[0]
    assert swapped.path_a == comparison.path_b
    assert "run_b.prof: 275" in view.header.text() or view.header.text().count("run_b") >= 1
    model = view.table_view.model  # type: ignore[union-attr]
    # Rows go by |Δ|: `hot` is still the largest change, now a speed-up.
    assert model.display(0, model.column_index("function")) == "hot"
    assert model.display(0, model.column_index("status")) == "-"
    rects = view.icicle.rects
    hot = node_named(view, "hot")
    assert int(rects.bucket[np.flatnonzero(rects.node == hot)[0]]) == 0  # blue end: faster
