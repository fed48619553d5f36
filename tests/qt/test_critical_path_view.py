"""The Critical path page: its charts and tables from the prepared data, what-if edits replayed
in a worker as they change, and a contributor's click selecting its slices on the Timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from perfview.loaders import load
from tests.core.analysis.torch.critical_path._tiny import GPU_BOUND, US, write

pytestmark = pytest.mark.gui


def _tab(qtbot: Any, tmp_path: Path) -> Any:
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    doc = Document(load(write(tmp_path / "gpu.json", GPU_BOUND)))
    tab = DocumentTab(doc)
    qtbot.addWidget(tab)
    tab.show()
    return tab


def test_edits_update_the_prediction(qtbot: Any, tmp_path: Path) -> None:
    tab = _tab(qtbot, tmp_path)
    assert tab.show_view("critical-path")
    view = tab.view_widget("critical-path")
    assert list(view.data.steps["bound_by"]) == ["kernel"]
    with qtbot.waitSignal(view.replayed, timeout=20000) as blocker:
        view.edits.setPlainText("kernel:k2=0.5\n")
    assert blocker.args[0]["predicted_ns"].tolist() == [80 * US]
    assert "80 µs" in view.result.text()
    with qtbot.waitSignal(view.replayed, timeout=20000) as blocker:
        view.edits.setPlainText("warp:k=2\n")
    assert blocker.args[0] is None
    assert "cannot read the edit" in view.result.text()


def test_a_contributor_selects_its_slices(qtbot: Any, tmp_path: Path) -> None:
    tab = _tab(qtbot, tmp_path)
    assert tab.show_view("critical-path")
    view = tab.view_widget("critical-path")
    table = view.contributors
    names = [table.proxy.index(r, 2).data() for r in range(table.proxy.rowCount())]
    row = names.index("k2")
    ev = tab.document.bundle.timeline.events
    k2 = int((ev["name"].astype(str) == "k2").to_numpy().nonzero()[0][0])
    with qtbot.waitSignal(tab.document.slices_requested) as blocker:
        table.table.setCurrentIndex(table.proxy.index(row, 0))
    assert blocker.args == [(k2,)]


def test_the_whole_path_shows_on_the_timeline(qtbot: Any, tmp_path: Path) -> None:
    tab = _tab(qtbot, tmp_path)
    assert tab.show_view("critical-path")
    view = tab.view_widget("critical-path")
    names = tab.document.bundle.timeline.events["name"].astype(str).tolist()
    with qtbot.waitSignal(tab.document.slices_requested) as blocker:
        view.show_path.click()
    on_path = {names[r] for r in blocker.args[0]}
    assert on_path == {"ProfilerStep#1", "cudaLaunchKernel", "k1_gemm", "k2",
                       "cudaDeviceSynchronize"}  # fmt: skip
    assert tab.current_view() == "timeline"


def test_the_idle_and_predicted_charts_are_made_when_first_shown(
    qtbot: Any, tmp_path: Path
) -> None:
    """Only the first chart is built with the page (issue 37: a plot costs 10-30 ms of the
    GUI thread); the others, drawn from the same data, when their tab is first shown."""
    tab = _tab(qtbot, tmp_path)
    assert tab.show_view("critical-path")
    view = tab.view_widget("critical-path")
    qtbot.waitUntil(lambda: view.prediction is not None, timeout=20_000)
    assert view.idle_plot is None
    assert view.predicted_plot is None
    view.charts.setCurrentIndex(1)
    assert view.idle_plot is not None
    assert "bars: step and stream" in view.idle_legend.text()
    view.charts.setCurrentIndex(2)
    assert view.predicted_plot is not None
    assert len(view.predicted_plot.getPlotItem().items) == 2  # measured and predicted bars
    assert "predicted" in view.predicted_legend.text()
