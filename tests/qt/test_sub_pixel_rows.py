"""Many items' rows thinner than a pixel drawn as one picture of cached tiles (`SubPixelRows`):
a cached frame is the very picture a fresh one is (after a pan, after a highlight change), the
picture is the pixels drawRects paints, and a frame draws only the tiles that came into view."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui

from perfview.core.layout import colors
from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex
from perfview.qt.items.rect_batch import device_edges, draw_rect_array

pytestmark = pytest.mark.gui

RANKS, ROWS, SLICES = 12, 40, 30_000  # rows per member; 12 × 42 rows in ~300 px


def _rects(seed: int) -> Rects:
    rng = np.random.default_rng(seed)
    row = np.sort(rng.integers(0, ROWS, SLICES)).astype(np.int32)
    x0 = rng.uniform(0, 5e9, SLICES)  # ns, as a rank's slices
    x1 = x0 + rng.exponential(2e6, SLICES)
    bucket = rng.integers(0, len(colors.PALETTE), SLICES).astype(np.int32)
    return Rects(x0, x1, row, np.arange(SLICES), bucket, np.ones(SLICES, np.int64)).sorted()


def _plot(qtbot: Any) -> tuple[Any, Any, list[Any]]:
    """A plot of RANKS members placed as the job timeline places ranks (ns → ms, shifted,
    rows under each other), drawn by one layer."""
    import pyqtgraph as pg

    from perfview.qt.items.rect_batch import RectBatchItem
    from perfview.qt.items.sub_pixel_rows import SubPixelRows

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(900, 400)
    plot.getViewBox().invertY(True)
    members = []
    for k in range(RANKS):
        item = RectBatchItem()
        item.set_index(FlameIndex(_rects(k), raw_budget=10_000, direct_below=5_000))
        item.setTransform(QtGui.QTransform(1e-6, 0, 0, 1, 13.7 * k, k * (ROWS + 2) + 1.0))
        plot.addItem(item)
        members.append(item)
    layer = SubPixelRows()
    layer.settle_ms = 0  # every frame exact (a zoom gesture's stretched frames: below)
    plot.addItem(layer)  # the members' extent, where they are hidden
    layer.set_members(members)
    plot.show()
    qtbot.waitExposed(plot)
    return plot, layer, members


def _frame(plot: Any, x: tuple[float, float]) -> np.ndarray:
    plot.getViewBox().setRange(xRange=x, yRange=(0, RANKS * (ROWS + 2)), padding=0)
    image = plot.viewport().grab().toImage().convertToFormat(QtGui.QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), -1).copy()


def test_a_cached_frame_is_the_fresh_frame_after_a_pan_and_a_highlight(qtbot: Any) -> None:
    plot, layer, members = _plot(qtbot)
    _frame(plot, (0.0, 2_000.0))
    assert layer.stats["tiles_new"] > 0
    for shift in (37.3, 211.9, -120.05):  # pans of fractional pixels, each way
        x = (shift, 2_000.0 + shift)
        cached = _frame(plot, x)
        assert layer.stats["tiles_new"] < layer.stats["tiles"], "a pan reuses tiles"
        layer.cache.clear()
        fresh = _frame(plot, x)
        assert layer.stats["tiles_new"] == layer.stats["tiles"]
        assert np.array_equal(cached, fresh)
    before = _frame(plot, (100.0, 1_100.0))
    members[3].set_highlight(np.arange(0, SLICES, 7))  # drops the tiles: drawn afresh
    lit = _frame(plot, (100.0, 1_100.0))
    assert layer.stats["tiles_new"] == layer.stats["tiles"]
    assert not np.array_equal(before, lit)
    panned = _frame(plot, (150.5, 1_150.5))
    layer.cache.clear()
    assert np.array_equal(panned, _frame(plot, (150.5, 1_150.5)))
    members[3].set_highlight(None)
    assert np.array_equal(before, _frame(plot, (100.0, 1_100.0)))


# px per row: sub-pixel, 1-2 px, 2-3 px, and 6.5 px (highlights outlined, as the member does)
@pytest.mark.parametrize("sy", [0.55, 1.4, 2.6, 6.5])
def test_the_picture_is_what_drawrects_paints(qtbot: Any, sy: float) -> None:
    """The layer's image of a region: its rects painted with one drawRects per colour, the
    highlighted over the rest (from OUTLINE_ROW_PX with the member's 1-px outline pen), on
    the same absolute pixels; and those rects stand for every member's slices in the
    region. Rows thinner than a pixel, and rows of a pixel up to where names fit, each
    rect then as tall as the member's own drawRects makes it (`device_edges`)."""
    from perfview.qt.items.rect_batch import OUTLINE_ROW_PX, layer_row_px

    assert sy < layer_row_px(), "rows the layer draws"
    _plot_widget, layer, members = _plot(qtbot)
    sx = 0.45  # px per ms
    region = (200, 0, 1_000, 300)
    # what the rects stand for: each member's slices in the region, none lost
    ((base, _argb, lit),) = layer.placed(sx, sy, region)
    assert not lit
    in_view = 0
    for item in members:
        place = item.transform()
        sxl, dxa = place.m11() * sx, place.dx() * sx
        rects = item.index.rects
        a, b = rects.x0 * sxl + dxa, rects.x1 * sxl + dxa
        top = (rects.row + place.dy()) * sy  # the rows in the region's pixel rows
        rows_in = (top < region[3]) & (top + sy > region[1])
        in_view += int(((b >= region[0]) & (a <= region[2]) & rows_in).sum())
    inside = (base.x1 >= region[0]) & (base.x0 <= region[2])
    assert int(base.count[inside].sum()) >= in_view
    middle = int((region[1] + region[3]) / 2 / sy / (ROWS + 2))  # the member mid-region
    members[middle].set_highlight(np.arange(0, SLICES, 5))
    image, drawn = layer.picture(sx, sy, region)
    placed = layer.placed(sx, sy, region)
    lit_parts = [lit for _r, _argb, lit in placed]  # the bases (its muted), then its lit
    assert lit_parts == [False] * (len(placed) - 1) + [True]
    outlined = sy >= OUTLINE_ROW_PX
    rects = sum(len(r) * (5 if lit and outlined else 1) for r, _argb, lit in placed)
    assert drawn == rects > 0  # an outlined rect: its fill and four border rects
    width, height = region[2] - region[0], region[3] - region[1]
    painted = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32)
    painted.fill(0)
    painter = QtGui.QPainter(painted)
    for shown, argb, lit in placed:
        if lit and outlined:  # as `RectBatchItem._draw_rects` outlines the highlighted
            painter.setPen(QtGui.QPen(QtGui.QColor(30, 30, 30), 1.0))
        else:
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
        xs, xl, ys, yl = device_edges(shown, 1.0, sy, 0.0, 0.0, region[::2])
        order = np.argsort(shown.bucket.astype(np.int16), kind="stable")
        arr = np.stack([xs - region[0], ys - region[1], xl - region[0], yl - region[1]], axis=1)
        arr = arr[order].astype(np.int32)
        edges = np.searchsorted(shown.bucket[order], np.arange(len(argb) + 1))
        for bucket, word in enumerate(argb.tolist()):
            painter.setBrush(QtGui.QColor.fromRgba(word))
            draw_rect_array(painter, np.ascontiguousarray(arr[edges[bucket] : edges[bucket + 1]]))
    painter.end()
    expected = np.frombuffer(painted.constBits(), dtype=np.uint32).reshape(height, width)
    assert np.array_equal(image, expected)


