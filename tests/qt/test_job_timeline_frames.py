"""A job's Timeline with every rank expanded and rows thinner than a pixel: one layer draws all
ranks' rows (`SubPixelRows`), and hover, selection and search still find the right slice of
the right rank; zoomed in, the ranks draw themselves and hit exactly."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication

from perfview.jobs import open_job
from tests.jobs.test_job import needs_ranks

pytestmark = pytest.mark.gui


def _shown(qtbot: Any) -> Any:
    """The test job's Timeline, shown, no rank expanded."""
    from perfview.qt.views.job_timeline import JobTimeline

    view = JobTimeline(open_job([needs_ranks()[0]], workers=1))
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def _expanded(qtbot: Any) -> Any:
    view = _shown(qtbot)
    with qtbot.waitSignals([view.expanded] * len(view.job.ranks), timeout=120_000):
        view.expand_all()
    view.sub_pixel.hand_ms = 0  # what follows moves the view by code: drawn on the spot
    return view


def _widest(view: Any, rank: int) -> tuple[int, float, float]:
    """(node, x in ms, view row) of the middle of rank's widest slice."""
    tracks, item = view.tracks[rank]
    rects = tracks.index.rects
    pos = int(np.argmax(rects.x1 - rects.x0))
    place = item.transform()  # rank ns → job ms, the rank's rows under its summary row
    x_ms = (float(rects.x0[pos] + rects.x1[pos]) / 2) * place.m11() + place.dx()
    y = place.dy() + float(rects.row[pos]) + 0.5
    return int(rects.node[pos]), x_ms, y


def test_every_ranks_sub_pixel_rows_are_one_layer_and_hits_find_their_rank(qtbot: Any) -> None:
    view = _expanded(qtbot)
    box = view.plot.getViewBox()
    rows = view._rows_total()
    (x_lo, x_hi), _ = box.viewRange()
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, 40), padding=0)  # rows of their own
    view.plot.viewport().grab()
    assert all(item.isVisible() for _tracks, item in view.tracks.values())
    extent = box.childrenBounds()
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, max(rows, 2_000)), padding=0)
    view.plot.viewport().grab()
    layer = view.sub_pixel
    assert layer.stats["tiles"] > 0
    for _tracks, item in view.tracks.values():  # the layer draws their rows: Qt skips them
        assert not item.isVisible()
    assert box.childrenBounds() == extent, "the layer counts in the auto range in their stead"
    for rank in view.tracks:
        node, x_ms, y = _widest(view, rank)
        hit = view.slice_at(x_ms, y)
        assert hit == (rank, node), (rank, hit)
    # selection outlines the slice in its rank only; a search redraws the tiles
    rank = list(view.tracks)[-1]
    node, x_ms, y = _widest(view, rank)
    view.tracks[rank][1].set_selected(node)
    view.plot.viewport().grab()
    assert [item.isVisible() for _tracks, item in view.tracks.values()].count(True) == 1
    assert view.tracks[rank][1].stats == {"raster": 1.0, "delegated": 1.0}, "its outline"
    version = layer._version
    name = view.tracks[rank][0].name_of(node)
    assert view.find_slices(name[:6]) > 0
    assert layer._version > version, "a highlight change drops the cached tiles"
    view.plot.viewport().grab()
    assert view.slice_at(x_ms, y) == (rank, node)


def test_zoomed_in_each_rank_draws_and_hits_exactly(qtbot: Any) -> None:
    view = _expanded(qtbot)
    rank = list(view.tracks)[-1]
    node, x_ms, y = _widest(view, rank)
    tracks, item = view.tracks[rank]
    pos = tracks.index.position_of(node)
    width_ms = float(tracks.index.rects.x1[pos] - tracks.index.rects.x0[pos]) * 1e-6
    view.plot.getViewBox().setRange(
        xRange=(x_ms - width_ms, x_ms + width_ms), yRange=(y - 10, y + 10), padding=0
    )
    view.plot.viewport().grab()
    assert item.stats["raster"] == 0.0
    assert view.slice_at(x_ms, y) == (rank, node)
    place = item.transform()
    assert item.node_at((x_ms - place.dx()) / place.m11(), y - place.dy()) == node


