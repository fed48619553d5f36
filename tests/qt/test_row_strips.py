"""Many rects on rows a pixel or taller are filled as one image a pixel row tall per row,
copied over the row's pixel rows and drawn once (`row_strips.draw_row_strips`): the very
pixels one drawRects per colour bucket paints, for a fraction of the painter's work (a
whole trace in view), with the fill in numpy or compiled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui

from perfview.core.layout import colors, layout_kernels
from perfview.core.layout.flame import Rects
from perfview.core.layout.raster import argb
from perfview.qt.items import rect_batch, row_strips
from perfview.qt.items.rect_batch import RectBatchItem, brushes, device_edges, draw_rect_array
from perfview.qt.items.row_strips import draw_row_strips


def _rects(n: int, rows: int, seed: int, span: float = 1_000.0) -> Rects:
    """Rows of slices from a fraction of a pixel to tens of pixels wide, some overlapping."""
    rng = np.random.default_rng(seed)
    row = np.sort(rng.integers(0, rows, n))
    x0 = rng.uniform(0, span, n)
    order = np.lexsort((x0, row))
    row, x0 = row[order], x0[order]
    x1 = x0 + rng.exponential(span / 800, n) * rng.choice([0.1, 1.0, 30.0], n)
    bucket = rng.integers(0, len(colors.PALETTE), n).astype(np.uint8)
    return Rects(x0, x1, row.astype(np.int32), np.arange(n), bucket, np.ones(n, np.int64))


def _painted(draw: object, fmt: QtGui.QImage.Format, width: int, height: int) -> np.ndarray:
    image = QtGui.QImage(width, height, fmt)
    image.fill(QtGui.QColor(242, 243, 247))  # a band's shade under the rects
    painter = QtGui.QPainter(image)
    painter.setPen(QtCore.Qt.PenStyle.NoPen)
    draw(painter)  # type: ignore[operator]
    painter.end()
    return np.frombuffer(image.constBits(), dtype=np.uint32).reshape(height, width).copy()


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy fill", "compiled fill"])
@pytest.mark.parametrize(
    "fmt", [QtGui.QImage.Format.Format_ARGB32_Premultiplied, QtGui.QImage.Format.Format_RGB32]
)
@pytest.mark.parametrize(("sy", "dy"), [(18.0, 7.3), (3.0, 0.6), (1.4, 2.2)])
def test_row_strips_fill_the_pixels_drawrects_paints(
    qapp: object,
    fmt: QtGui.QImage.Format,
    sy: float,
    dy: float,
    compiled: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if compiled:
        layout_kernels.warm()
    monkeypatch.setattr(layout_kernels, "ready", lambda n: compiled)
    shown = _rects(12_000, 50, seed=7)
    sx, dx = 1.55, 12.4
    clip = (dx, 1_000 * sx + dx)
    x_start, x_last, y_start, y_last = device_edges(shown, sx, sy, dx, dy, clip)
    order = np.argsort(shown.bucket.astype(np.int16), kind="stable")
    arr = np.stack([x_start, y_start, x_last, y_last], axis=1)[order].astype(np.int32)
    width, height = 1_600, int(50 * sy + dy) + 4

    def by_rects(painter: QtGui.QPainter) -> None:
        edges = np.searchsorted(shown.bucket[order], np.arange(len(colors.PALETTE) + 1))
        for bucket, brush in enumerate(brushes(colors.PALETTE)):
            painter.setBrush(brush)
            draw_rect_array(painter, np.ascontiguousarray(arr[edges[bucket] : edges[bucket + 1]]))

    def by_strips(painter: QtGui.QPainter) -> None:
        words = argb(colors.PALETTE)[shown.bucket[order]]
        cols = (arr[:, 0], arr[:, 2], arr[:, 1], arr[:, 3])
        assert draw_row_strips(painter, *cols, words, clip)

    assert np.array_equal(_painted(by_strips, fmt, width, height),
                          _painted(by_rects, fmt, width, height))  # fmt: skip


def test_rows_sharing_pixel_rows_are_left_to_drawrects(qapp: object) -> None:
    x = np.array([0, 5], np.int32)
    words = argb(colors.PALETTE)[:2]
    image = QtGui.QImage(20, 20, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    painter = QtGui.QPainter(image)
    overlapping = draw_row_strips(painter, x, x + 2, np.array([0, 3]), np.array([5, 8]), words,
                                  (0.0, 20.0))  # fmt: skip
    painter.end()
    assert not overlapping


def test_a_whole_trace_frame_looks_the_same_drawn_either_way(
    qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The item end to end: a frame of 20k slices (rows 18 px, as the Timeline's) grabbed
    with the strips and with drawRects only is the same picture, labels and all."""
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)  # type: ignore[attr-defined]
    plot.resize(900, 700)
    item = RectBatchItem()
    item.set_rects(_rects(20_000, 36, seed=11))
    plot.addItem(item)
    plot.getViewBox().invertY(True)
    plot.getViewBox().setRange(xRange=(-3.7, 1_003.1), yRange=(-0.5, 35.5), padding=0)
    drawn: list[bool] = []

    def counted(*args: Any) -> bool:
        drawn.append(draw_row_strips(*args))
        return drawn[-1]

    monkeypatch.setattr(rect_batch, "draw_row_strips", counted)
    plot.show()
    qtbot.waitExposed(plot)  # type: ignore[attr-defined]
    strips = plot.viewport().grab().toImage()
    assert item.stats["visible"] >= row_strips.STRIP_FROM
    assert drawn, "the frame was drawn by the strips"
    assert all(drawn)
    assert len(item.labels._cache), "and it has labels, drawn over them"
    monkeypatch.setattr(rect_batch, "STRIP_FROM", 10**9)
    rects = plot.viewport().grab().toImage()
    assert strips == rects
