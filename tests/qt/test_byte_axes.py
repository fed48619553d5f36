"""Every memory plot's byte axis ticks at 1-2-5 steps of the unit shown, legends sit beside
the data, and a snapshot whose activity comes late starts where it does (with the whole
recording one tick away). On real captures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core.layout.extent import busy_start
from perfview.core.model.units import byte_tick_labels, byte_ticks
from perfview.loaders import load
from perfview.qt.document import Document
from tests.conftest import sample

pytestmark = pytest.mark.gui

LATE = "cuda_memory_snapshot/cs336_silmont_mem_snapshot.pickle"
MPROF = "mprof_dat/seqsharp_mprof_children.dat"


def _axis_labels(plot: Any) -> list[str]:
    axis = plot.getPlotItem().getAxis("left")
    lo, hi = plot.getPlotItem().getViewBox().viewRange()[1]
    levels = axis.tickValues(lo, hi, 300)
    values = levels[0][1]
    return list(axis.tickStrings(values, 1.0, levels[0][0]))


def test_a_late_snapshot_starts_where_memory_use_does_and_shows_the_whole_on_request(
    qtbot: Any,
) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample(LATE))))
    qtbot.addWidget(tab)
    page: Any = tab.view_widget("timeline")
    chart = page.chart
    x0, x1 = chart.extent
    assert chart.start is not None
    assert chart.start - x0 > 0.5 * (x1 - x0)  # 85 % of this capture is before its activity
    view = chart.plot.getPlotItem().getViewBox()
    assert view.viewRange()[0][0] >= chart.start - 0.02 * (x1 - x0)
    assert chart.whole.isVisibleTo(chart)
    chart.whole.setChecked(True)
    assert view.viewRange()[0][0] <= x0
    chart.whole.setChecked(False)
    assert view.viewRange()[0][0] >= chart.start - 0.02 * (x1 - x0)
    labels = _axis_labels(chart.plot)  # 0 … 3.03 GiB: half-GiB steps, never '1.91 GiB'
    lo, hi = view.viewRange()[1]
    assert labels == byte_tick_labels(byte_ticks(lo, hi, 7), lo, hi, 7)
    assert all(t in ("0", "512 MiB") or t.endswith(("GiB", "5 GiB")) for t in labels)


def test_mprof_plots_tick_round_bytes_with_the_legend_beside_the_curves(qtbot: Any) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample(MPROF))))
    qtbot.addWidget(tab)
    tab.resize(1024, 700)
    tab.show()
    qtbot.waitExposed(tab)
    splitter: Any = tab.view_widget("memory")
    view = splitter.widget(0)  # the plot above the runs' table
    plot = view.plot
    plot.getPlotItem().getViewBox().autoRange()
    labels = _axis_labels(plot)
    assert "2 GiB" in labels
    assert "4 GiB" in labels  # data in MiB, ticks round in bytes
    item = plot.getPlotItem()
    legend = item.legend
    assert legend is not None
    assert legend.parentItem() is item
    # beside the view box, not over it
    view_box = item.getViewBox().sceneBoundingRect()
    assert legend.sceneBoundingRect().left() >= view_box.right() - 1


def test_busy_start_leaves_a_capture_that_starts_busy_whole() -> None:
    x = np.arange(100.0)
    assert busy_start(x, np.full(100, 5.0)) is None
    late = np.where(x < 80, 0.0, 10.0)
    start = busy_start(x, late)
    assert start is not None
    assert 78 <= start <= 79
    assert busy_start(x, np.where(x < 10, 0.0, 10.0)) is None  # 10 % blank: kept


def test_a_torch_memory_plot_that_starts_busy_is_shown_whole(qtbot: Any) -> None:
    """resnet50's first allocation comes 7 % into the trace: nothing worth leaving out."""
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(
        Document(load(sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")))
    )
    qtbot.addWidget(tab)
    view: Any = tab.view_widget("memory")
    assert view.start is None
    assert not view.whole.isVisibleTo(view)
    lo, _hi = view._extent()
    assert view.plot.getPlotItem().getViewBox().viewRange()[0][0] <= lo
    assert "1 GiB" in _axis_labels(view.plot) or "2 GiB" in _axis_labels(view.plot)