def test_a_pan_keeps_the_zoom_whatever_the_steps_named_in_view(qtbot: Any) -> None:
    """The axes' heights do not follow the tick labels in view: a pan from where no step is
    named to where steps are resized the view, which kept the zoom's x scale but changed
    its y scale, and every tile the layer kept was missed (a whole new picture a frame)."""
    view = _expanded(qtbot)
    box = view.plot.getViewBox()
    layer = view.sub_pixel
    rows = view._rows_total()
    (x_lo, x_hi), _ = box.viewRange()
    span, width = x_hi - x_lo, (x_hi - x_lo) / 10
    heights, zooms, kept = set(), set(), 0.0
    for k in range(24):  # over steps named and not, 1/4 of the view a frame
        lo = x_lo + k * width / 4
        layer.stats = {}
        box.setRange(xRange=(lo, lo + width), yRange=(0, max(rows, 2_000)), padding=0)
        QApplication.processEvents()  # the axes' new sizes laid out, as before a frame
        view.plot.viewport().grab()
        heights.add(round(box.height(), 3))
        if layer.stats:  # the layer is painted where ranks have slices
            zooms.add(layer._exact)
            kept += layer.stats["tiles"] - layer.stats["tiles_new"]
    assert span > 0
    assert len(heights) == 1, heights
    assert len(zooms) == 1, zooms
    assert kept > 0, "a pan copies the tiles it has"


def test_ranks_are_named_where_their_names_do_not_overlap(qtbot: Any) -> None:
    """Every rank expanded, the rows are thinner than a pixel and the ranks' names would
    overlap: only names at least RANK_LABEL_PX apart are drawn; zoomed in on the rows, every
    rank in view is named again, and only those."""
    from perfview.qt.views.job_timeline import RANK_LABEL_PX

    view = _expanded(qtbot)
    box = view.plot.getViewBox()
    rows = view._rows_total()
    names = len(view._rank_ticks)
    box.setRange(yRange=(0, rows), padding=0)
    QApplication.processEvents()
    shown = [y for y, _text in view._shown_ticks[0]]
    px_per_row = box.height() / rows
    assert names >= 2
    assert len(shown) >= 2
    assert min(b - a for a, b in itertools.pairwise(shown)) * px_per_row >= RANK_LABEL_PX
    box.setRange(yRange=(0, rows * 40), padding=0)  # rows 40 times thinner: fewer names
    QApplication.processEvents()
    assert len(view._shown_ticks[0]) < len(shown)
    second = view._rank_ticks[1][0]  # a few rows about the second rank's: it is named
    box.setRange(yRange=(second - 2, second + 20), padding=0)
    QApplication.processEvents()
    (y0, y1) = box.viewRange()[1]
    in_view = [t for t in view._rank_ticks if y0 <= t[0] <= y1]
    assert in_view
    assert all(t in view._shown_ticks[0] for t in in_view)
    assert all(y0 - 1 <= y <= y1 + 1 for y, _text in view._shown_ticks[0])


def _left_axis_text(view: Any, ticks: list[list[tuple[float, str]]]) -> list[tuple[Any, ...]]:
    """What the left axis draws as text given `ticks`: each name with its rectangle."""
    from PySide6.QtGui import QPainter, QPicture

    axis = view.plot.getAxis("left")
    axis.setTicks(ticks)
    picture = QPicture()
    painter = QPainter(picture)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    _line, _tick_marks, texts = specs
    return [(rect.getRect(), int(flags), text) for rect, flags, text in texts]


