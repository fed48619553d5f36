"""Instant markers on the timeline, and the tooltips of markers and counter tracks.

Geometry comes from `core.timeline_marks` (rows, ns); this draws it in device pixels like the
rect batches do: markers that land on the same pixel column and span are drawn once, so a
trace with a million instants costs a few thousand lines per frame at most.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.layout.timeline_marks import InstantMarks, format_counter, instant_at, value_at
from perfview.core.model.units import format_ns
from perfview.qt.items.rect_batch import draw_rect_array

MARK_COLOUR = QtGui.QColor(200, 70, 20)


class InstantItem(pg.GraphicsObject):
    """Vertical lines with a small triangle on top, one per instant (merged per pixel)."""

    def __init__(self, marks: InstantMarks) -> None:
        super().__init__()
        self.marks = marks
        self.drawn = 0  # markers drawn by the last paint (after merging)
        self.lines = True  # the last paint drew their lines (not only heads: `crowded`)
        self.setZValue(35)
        if len(marks):
            lo, hi = float(marks.ts.min()), float(marks.ts.max())
            top, bottom = float(marks.top.min()), float(marks.bottom.max())
            self._bounds = QtCore.QRectF(lo, top, max(hi - lo, 1.0), max(bottom - top, 1.0))
        else:
            self._bounds = QtCore.QRectF()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(
        self,
        painter: QtGui.QPainter,
        option: QtWidgets.QStyleOptionGraphicsItem,
        widget: QtWidgets.QWidget | None = None,
    ) -> None:
        view = self.viewRect()
        m = self.marks
        if view is None or not len(m):
            return
        t = painter.transform()
        sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
        inside = np.flatnonzero((m.ts >= view.left()) & (m.ts <= view.right()))
        if not len(inside):
            self.drawn = 0
            return
        px = np.round(m.ts[inside] * sx + dx)
        top = np.round(np.minimum(m.top[inside] * sy + dy, m.bottom[inside] * sy + dy))
        bottom = np.round(np.maximum(m.top[inside] * sy + dy, m.bottom[inside] * sy + dy))
        keys = distinct_marks(px, top, bottom)
        width_px = abs((view.right() - view.left()) * sx)
        self.lines = not crowded(keys, width_px)
        painter.save()
        painter.resetTransform()
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        painter.setBrush(MARK_COLOUR)
        draw_rect_array(painter, marker_rects(keys, lines=self.lines))
        painter.restore()
        self.drawn = len(keys)


_BITS = 21  # per packed coordinate: device pixels within +-2**20 (a screen is a few thousand)
_LIMIT = (1 << (_BITS - 1)) - 1


def distinct_marks(px: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """The distinct (x, top, bottom) device-pixel markers, sorted, as an (n, 3) float array.

    Each is packed into one int64 (coordinates clipped to +-2**20 px, far off any screen, so
    what is visible is unchanged), so the de-duplication is a plain 1-D sort: `np.unique`
    over rows (axis=0) took ~40 ms every frame for 41k instants of a 1 GB ROCm trace."""
    parts = [np.clip(np.asarray(v), -_LIMIT, _LIMIT).astype(np.int64) + _LIMIT for v in
             (px, top, bottom)]  # fmt: skip
    packed = np.unique((parts[0] << (2 * _BITS)) | (parts[1] << _BITS) | parts[2])
    mask = (1 << _BITS) - 1
    out = np.empty((len(packed), 3), dtype=np.float64)
    out[:, 0] = (packed >> (2 * _BITS)) - _LIMIT
    out[:, 1] = ((packed >> _BITS) & mask) - _LIMIT
    out[:, 2] = (packed & mask) - _LIMIT
    return out


# The pixels Qt's raster engine fills for the marker's triangle (x-4, top), (x+4, top),
# (x, top+6) at whole-pixel corners: per row below `top`, the first and last column from x.
_HEAD_SPANS = np.array([(0, -4, 3), (1, -3, 2), (2, -2, 1), (3, -2, 1), (4, -1, 0)], np.int32)


# Markers whose lines would stand closer than this on average (distinct pixel columns over
# the view's width) are drawn as heads only: a 10 GB replica's 2,508 global instants, whole
# trace in 1,400 px, drew a line in every column and hid every slice under one colour.
MIN_LINE_GAP_PX = 6


def crowded(keys: np.ndarray, width_px: float) -> bool:
    """True when the markers' lines (`distinct_marks`) would cover the view: more distinct
    columns than one every MIN_LINE_GAP_PX of its `width_px`."""
    columns = len(np.unique(keys[:, 0])) if len(keys) else 0
    return columns * MIN_LINE_GAP_PX > width_px


def marker_rects(keys: np.ndarray, *, lines: bool = True) -> np.ndarray:
    """The markers (x, top, bottom in device pixels) as whole-pixel rects for one fill call:
    each marker's 1 px line (unless `lines` is False: `crowded`), then its triangle as five
    one-row spans (the same pixels `drawLines` and `drawPolygon` filled). Drawn one QLineF
    and one QPolygonF at a time they cost ~7 us a marker: 6-7 ms of the ~10 ms first
    Timeline frame of a 1 GB ROCm trace."""
    x, top, bottom = (keys[:, i].astype(np.int32) for i in range(3))
    row, first, last = (_HEAD_SPANS[:, i][None, :] for i in range(3))
    heads = np.stack(
        [x[:, None] + first, top[:, None] + row, x[:, None] + last, top[:, None] + row], axis=2
    ).reshape(-1, 4)
    parts = [np.column_stack([x, top, x, bottom]), heads] if lines else [heads]
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.int32)


def instant_text(view: Any, x: float, y: float, tolerance: float) -> str:
    """Tooltip of the instant marker at (x ns, y rows), or ""."""
    marks = view.data.instants
    if marks is None:
        return ""
    row = instant_at(marks, x, y, tolerance)
    if row < 0:
        return ""
    ins = view.timeline.instants
    scope = {"t": "thread", "p": "process", "g": "global"}.get(str(ins["scope"].iat[row]), "")
    return (
        f"<b>{ins['name'].iat[row]}</b><br>instant ({scope}) · {ins['cat'].iat[row]}"
        f" · at {format_ns(int(ins['ts'].iat[row]))}"
    )


def curve_text(view: Any, x: float, y: float, rows: int) -> str:
    """Tooltip on a counter/memory track: its name and the value at time x, or ""."""
    data = view.data
    for i, top in enumerate(data.curve_top):
        if top <= y < top + rows:
            ts, values = data.curve_samples[i]
            label = data.curves[i][0]
            value = value_at(ts, values, x)
            is_bytes = ", peak " in label
            shown = "no sample yet" if value is None else format_counter(value, is_bytes)
            return f"<b>{label}</b><br>{shown} at {format_ns(int(x))}"
    return ""


def hover_text(view: Any, x: float, y: float) -> str:
    """The marker or counter tooltip at (x, y), or "" when the slices' tooltip applies."""
    from perfview.core.layout.timeline_layout import CURVE_ROWS

    text = instant_text(view, x, y, view._pixel_tolerance(4.0))
    return text or curve_text(view, x, y, CURVE_ROWS)


def add_instants(plot: Any, marks: InstantMarks | None) -> InstantItem | None:
    if marks is None or not len(marks):
        return None
    item = InstantItem(marks)
    plot.addItem(item)
    return item


__all__ = ["InstantItem", "add_instants", "curve_text", "hover_text", "instant_text"]
