"""GPU idle, Comm overlap and Launch delays: the definitions of their figures and a chart of
their table's rows above the table (qt/views/answer_page.py, qt/views/bar_chart.py), on a
real HTA trace."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core.pages import PAGES
from tests.conftest import sample

pytestmark = pytest.mark.gui

HTA = "kineto_gpu/hta_sampled_rank-0.json.gz"


def _tab(qtbot: Any) -> Any:
    from perfview.loaders import load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample(HTA))))
    qtbot.addWidget(tab)
    return tab


def test_the_idle_chart_splits_each_stream_s_window_as_its_table(qtbot: Any) -> None:
    from perfview.qt.views.answer_page import AnswerPage

    tab = _tab(qtbot)
    page = tab.view_widget("idle")
    assert isinstance(page, AnswerPage)
    assert page.chart is not None
    frame = tab.document.table("idle")
    assert page.chart.names == ["busy", "host wait", "kernel wait", "other"]
    assert page.chart.labels[0] == f"{frame['device'].iat[0]} · {frame['stream'].iat[0]}"
    # busy + idle causes = the window, bar by bar (what the stacked bar's length says)
    np.testing.assert_allclose(
        page.chart.values.sum(axis=1), frame["busy_ns"] + frame["idle_ns"], rtol=1e-9
    )
    for name in PAGES["idle"].definitions:  # every figure's definition on the page
        assert name in page.caption.text()


def test_launch_delay_histogram_counts_every_launch_and_a_bar_lists_its_own(qtbot: Any) -> None:
    from perfview.qt.views.launch_delays_view import LaunchDelaysView

    tab = _tab(qtbot)
    delays = tab.view_widget("launch-delays")
    assert isinstance(delays, LaunchDelaysView)
    frame = tab.document.table("launch-delays")
    hist = delays.data.histogram
    # the histogram's bars hold every launch of the table, and its outliers
    assert int(hist["launches"].sum()) == int(frame["launches"].sum())
    assert int(hist["outliers"].sum()) == int(frame["outliers"].sum())
    assert delays.launches.model.rowCount() == int(frame["outliers"].sum())  # outliers first
    for name in PAGES["launch-delays"].definitions:
        assert name in delays.caption.text()
    busiest = int(hist["launches"].to_numpy().argmax())
    with qtbot.waitSignal(tab.document.selection_changed):
        delays.show_bucket(busiest)
    listed = delays.launches.model.rowCount()
    assert listed == int(hist["launches"].to_numpy()[busiest])
    lo, hi = int(hist["lo_ns"].to_numpy()[busiest]), int(hist["hi_ns"].to_numpy()[busiest])
    column = delays.launches.model.column_index("delay_ns")
    shown = [int(delays.launches.model.raw(r, column)) for r in range(listed)]
    assert all(lo <= d < hi for d in shown)
    assert tab.document.selection.event in set(delays.rows["row"])


def test_overlap_bars_end_at_the_comm_time(qtbot: Any) -> None:
    tab = _tab(qtbot)
    overlap = tab.view_widget("overlap")
    table = tab.document.table("overlap")
    assert overlap.chart.names == ["overlapped with compute", "exposed communication"]
    np.testing.assert_allclose(overlap.chart.values.sum(axis=1), table["comm_ns"])


def test_a_clicked_bar_selects_its_row_and_a_selected_row_outlines_its_bar(qtbot: Any) -> None:
    from PySide6.QtCore import QPointF, Qt

    tab = _tab(qtbot)
    tab.resize(1400, 900)
    tab.show()
    tab.show_view("idle")
    page = tab.view_widget("idle")
    qtbot.waitExposed(page)
    chart = page.chart
    plot = chart._plot_rect()
    with qtbot.waitSignal(chart.bar_clicked) as clicked:
        qtbot.mouseClick(
            chart,
            Qt.MouseButton.LeftButton,
            pos=QPointF(plot.left() + 5, plot.top() + 16 + 6 + 8).toPoint(),
        )
    assert clicked.args == [1]
    rows = page.table.selected_proxy_rows()
    assert len(rows) == 1
    source = page.table.proxy.mapToSource(page.table.proxy.index(rows[0], 0)).row()
    assert page.table.model.row_id(source) == tab.document.table("idle").index[1]
    page.table.table.selectRow(3)
    assert chart._selected == int(
        tab.document.table("idle").index.get_loc(
            page.table.model.row_id(
                page.table.proxy.mapToSource(page.table.proxy.index(3, 0)).row()
            )
        )
    )


def test_a_launch_delay_bar_selects_all_its_launches_on_the_timeline(qtbot: Any) -> None:
    """A bucket's click highlights every launch of that bucket together on the Timeline
    (as memory_viz or HTA answer "which launches were this slow?"), the longest selected."""
    from perfview.core.analysis.torch import streams

    tab = _tab(qtbot)
    timeline = tab.view_widget("timeline")
    assert tab.show_view("launch-delays")
    delays = tab.view_widget("launch-delays")
    hist = delays.data.histogram
    busiest = int(hist["launches"].to_numpy().argmax())
    lo, hi = int(hist["lo_ns"].to_numpy()[busiest]), int(hist["hi_ns"].to_numpy()[busiest])
    mask = streams.in_bucket(delays.rows, lo, hi, first=busiest == 0)
    expected = delays.rows.loc[mask, "row"].to_numpy(dtype=np.int64)
    assert len(expected) > 1
    with qtbot.waitSignal(tab.document.slices_requested) as blocker:
        delays.show_bucket(busiest)
    assert sorted(blocker.args[0]) == sorted(expected.tolist())
    assert tab.current_view() == "launch-delays"  # the page stays; the Timeline has them
    assert sorted(timeline._matches.tolist()) == sorted(expected.tolist())
    worst = delays.rows.loc[mask].sort_values("delay_ns", kind="stable")["row"].iat[-1]
    assert tab.document.selection.event == int(worst)
    assert timeline.selected_row == int(worst)
