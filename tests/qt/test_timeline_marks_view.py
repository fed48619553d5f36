"""Instant markers and counter tracks in the TimelineView: drawn, and explained on hover."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from perfview.loaders import load
from tests.conftest import sample

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui


def _view(qtbot: Any) -> Any:
    from perfview.qt.views.timeline_view import TimelineView

    timeline = load(sample("chrome_trace/catapult_simple_trace.json")).timeline
    assert timeline is not None
    view = TimelineView(timeline)
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    qtbot.waitExposed(view)
    view.fit_all()
    view.plot.grab()
    return view


def test_instants_are_drawn_and_have_tooltips(qtbot: Any) -> None:
    view = _view(qtbot)
    marks = view.data.instants
    assert view.instant_item is not None
    assert 0 < view.instant_item.drawn <= len(marks)
    i = 0
    x, y = float(marks.ts[i]), float(marks.top[i] + marks.bottom[i]) / 2
    text = view.hover_text(x, y)
    name = str(view.timeline.instants["name"].iat[int(marks.source[i])])
    assert text.startswith(f"<b>{name}</b><br>instant (")


def test_counter_track_shows_the_value_under_the_cursor(qtbot: Any) -> None:
    view = _view(qtbot)
    assert len(view.curves) == view.timeline.counters["name"].nunique()
    top = view.data.curve_top[0]
    ts, values = view.data.curve_samples[0]
    text = view.hover_text(float(ts[1]), top + 1.0)
    label = view.data.curves[0][0]
    assert text.startswith(f"<b>{label}</b><br>")
    assert f"{values[1]:g}" in text
    axis = [t for y, t in view.data.labels if top <= y <= top + 3]
    assert axis[1].startswith(f"{label} (")
    assert axis[1].endswith(f" – {max(values):g})")


def test_distinct_marks_equal_unique_rows() -> None:
    """The packed de-duplication draws exactly the markers `np.unique(axis=0)` gave."""
    import numpy as np

    from perfview.qt.items.marks import distinct_marks

    rng = np.random.default_rng(7)
    for n in (0, 1, 9, 41_100):
        px = np.round(rng.uniform(-50, 1500, n))
        top = np.round(rng.uniform(-3000, 900, n))
        bottom = top + np.round(rng.uniform(0, 500, n))
        px[: n // 2] = px[:1].repeat(n // 2) if n else px[:0]  # many on one pixel column
        want = np.unique(np.stack([px, top, bottom], axis=1), axis=0)
        assert np.array_equal(distinct_marks(px, top, bottom), want)
    far = distinct_marks(np.array([3.0]), np.array([-1e9]), np.array([1e9]))
    assert far.tolist() == [[3.0, -(2**20 - 1), 2**20 - 1]]  # clipped far off screen


def test_marker_rects_fill_the_pixels_lines_and_triangles_did(qtbot: Any) -> None:
    """One fill of whole-pixel rects paints exactly what a QLineF and a QPolygonF per marker
    painted (the way they were drawn before), long and zero-length lines, overlapping heads."""
    import numpy as np
    from PySide6 import QtCore, QtGui

    from perfview.qt.items.marks import MARK_COLOUR, marker_rects
    from perfview.qt.items.rect_batch import draw_rect_array

    rng = np.random.default_rng(0)
    n = 300
    keys = np.column_stack([np.sort(rng.integers(0, 400, n)), rng.integers(5, 100, n),
                            rng.integers(100, 200, n)]).astype(np.float64)  # fmt: skip
    keys[::3, 2] = keys[::3, 1]

    def one_by_one(p: QtGui.QPainter) -> None:
        p.setPen(QtGui.QPen(MARK_COLOUR, 1.0))
        p.drawLines([QtCore.QLineF(x, a, x, b) for x, a, b in keys.tolist()])
        p.setBrush(MARK_COLOUR)
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        for x, a, _b in keys.tolist():
            corners = [QtCore.QPointF(x - 4, a), QtCore.QPointF(x + 4, a), QtCore.QPointF(x, a + 6)]
            p.drawPolygon(QtGui.QPolygonF(corners))

    def batched(p: QtGui.QPainter) -> None:
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.setBrush(MARK_COLOUR)
        draw_rect_array(p, marker_rects(keys))

    pixels = []
    for draw in (one_by_one, batched):
        image = QtGui.QImage(420, 220, QtGui.QImage.Format.Format_ARGB32)
        image.fill(0xFFFFFFFF)
        painter = QtGui.QPainter(image)
        draw(painter)
        painter.end()
        pixels.append(np.frombuffer(image.constBits(), np.uint8).reshape(220, 420, 4).copy())
    assert (pixels[0] != 255).any()
    assert np.array_equal(pixels[0], pixels[1])


def test_crowded_markers_are_drawn_as_heads_only() -> None:
    """Markers closer than MIN_LINE_GAP_PX on average would paint every column of the view
    (a 10 GB replica: 2,508 global instants in 1,400 px hid every slice): heads only."""
    from perfview.qt.items.marks import MIN_LINE_GAP_PX, crowded, marker_rects

    sparse = np.array([[10.0, 0.0, 500.0], [200.0, 0.0, 500.0]])
    dense = np.column_stack([np.arange(0.0, 1000.0, 2.0), np.zeros(500), np.full(500, 500.0)])
    assert not crowded(sparse, 1000.0)
    assert crowded(dense, 1000.0)
    assert not crowded(dense, 500 * MIN_LINE_GAP_PX)  # wide enough: lines again
    with_lines, heads = marker_rects(sparse), marker_rects(sparse, lines=False)
    assert len(with_lines) == len(heads) + len(sparse)
    assert heads[:, 3].max() <= 4  # the triangles' five rows below the top, no line
    assert with_lines[:, 3].max() == 500


def test_the_view_draws_the_samples_sparse_markers_with_their_lines(qtbot: Any) -> None:
    view = _view(qtbot)
    assert view.instant_item is not None
    assert view.instant_item.lines