def test_rows_where_names_fit_are_the_members_own(qtbot: Any) -> None:
    """Rows from layer_row_px() (where a name fits) are drawn by their member (names,
    outlines); thinner ones by the layer: under OUTLINE_ROW_PX always, taller ones while
    the hand is on the view (moved by code, their members draw them)."""
    from perfview.qt.items.rect_batch import OUTLINE_ROW_PX, layer_row_px

    plot, layer, members = _plot(qtbot)
    box = plot.getViewBox()
    assert OUTLINE_ROW_PX < 6.0 < layer_row_px() < 20.0
    for row_px in (OUTLINE_ROW_PX / 2, 6.0, layer_row_px() - 0.5):
        layer.moved_by_hand()
        box.setRange(xRange=(0, 500), yRange=(0, box.height() / row_px), padding=0)
        layer.stats = {}
        plot.viewport().grab()
        assert not any(m.isVisible() for m in members), "Qt skips what the layer draws"
        assert layer.stats["tiles"] > 0
    layer.hand_ms = 0  # the hand gone: rows of 3 px or more moved by code are the members'
    for row_px in (6.0, layer_row_px() - 0.5):
        box.setRange(xRange=(10, 510), yRange=(0, box.height() / row_px), padding=0)
        layer.stats = {}
        plot.viewport().grab()
        assert all(m.isVisible() for m in members)
        assert layer.stats == {}
    box.setRange(xRange=(0, 500), yRange=(0, box.height() / 2.0), padding=0)  # rows of 2 px
    plot.viewport().grab()
    assert not any(m.isVisible() for m in members), "thinner ones are the layer's, by code too"
    members[0].set_selected(int(members[0].rects.node[0]))
    assert members[0].isVisible(), "its selection's outline is its own"
    members[0].set_index(members[0].index)  # new data: no selection left
    assert not members[0].isVisible()
    box.setRange(xRange=(0, 500), yRange=(0, box.height() / 20.0), padding=0)  # rows of 20 px
    plot.viewport().grab()
    assert all(m.isVisible() for m in members)
    assert members[0].stats["raster"] == 0.0
    assert members[0].stats["visible"] > 0
    layer.stats = {}
    plot.viewport().grab()
    assert layer.stats == {}, "the layer draws nothing at this zoom"


