"""Rows thinner than a pixel are filled into one image: the same pixels as one drawRects per
colour bucket (`RectBatchItem._draw_batch`), so a job with every rank expanded looks the
same drawn either way, for a fraction of the painter's work."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from perfview.core.layout import colors
from perfview.core.layout.flame import Rects
from perfview.core.layout.raster import argb, fill
from perfview.qt.items.rect_batch import brushes, device_edges, draw_rect_array


def _rects(n: int, rows: int, seed: int) -> Rects:
    rng = np.random.default_rng(seed)
    row = np.sort(rng.integers(0, rows, n))
    x0 = rng.uniform(0, 1_000, n)
    x1 = x0 + rng.exponential(3.0, n)
    bucket = rng.integers(0, len(colors.PALETTE), n).astype(np.int32)
    return Rects(x0, x1, row.astype(np.int32), np.arange(n), bucket, np.ones(n, np.int64))


def test_sub_pixel_rows_fill_the_pixels_drawrects_paints(qapp: object) -> None:
    shown = _rects(20_000, 900, seed=3)
    sx, sy, dx, dy = 0.8, 0.45, 5.0, 2.0  # 0.8 px per unit, rows of 0.45 px
    clip = (dx, 1_000 * sx + dx)
    x_start, x_last, y_start, y_last = device_edges(shown, sx, sy, dx, dy, clip)
    assert np.array_equal(y_start, y_last), "a row thinner than a pixel covers one pixel row"
    width, height = 820, 420

    painted = QtGui.QImage(width, height, QtGui.QImage.Format.Format_ARGB32)
    painted.fill(0)
    painter = QtGui.QPainter(painted)
    painter.setPen(QtCore.Qt.PenStyle.NoPen)
    order = np.argsort(shown.bucket.astype(np.int16), kind="stable")
    arr = np.stack([x_start, y_start, x_last, y_last], axis=1)[order].astype(np.int32)
    edges = np.searchsorted(shown.bucket[order], np.arange(len(colors.PALETTE) + 1))
    for bucket, brush in enumerate(brushes(colors.PALETTE)):
        painter.setBrush(brush)
        draw_rect_array(painter, np.ascontiguousarray(arr[edges[bucket] : edges[bucket + 1]]))
    painter.end()
    expected = np.frombuffer(painted.constBits(), dtype=np.uint32).reshape(height, width)

    words = argb(colors.PALETTE)
    image = fill(
        x_start[order], x_last[order], y_start[order], words[shown.bucket[order]], width, height
    )
    assert np.array_equal(image, expected)


def test_an_item_with_rows_thinner_than_a_pixel_draws_one_image(qtbot: object) -> None:
    """2,000 rows in 500 px: the item fills an image, and what it draws per row is bounded
    by the pixels (slices merge over the pixel columns two rows share), not by the slices."""
    import pyqtgraph as pg

    from perfview.qt.items.rect_batch import RectBatchItem

    shown = _rects(400_000, 2_000, seed=5)
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)  # type: ignore[attr-defined]
    plot.resize(600, 500)
    item = RectBatchItem()
    item.set_rects(shown)
    plot.addItem(item)
    plot.getViewBox().setRange(xRange=(0, 1_000), yRange=(0, 2_000), padding=0)
    plot.show()
    qtbot.waitExposed(plot)  # type: ignore[attr-defined]
    plot.viewport().grab()
    assert item.stats["raster"] == 1.0
    width_px = plot.getViewBox().width()
    assert item.stats["visible"] <= 2_000 * (width_px / 2 + 2)  # ≥ 2 px per merged rect
    assert item.stats["slices"] == len(shown)