def test_the_left_axis_is_given_only_the_names_it_can_draw_and_draws_the_same(
    qtbot: Any,
) -> None:
    """The axis measures every name it is given before it finds them too many to draw: it
    is given the names in view, and threads' names only where they are not too many. What
    it draws is the text it drew given every rank's and every thread's name, at the whole
    job, a quarter of it scrolled, and a few rows (where threads are named); the window
    short, so that the test job's threads' names do not fit at the whole job."""
    view = _expanded(qtbot)
    view.resize(1200, 320)
    QApplication.processEvents()
    box = view.plot.getViewBox()
    rows = view._rows_total()
    assert len(view._track_ticks) > 0
    views = [(0, rows), (rows / 3, rows / 3 + rows / 4), (1, 9)]
    threads_named = []
    for y0, y1 in views:
        box.setRange(yRange=(y0, y1), padding=0)
        QApplication.processEvents()
        fitted = [list(level) for level in view._shown_ticks]
        # every rank's name the thinning keeps, in view or not, and every thread's
        (lo, hi) = box.viewRange()[1]
        off_view = [t for t in view._rank_ticks if not lo - 1 <= t[0] <= hi + 1]
        given_all = [sorted(fitted[0] + off_view), list(view._track_ticks)]
        drawn = _left_axis_text(view, fitted)
        assert drawn == _left_axis_text(view, given_all)
        threads_named.append(any(text in dict(view._track_ticks).values() for *_r, text in drawn))
    box.setRange(yRange=views[0], padding=0)
    QApplication.processEvents()
    assert view._shown_ticks[1] == [], "at the whole job the threads' names are not given"
    assert not threads_named[0], "nor were they drawn given them"
    assert threads_named[-1], "a few rows tall, the threads are named"


def test_a_typed_search_is_made_on_a_worker_and_the_last_picture_shown_meanwhile(
    qtbot: Any,
) -> None:
    """Typing in the search box searches once the keys rest, on a worker, and applies every
    rank's highlight at once (`searched`: how many slices); the new picture is drawn on the
    layer's worker, the frame before it shows the last picture (not a blank one), and the
    one after it is the picture a search made on the spot gives."""
    from perfview.qt.items.sub_pixel_rows import HAND_MS

    view = _expanded(qtbot)
    box, layer = view.plot.getViewBox(), view.sub_pixel
    rows = view._rows_total()
    (x_lo, x_hi), _ = box.viewRange()
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, max(rows, 2_000)), padding=0)
    before = _grab(view)
    layer.hand_ms = HAND_MS  # the user types
    rank = list(view.tracks)[-1]
    text = view.tracks[rank][0].name_of(_widest(view, rank)[0])[:6]
    expected = sum(
        int(np.isin(item.index.rects.node, tracks.matching(text)).sum())
        for tracks, item in view.tracks.values()
    )
    with qtbot.waitSignal(view.searched, timeout=60_000) as searched:
        qtbot.keyClicks(view.search, text)
    assert searched.args == [expected]
    assert expected > 0
    assert all(item.highlight_index is not None for _t, item in view.tracks.values())
    pending = _grab(view)
    assert layer.stats["tiles_later"] > 0, "drawn on the worker"
    assert np.array_equal(pending, before), "the last picture until the new one comes"
    while layer.drawing:
        with qtbot.waitSignal(layer.tiles_drawn, timeout=10_000):
            pass
    found = _grab(view)
    assert not np.array_equal(found, before)
    layer.hand_ms = 0  # the same search made on the spot
    assert view.find_slices(text) == expected
    assert np.array_equal(_grab(view), found)


def _grab(view: Any) -> np.ndarray:
    from PySide6 import QtGui

    image = view.plot.viewport().grab().toImage()
    image = image.convertToFormat(QtGui.QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), -1).copy()


def test_a_rank_expanded_is_drawn_with_the_others_on_the_worker(qtbot: Any) -> None:
    """Each rank's arrival redraws every expanded rank's rows (they move down under it): on
    the layer's worker, the last picture shown meanwhile, then the picture drawn on the spot."""
    view = _shown(qtbot)
    first, *others = [r.rank for r in view.job.ranks]
    with qtbot.waitSignal(view.expanded, timeout=120_000):
        view.expand(first)
    box, layer = view.plot.getViewBox(), view.sub_pixel
    (x_lo, x_hi), _ = box.viewRange()
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, 2_000), padding=0)  # rows under a pixel
    _grab(view)
    with qtbot.waitSignals([view.expanded] * len(others), timeout=120_000):
        for rank in others:
            view.expand(rank)
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, 2_000), padding=0)
    _grab(view)
    assert layer.stats["tiles_later"] > 0, "drawn on the worker"
    while layer.drawing:
        with qtbot.waitSignal(layer.tiles_drawn, timeout=10_000):
            pass
    drawn = _grab(view)
    assert layer.stats["tiles_new"] == 0.0
    layer.hand_ms = 0
    layer.invalidate()
    assert np.array_equal(_grab(view), drawn)