def test_the_cache_is_bounded(qtbot: Any) -> None:
    from perfview.qt.items.tile_cache import TILE_H, TILE_W

    plot, layer, _members = _plot(qtbot)
    layer.cache.budget_bytes = 6 * TILE_W * TILE_H * 4
    for k in range(12):
        _frame(plot, (k * 1_000.0, (k + 1) * 1_000.0))
    assert layer.cache.nbytes <= layer.cache.budget_bytes


def test_a_zoom_gesture_stretches_the_last_tiles_then_draws_exactly(qtbot: Any) -> None:
    """As a map does: while the user zooms, each new zoom shows the last exact zoom's tiles
    stretched (a frame costs image copies); once the hand rests, the frame is exact."""
    plot, layer, _members = _plot(qtbot)
    box = plot.getViewBox()
    box.sigRangeChangedManually.connect(layer.moved_by_hand)
    exact = _frame(plot, (0.0, 2_000.0))
    assert layer.stats["scaled"] == 0.0
    layer.settle_ms = 60_000
    box.sigRangeChangedManually.emit([True, True])  # as the wheel does after zooming
    _frame(plot, (100.0, 1_800.0))
    assert layer.stats["scaled"] == 1.0
    assert "tiles" not in layer.stats, "no tile drawn"
    assert layer._settle.isActive(), "an exact frame is asked for once the hand rests"
    layer.settle_ms = 0  # the hand rests
    with qtbot.waitSignal(layer._settle.timeout, timeout=5_000):
        layer._settle.start(1)  # the rest, shortened
    with qtbot.waitSignal(layer.tiles_drawn, timeout=10_000):
        # the hand was on the view: drawn on the worker, the last exact zoom stretched
        during = _frame(plot, (100.0, 1_800.0))
        assert layer.stats["tiles_later"] > 0
    settled = _frame(plot, (100.0, 1_800.0))
    assert layer.stats["scaled"] == 0.0
    assert layer.stats["tiles_new"] == 0.0
    inside = box.sceneBoundingRect().toAlignedRect()
    outside = np.ones(settled.shape, dtype=bool)
    outside[inside.top() : inside.bottom() + 1, inside.left() : inside.right() + 1] = False
    assert np.array_equal(during[outside], settled[outside]), "nothing drawn over the axes"
    layer.cache.clear()
    layer.hand_ms = 0  # drawn on the spot, as a view moved by code
    assert np.array_equal(settled, _frame(plot, (100.0, 1_800.0)))
    assert not np.array_equal(settled, exact)


def test_a_view_moved_by_hand_gets_its_new_tiles_from_a_worker(qtbot: Any) -> None:
    """A jump or drag by hand draws no tile on the GUI thread: the frame shows what is kept,
    the worker draws the rest and hands them back, and the frame then is the one drawn on
    the spot. Asks made while the worker draws wait, the newest replacing older ones."""
    plot, layer, _members = _plot(qtbot)
    box = plot.getViewBox()
    box.sigRangeChangedManually.connect(layer.moved_by_hand)
    exact = _frame(plot, (3_000.0, 4_000.0))  # by code: on the spot
    assert layer.stats["tiles_later"] == 0.0
    assert not layer.drawing
    layer.cache.clear()
    for place in (500.0, 1_500.0, 3_000.0):  # three jumps while the worker draws the first
        box.sigRangeChangedManually.emit([True, False])
        _frame(plot, (place, place + 1_000.0))
        assert layer.stats["rects"] == 0.0
        assert layer.stats["tiles_later"] > 0
    assert layer.drawing
    assert not np.array_equal(_frame(plot, (3_000.0, 4_000.0)), exact), "not drawn yet"
    while layer.drawing:  # the first ask, then the newest (the view's own)
        with qtbot.waitSignal(layer.tiles_drawn, timeout=10_000):
            pass
    assert np.array_equal(_frame(plot, (3_000.0, 4_000.0)), exact)
    assert layer.stats["tiles_new"] == 0.0


def test_a_worker_that_fails_leaves_the_drawing_to_the_gui_thread(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drawing that fails on the worker does not leave the view blank for good: the layer
    draws on the spot from then on (where an error shows as any frame's would)."""
    from perfview.qt.items import sub_pixel_picture

    plot, layer, _members = _plot(qtbot)
    box = plot.getViewBox()
    box.sigRangeChangedManually.connect(layer.moved_by_hand)
    drawn_well = sub_pixel_picture.tiles
    failures = []

    def failing_once(*args: Any) -> Any:
        if not failures:
            failures.append(1)
            raise ValueError("a drawing that fails")
        return drawn_well(*args)

    monkeypatch.setattr(sub_pixel_picture, "tiles", failing_once)
    with qtbot.waitSignal(layer.tiles_drawn, timeout=10_000):
        box.sigRangeChangedManually.emit([True, False])
        _frame(plot, (0.0, 1_000.0))
    assert failures
    assert layer.hand_ms == 0
    assert not layer.drawing
    box.sigRangeChangedManually.emit([True, False])
    _frame(plot, (2_000.0, 3_000.0))  # a new place by hand: drawn on the spot
    assert layer.stats["tiles_later"] == 0.0
    assert layer.stats["tiles_new"] > 0
