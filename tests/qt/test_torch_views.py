"""Torch analysis pages (issue 8, GUI): overview, operators, kernels, memory, ranks, advice.

Every check compares what a page shows with the Qt-free `core.torch` function it displays, on
the real GPU traces in the shared samples (skipped when they are absent).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QLabel

from perfview.core.analysis.torch import memory_alloc, op_kernels, recommend
from perfview.core.model import Bundle
from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
NCCL = "kineto_gpu/hta_nccl_data.json.gz"


@cache
def _bundle(rel: str) -> Bundle:
    from perfview.loaders import load

    return load(sample(rel))


def _document(rel: str) -> Any:
    from perfview.qt.document import Document

    return Document(_bundle(rel))


@pytest.mark.parametrize(("rel", "steps"), [(RESNET, 6), (NCCL, 3)])
def test_overview_shows_the_step_count(qtbot: Any, rel: str, steps: int) -> None:
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = _document(rel)
    view = TorchOverviewView(doc.bundle.timeline, doc)
    qtbot.addWidget(view)
    assert view.step_count() == steps
    texts = [label.text() for label in view.steps_card.findChildren(QLabel)]
    assert f"<b>Steps: {steps}</b>" in texts
    assert len(view.device_cards) == 1  # one GPU used, the rest of the machine's listed idle
    assert view.chart is not None
    heights = sum(view.chart.heights.values())
    durations = view.data.steps["dur_ns"].to_numpy()
    assert heights == pytest.approx(durations)  # the stacked categories add up to each step
    with qtbot.waitSignal(doc.view_requested) as blocker:
        view._on_open_recommendations()
    assert blocker.args == ["recommendations"]


def test_overview_in_a_tab_has_its_chart_at_once(qtbot: Any) -> None:
    """The chart is painted, not a pyqtgraph plot: cheap enough to build with the page (the
    plot, its bars and its legend took three turns of ~10 ms); `chart_ready` a turn later."""
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = _document(NCCL)
    view = TorchOverviewView(doc.bundle.timeline, doc, defer_chart=True)
    qtbot.addWidget(view)
    assert view.chart is not None
    heights = sum(view.chart.heights.values())
    assert heights == pytest.approx(view.data.steps["dur_ns"].to_numpy())
    assert view.chart.legend_names == ["comm", "kernel", "memcpy", "memset", "runtime",
                                       "cpu_exec", "other"]  # fmt: skip
    with qtbot.waitSignal(view.chart_ready):
        pass


def test_overview_in_a_tab_adds_its_tables_on_later_turns(qtbot: Any) -> None:
    """The GPU utilization table and the findings come on later turns (a few ms each)."""
    from perfview.qt import deferred
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = _document(NCCL)
    view = TorchOverviewView(doc.bundle.timeline, doc, defer_chart=True)
    qtbot.addWidget(view)
    assert "utilization_table" not in view.__dict__
    deferred.flush()
    assert view.utilization_table is not None
    assert view.utilization_table.table.model().rowCount() == len(view.data.utilization)
    asked = TorchOverviewView(doc.bundle.timeline, doc, defer_chart=True)
    qtbot.addWidget(asked)
    asked.ensure_built()  # a caller that needs the whole page (findings found early)
    assert asked.utilization_table is not None
    assert "findings" in asked.__dict__


def test_document_tab_orders_torch_pages(qtbot: Any) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(_document(RESNET))
    qtbot.addWidget(tab)
    names = tab.view_names()
    assert names[:6] == ["overview", "timeline", "operators", "kernels", "memory",
                         "recommendations"]  # fmt: skip
    assert type(tab.view_widget("overview")).__name__ == "TorchOverviewView"
    assert type(tab.view_widget("memory")).__name__ == "TorchMemoryView"


def test_ops_view_expands_an_op_to_its_kernels(qtbot: Any) -> None:
    from perfview.qt.views.torch_ops_view import TorchOpsView

    doc = _document(RESNET)
    timeline = doc.bundle.timeline
    view = TorchOpsView(timeline, doc)
    qtbot.addWidget(view)
    op = "aten::cudnn_convolution"
    expected = op_kernels.op_kernels_table(timeline, op)
    assert len(expected) > 0
    assert view.show_op(op) == len(expected)
    assert view.kernels.model.rowCount() == len(expected)
    assert int(view.kernels.model.frame["calls"].sum()) == int(expected["calls"].sum())
    assert view.stack.count() > 0
    # Selecting the op row in the table selects it in the document and fills the pane.
    row = view.ops.model.find_rows("name", op)[0]
    proxy_row = view.ops.proxy.mapFromSource(view.ops.model.index(row, 0)).row()
    with qtbot.waitSignal(doc.selection_changed):
        view.ops.table.selectRow(proxy_row)
    assert doc.selection.name == op
    assert view.current_op == (op, None)
    # By-shape toggle swaps in the name + shape table.
    view.by_shape.setChecked(True)
    assert "shape" in view.ops.model.column_names()


def test_kernels_view_shows_launches_and_jumps_to_the_timeline(qtbot: Any) -> None:
    from perfview.core.analysis.torch import kernels
    from perfview.qt.views.torch_kernels_view import TorchKernelsView

    doc = _document(NCCL)
    timeline = doc.bundle.timeline
    view = TorchKernelsView(timeline, doc)
    qtbot.addWidget(view)
    name = str(kernels.kernels_table(timeline)["name"].iloc[0])
    view.show_kernel(name)
    rows = kernels.kernel_rows(timeline)
    assert view.launches.model.rowCount() == int((rows["name"] == name).sum())
    assert view.ops.model.rowCount() >= 1
    first = view.launch_row(0)
    with qtbot.waitSignals([doc.view_requested, doc.selection_changed]):
        view.open_launch(0)
    assert doc.selection.kind == "event"
    assert doc.selection.event == first


def test_kernels_view_draws_each_top_kernel_s_duration_strip(qtbot: Any) -> None:
    """The strip's marks are the kernel's launch-duration percentiles; a click selects it."""
    import numpy as np

    from perfview.core.analysis.torch import kernels
    from perfview.qt.views.torch_kernels_view import TorchKernelsView

    doc = _document(NCCL)
    timeline = doc.bundle.timeline
    view = TorchKernelsView(timeline, doc)
    qtbot.addWidget(view)
    assert view.spread is not None
    rows = kernels.kernel_rows(timeline)
    heaviest = rows.groupby("name")["dur_ns"].sum().sort_values(ascending=False)
    assert view.spread.labels[0] == heaviest.index[0]
    durations = rows.loc[rows["name"] == heaviest.index[0], "dur_ns"].to_numpy()
    marks = np.cumsum(view.spread.values[0])  # rising segments add up to each mark
    want = np.percentile(durations, [0, 25, 50, 75, 95, 100])
    np.testing.assert_allclose(marks, np.round(want), atol=1)
    view._on_spread_clicked(0)
    assert view.current_kernel == heaviest.index[0]


def test_memory_range_filters_the_allocation_table(qtbot: Any) -> None:
    from perfview.qt.views.torch_memory_view import TorchMemoryView

    doc = _document(RESNET)
    timeline = doc.bundle.timeline
    view = TorchMemoryView(timeline, doc)
    qtbot.addWidget(view)
    allocs = memory_alloc.allocations_table(timeline)
    assert view.table.model.rowCount() == len(allocs)
    assert len(view.peak_items) == 2 * len(memory_alloc.memory_peaks(timeline))
    lo, hi = 300_000_000, 500_000_000
    expected = len(memory_alloc.filter_allocations(allocs, lo, hi))
    assert 0 < expected < len(allocs)
    assert view.set_range_ns(lo, hi) == expected
    assert view.table.model.rowCount() == expected
    # Dragging the region (what the user does) goes through the same filter.
    view.region.setRegion((0.1, 0.2))
    view.region.sigRegionChangeFinished.emit(view.region)
    assert view.table.model.rowCount() == len(
        memory_alloc.filter_allocations(allocs, 100_000_000, 200_000_000)
    )
    view.clear_range()
    assert view.table.model.rowCount() == len(allocs)


def test_recommendations_view_lists_the_findings(qtbot: Any) -> None:
    from perfview.qt.views.recommendations_view import RecommendationsView

    timeline = _bundle(NCCL).timeline
    assert timeline is not None
    findings = recommend.recommendations(timeline)
    view = RecommendationsView(findings)
    qtbot.addWidget(view)
    assert len(findings) >= 1
    assert view.titles() == [f.title for f in findings]
    card = view.list.cards[0]
    assert card.finding.severity.upper() in card.badge.text()
    assert card.evidence.text() == findings[0].evidence


def test_overview_without_steps_shows_the_recording_as_one_step(qtbot: Any) -> None:
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = _document("kineto_cpu/dtu_jc_resnet18_cpu_trace.json")
    view = TorchOverviewView(doc.bundle.timeline, doc)
    qtbot.addWidget(view)
    assert view.step_count() == 0
    panel = view.no_steps
    assert "prof.step()" in panel.hint.text()
    heights = sum(panel.chart.heights.values())
    assert heights == pytest.approx(panel.data.steps["dur_ns"].to_numpy())
    assert panel.data.operators["name"].iat[0] == "aten::mkldnn_convolution"


def test_overview_without_steps_builds_its_chart_and_tables_a_turn_later(qtbot: Any) -> None:
    """As the window builds it for a new tab (defer_chart): the chart and the two tables
    come one event-loop turn each after the page, never all inside its constructor."""
    from perfview.qt.views.table_view import TableView
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    doc = _document("kineto_cpu/dtu_jc_resnet18_cpu_trace.json")
    view = TorchOverviewView(doc.bundle.timeline, doc, defer_chart=True)
    qtbot.addWidget(view)
    panel = view.no_steps
    assert panel.chart is None
    assert not panel.findChildren(TableView)
    with qtbot.waitSignal(view.chart_ready, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: len(panel.findChildren(TableView)) == 1, timeout=10_000)
    assert panel.chart is not None
    heights = sum(panel.chart.heights.values())
    assert heights == pytest.approx(panel.data.steps["dur_ns"].to_numpy())
