"""`QuickAxis` draws what pyqtgraph's `AxisItem` draws: the same ticks with the same pens,
the same labels in the same places, the same pixels, on all four sides, over ranges from
nanoseconds to days, with set ticks and with perfview's own axes' ticks and strings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import pyqtgraph as pg
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication

from perfview.qt.items.labels import BytesAxis, TimeAxis
from perfview.qt.items.quick_axis import QuickAxis

pytestmark = pytest.mark.gui

SIDES = ("left", "bottom", "right", "top")
RANGES = [(0.0, 1.0), (-3.5, 7.25), (421.7, 497.3), (1e9, 1e9 + 12_345.0), (0.0, 8.6e13)]


def _plot(qtbot: Any, axes: dict[str, pg.AxisItem]) -> pg.PlotWidget:
    plot = pg.PlotWidget(axisItems=axes, background="w")
    for side in SIDES:
        plot.showAxis(side)
    plot.resize(900, 520)
    qtbot.addWidget(plot)
    plot.show()
    qtbot.waitExposed(plot)
    plot.grab()  # drawn once at the first range: an axis's width depends on what it drew
    return plot


def _specs(axis: pg.AxisItem) -> tuple[Any, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The axis's draw specs in one comparable form: the axis line, every tick as (pen
    colour, ends), every label as (rect, flags, text)."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    axis_spec, ticks, texts = axis.generateDrawSpecs(painter)
    painter.end()
    pen, start, end = axis_spec
    line = (pen.color().name(), start.x(), start.y(), end.x(), end.y())
    flat = []
    assert isinstance(axis, QuickAxis) == all(isinstance(spec[1], list) for spec in ticks)
    for spec in ticks:
        if isinstance(spec[1], list):
            flat += [(spec[0].color().rgba(), ln.x1(), ln.y1(), ln.x2(), ln.y2()) for ln in spec[1]]
        else:
            tick_pen, a, b = spec
            flat.append((tick_pen.color().rgba(), a.x(), a.y(), b.x(), b.y()))
    labels = [(r.getRect(), int(flags), text) for r, flags, text in texts]
    return line, flat, labels


def _pixels(plot: pg.PlotWidget) -> np.ndarray:
    image = plot.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    raw = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return raw.reshape(image.height(), image.bytesPerLine()).copy()


def _show(plot: pg.PlotWidget, x: tuple[float, float], y: tuple[float, float]) -> None:
    plot.getPlotItem().getViewBox().setRange(xRange=x, yRange=y, padding=0)
    for _ in range(2):  # drawn, then laid out again for the labels' sizes, then drawn
        plot.grab()
        QApplication.processEvents()
    for side in SIDES:
        plot.getAxis(side).picture = None  # drawn afresh on the next grab


@pytest.mark.parametrize("x", RANGES)
def test_the_quick_axis_draws_the_ticks_and_labels_pyqtgraph_draws(
    qtbot: Any, x: tuple[float, float]
) -> None:
    ours = _plot(qtbot, {side: QuickAxis(side) for side in SIDES})
    theirs = _plot(qtbot, {side: pg.AxisItem(side) for side in SIDES})
    y = (x[0] / 3, x[1] / 3 + 1)
    for plot in (ours, theirs):
        _show(plot, x, y)
    labels = 0
    for side in SIDES:
        mine, base = _specs(ours.getAxis(side)), _specs(theirs.getAxis(side))
        assert mine == base, side
        assert base[1], side  # ticks were drawn
        labels += len(base[2])
    assert labels >= 8
    assert np.array_equal(_pixels(ours), _pixels(theirs))


def test_set_ticks_and_perfviews_own_axes_draw_as_pyqtgraph_draws_them(qtbot: Any) -> None:
    named = [[(float(k), f"#{k}") for k in range(0, 400, 13)], [(6.5, "half")]]

    class PlainTime(pg.AxisItem):
        tickStrings = TimeAxis.tickStrings

    class PlainBytes(pg.AxisItem):
        tickValues = BytesAxis.tickValues
        tickStrings = BytesAxis.tickStrings
        _count = BytesAxis._count

    ours = _plot(
        qtbot, {"top": QuickAxis("top"), "bottom": TimeAxis("bottom"), "left": BytesAxis("left")}
    )
    plain_bytes = PlainBytes("left")
    plain_bytes.per_unit = 1.0
    plain_time = PlainTime("bottom")
    for axis in (plain_bytes, plain_time):
        axis.enableAutoSIPrefix(False)
    theirs = _plot(
        qtbot,
        {"top": pg.AxisItem("top"), "bottom": plain_time, "left": plain_bytes},
    )
    for plot in (ours, theirs):
        plot.getAxis("top").setTicks(named)
        plot.getAxis("left").setWidth(74)
        _show(plot, (12.0, 3.1e6), (0.0, 3.3e9))
    for side in ("top", "bottom", "left"):
        assert _specs(ours.getAxis(side)) == _specs(theirs.getAxis(side)), side
    assert np.array_equal(_pixels(ours), _pixels(theirs))


def _sides(plot: pg.PlotWidget) -> tuple[set[str], set[str]]:
    """(the sides shown, the sides whose axis is not a QuickAxis)."""
    item = plot.getPlotItem()
    shown = {side for side in SIDES if item.getAxis(side).isVisible()}
    return shown, {side for side in SIDES if not isinstance(item.getAxis(side), QuickAxis)}


def test_the_views_show_their_axes_and_no_other_all_of_them_quick(qtbot: Any) -> None:
    """Every side is a QuickAxis (a hidden axis is told every range change too), and giving
    pyqtgraph the hidden ones does not show them."""
    from perfview.jobs import open_job
    from perfview.loaders import load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.job_timeline import JobTimeline
    from tests.conftest import DATA
    from tests.jobs.test_job import needs_ranks

    tab = DocumentTab(Document(load(DATA / "demos" / "pairwise-loop-slow.pt.trace.json.gz")))
    qtbot.addWidget(tab)
    tab.show()
    for page, shown in (("timeline", {"top", "left"}), ("icicle", {"top"})):
        assert tab.show_view(page)
        assert _sides(tab.view_widget(page).plot) == (shown, set()), page
    job = JobTimeline(open_job([needs_ranks()[0]], workers=1))
    qtbot.addWidget(job)
    job.show()
    assert _sides(job.plot) == ({"top", "bottom", "left"}, set())
