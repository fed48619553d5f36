"""One pyqtgraph item that draws any number of rectangles (slices or call-tree nodes).

Never one graphics item per event: the rects live in numpy arrays (`core.flame.Rects`). On
each paint the item asks `core.flame_cull.FlameIndex` for the rects visible in the current view,
with sub-pixel slices merged, maps them to device pixels with numpy, and issues ONE
`QPainter.drawRects` per colour bucket.

Why a raw pointer: building a Python list of QRectF costs ~1.8 µs per rect (35 ms for 20k)
while handing Qt a pointer into a contiguous array costs nothing (measured 0.2 ms build +
3 ms draw for 20k). QRect is four ints (x1, y1, x2, y2), so a C-contiguous int32 (n, 4)
array *is* a QRect[]; PySide ≥ 6.4.3 accepts `drawRects(QRect*, int)` (the same trick as
pyqtgraph's internal PrimitiveArray). (shiboken6 ships with PySide6.)

Drawing happens in device pixels (the painter transform is reset), so pens stay 1 px, the
1-px gaps between neighbours are exact, and labels can be clipped to the visible edge.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets
from shiboken6 import wrapInstance

from perfview.core.layout import colors, raster
from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.layout.timeline_layout import TrackLayout
from perfview.qt.items.labels import LabelPainter
from perfview.qt.items.row_strips import STRIP_FROM, draw_row_strips

# rows thinner than this show a highlighted slice in its colour over the washed-out rest, with
# no outline (it would cover the slice); from this height an item outlines it, and so does a
# layer drawing the item's rows (`sub_pixel_picture`)
OUTLINE_ROW_PX = 3.0


def draw_rect_array(painter: QtGui.QPainter, arr: np.ndarray) -> None:
    """Fill an (n, 4) int32 C-contiguous array of QRect corners (x1, y1, x2, y2, inclusive)
    in one call. Integer rects take Qt's fastest raster path (measured 1.3 ms for 12k rects
    vs 3.7-6 ms as QRectF) and land on whole pixels, so edges stay crisp."""
    n = len(arr)
    if n == 0:
        return
    first = wrapInstance(arr.ctypes.data, QtCore.QRect)
    painter.drawRects(first, n)  # type: ignore[call-overload]


@functools.cache
def layer_row_px() -> float:
    """Rows thinner than this, where a layer is given (`delegate_sub_pixel`), may be drawn
    by it (`sub_pixel_rows` decides: under `OUTLINE_ROW_PX` always, taller while the hand
    is on the view): too thin for a name (`LabelPainter.draw` names a rect whose row, less
    its 1-px gap, holds 0.8 of a line of the default font: ~12 px), they are fills and
    outlines only, which the layer keeps between frames. Drawn item by item they were not
    kept: a job's 64 ranks with a quarter of them in view (rows of ~1.4 px) cost 33-40 ms
    a frame, and a twentieth scrolled by hand (rows of ~9 px) 14-17 ms. Needs the
    application (a font's metrics)."""
    return max(OUTLINE_ROW_PX, LabelPainter().line_height * 0.8 + 1.0)


def thin_rows(sx: float, sy: float) -> bool:
    """Whether a view at this device scale has rows thinner than `layer_row_px()`, left to
    right and top to bottom: what a layer drawing several items' rows at once draws
    (`sub_pixel_rows`)."""
    return sx > 0.0 and 0.0 < sy < layer_row_px()


def brushes(palette: Sequence[colors.RGB]) -> list[QtGui.QBrush]:
    return [QtGui.QBrush(QtGui.QColor(*rgb)) for rgb in palette]


def device_edges(
    shown: Rects, sx: float, sy: float, dx: float, dy: float, clip: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Integer device-pixel edges (x_start, x_last, y_start, y_last, inclusive) of rects,
    each ending where the next begins minus a 1-px gap (only where there is room), so
    neighbouring rects and rows never blur into one block; x clipped near `clip`."""
    lo, hi = min(clip), max(clip)
    a = shown.x0 * sx + dx
    b = shown.x1 * sx + dx
    px0 = np.clip(np.minimum(a, b), lo - 2.0, hi + 2.0)
    px1 = np.clip(np.maximum(a, b), lo - 2.0, hi + 2.0)
    top = shown.row * sy + dy
    py0 = np.minimum(top, top + sy)
    row_px = abs(sy)
    x_start = np.floor(px0)
    x_end = np.floor(px1)  # exclusive
    x_gap = np.where(x_end - x_start >= 3.0, 1.0, 0.0)
    x_last = np.maximum(x_end - 1.0 - x_gap, x_start)
    y_start = np.round(py0)
    y_last = np.round(py0 + row_px) - (2.0 if row_px >= 3 else 1.0)
    y_last = np.maximum(y_last, y_start)
    return x_start, x_last, y_start, y_last


def highlighted(
    index: FlameIndex, nodes: np.ndarray, build_levels: bool = True
) -> tuple[FlameIndex, int]:
    """The rects of `index` that show `nodes`, as an index of their own, and how many: what
    `RectBatchItem.set_highlight_index` draws over the washed-out rest. Any thread (numpy
    only); `build_levels` builds its levels of detail now, as a worker should, rather than
    at the first frame that needs them."""
    rects = index.rects
    mask = np.isin(rects.node, np.asarray(nodes, dtype=np.int64))
    out = FlameIndex(rects.take(np.flatnonzero(mask)))
    if build_levels:
        out.build_levels()
    return out, int(mask.sum())


class RectBatchItem(pg.GraphicsObject):
    """Rects on integer rows (row r covers y in [r, r+1)), x in data units.

    `names(nodes)` returns label texts for node ids (called only for rects wide enough).
    """

    def __init__(
        self,
        names: Callable[[np.ndarray], Sequence[str]] | None = None,
        palette: Sequence[colors.RGB] = colors.PALETTE,
    ) -> None:
        super().__init__()
        self._index: FlameIndex | None = None
        self._highlight: FlameIndex | None = None
        self._names = names or (lambda nodes: [str(n) for n in nodes.tolist()])
        self._brushes = brushes(palette)
        self._muted = brushes(colors.MUTED if palette is colors.PALETTE else palette)
        self._argb = raster.argb(palette)
        self._argb_muted = raster.argb(colors.MUTED if palette is colors.PALETTE else palette)
        self._bounds = QtCore.QRectF()
        self._selected: tuple[float, float, int] | None = None  # x0, x1, row
        self.labels = LabelPainter()
        self.labels_enabled = True
        self.stats: dict[str, float] = {}
        # Set by a layer that draws this item's sub-pixel rows with other items' (a job's
        # ranks: `sub_pixel_rows`); called when what those rows show changes.
        self._layer_changed: Callable[[], None] | None = None
        self._last_shown: Rects | None = None
        self._delegated_at: QtGui.QTransform | None = None  # the last frame a layer drew
        self._lent = False  # the layer draws the rows at the view's scale now (`lend_rows`)
        self.setFlag(self.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    # --- data ---------------------------------------------------------------------------------
    def set_rects(self, rects: Rects) -> None:
        """Replace all rects (sorted or not). Clears highlight and selection."""
        self.set_index(FlameIndex(rects))

    def set_index(self, index: FlameIndex) -> None:
        """Draw the rects of a prepared `index` (built, levels and all, off the GUI thread).
        Clears highlight and selection."""
        self.prepareGeometryChange()
        self._index = index
        rects = index.rects
        self._highlight = None
        self._selected = None
        idx = self._index
        if len(rects):
            self._bounds = QtCore.QRectF(
                idx.x_min, 0.0, max(idx.x_max - idx.x_min, 1e-9), float(idx.n_rows)
            )
        else:
            self._bounds = QtCore.QRectF()
        self._last_shown, self._delegated_at = None, None
        self._fit_visibility()  # no selection left to outline
        self._changed()

    def delegate_sub_pixel(self, changed: Callable[[], None] | None) -> None:
        """A layer draws this item's rows while they are thinner than `layer_row_px()`
        (`changed`: what to call when they would look different); None: the item draws them
        itself again."""
        self._layer_changed = changed
        if changed is None:
            self.lend_rows(False)
        self.update()

    def lend_rows(self, lent: bool) -> None:
        """Whether the layer (`delegate_sub_pixel`) draws this item's rows at the view's
        scale now; said by the layer each time the view changes, before its frame is
        painted. Lent, the item is hidden, unless it outlines a selection: Qt asked each of
        a job's 64 ranks for its bounds three times a frame and painted it, to draw nothing
        (a sixth of a hand-moved frame). What the rows show is then asked when needed
        (`last_shown`), at the view's transform."""
        self._lent = lent and self._layer_changed is not None
        self._last_shown, self._delegated_at = None, None  # the view changed
        self._fit_visibility()

    def _fit_visibility(self) -> None:
        """Hidden while lent, but for a selection's outline (Qt's own flag: not set again
        unchanged, each frame)."""
        shown = not self._lent or self._selected is not None
        if shown != self.isVisible():
            self.setVisible(shown)

    def _changed(self) -> None:
        if self._layer_changed is not None:
            self._layer_changed()
        self.update()

    @property
    def highlight_index(self) -> FlameIndex | None:
        """The highlighted rects (drawn over the washed-out rest), or None."""
        return self._highlight

    @property
    def argb(self) -> np.ndarray:
        """The palette as image words (`raster.argb`)."""
        return self._argb

    @property
    def argb_muted(self) -> np.ndarray:
        """The washed-out palette (under a highlight) as image words."""
        return self._argb_muted

    @property
    def index(self) -> FlameIndex | None:
        return self._index

    @property
    def rects(self) -> Rects:
        return self._index.rects if self._index is not None else Rects.empty()

    def set_highlight(self, nodes: np.ndarray | None) -> int:
        """Emphasise rects whose node is in `nodes` (others are washed out); None clears.

        Returns how many rects matched.
        """
        if nodes is None or self._index is None:
            self.set_highlight_index(None)
            return 0
        index, count = highlighted(self._index, nodes, build_levels=False)
        self.set_highlight_index(index)
        return count

    def set_highlight_index(self, index: FlameIndex | None) -> None:
        """Emphasise the rects of `index` (made by `highlighted`, perhaps on a worker); None
        clears."""
        self._highlight = index
        self._changed()

    def set_selected(self, node: int | None) -> None:
        """Outline the rect showing `node` (None clears)."""
        self._selected = None
        if node is not None and self._index is not None:
            pos = self._index.position_of(node)
            if pos >= 0:
                r = self._index.rects
                self._selected = (float(r.x0[pos]), float(r.x1[pos]), int(r.row[pos]))
        self._fit_visibility()
        self.update()

    def drawn_at(self, x: float, y: float, tolerance: float = 0.0) -> tuple[int, int]:
        """(node, slices) of the rect drawn last at data point (x, y), or (-1, 0).

        At coarse zoom one drawn rect stands for many slices merged into a pixel column;
        `slices` says how many, so a tooltip can tell the user what they are pointing at.
        """
        shown = self.last_shown()
        if shown is None or not len(shown):
            return -1, 0
        row = int(np.floor(y))
        hit = np.flatnonzero(
            (shown.row == row) & (shown.x0 <= x + tolerance) & (shown.x1 >= x - tolerance)
        )
        if not len(hit):
            return -1, 0
        best = hit[np.argmax(shown.x1[hit] - shown.x0[hit])]
        return int(shown.node[best]), int(shown.count[best])

    def last_shown(self) -> Rects | None:
        """The rects the last frame showed (merged as drawn), or None before any frame. A
        layer drawing this item's rows leaves only the query: it is answered when asked."""
        if self._last_shown is not None or self._index is None:
            return self._last_shown
        at = self._delegated_at
        if at is None and self._lent:  # the layer draws the rows: Qt may skip the item
            at = self.deviceTransform_()
        view = self.viewRect() if at is not None else None
        if at is not None and view is not None:
            sx, sy = abs(at.m11()), abs(at.m22())
            r_lo, r_hi = int(np.floor(view.top())), int(np.ceil(view.bottom()))
            rows = (min(r_lo, r_hi), max(r_lo, r_hi))
            self._last_shown = self._index.query(
                view.left(), view.right(), sx, min(1.0 / sy, 8.0), rows
            )
        return self._last_shown

    def node_at(self, x: float, y: float, tolerance: float = 0.0) -> int:
        """Node under the data point (x, y), or -1; `tolerance` in x data units."""
        if self._index is None:
            return -1
        pos = self._index.hit(x, int(np.floor(y)), tolerance)
        return -1 if pos < 0 else int(self._index.rects.node[pos])

    # --- QGraphicsItem ------------------------------------------------------------------------
    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(
        self,
        painter: QtGui.QPainter,
        option: QtWidgets.QStyleOptionGraphicsItem,
        widget: QtWidgets.QWidget | None = None,
    ) -> None:
        if self._index is None or not len(self._index.rects):
            return
        start = time.perf_counter()
        t = painter.transform()
        if self._lent:
            self._paint_delegated(painter, t)  # the layer draws the rows
            return
        view = self.viewRect()
        if view is None:
            return
        sx, sy, dx, dy = t.m11(), t.m22(), t.dx(), t.dy()
        if sx == 0 or sy == 0:
            return
        x_lo, x_hi = view.left(), view.right()
        r_lo, r_hi = int(np.floor(view.top())), int(np.ceil(view.bottom()))
        rows = (min(r_lo, r_hi), max(r_lo, r_hi))
        painter.save()
        painter.resetTransform()
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        clip = (x_lo * sx + dx, x_hi * sx + dx)
        raster = abs(sy) < 1.0
        if raster:  # rows thinner than a pixel: one image, not a rect per slice
            # k rows share a pixel row: slices merge over k pixel columns, as much ink per pixel
            min_px = min(1.0 / abs(sy), 8.0)
            shown = self._index.query(x_lo, x_hi, abs(sx), min_px, rows)
            self._draw_raster(painter, shown, sx, sy, dx, dy, clip, rows, (x_lo, x_hi), min_px)
        else:
            shown = self._index.query(x_lo, x_hi, abs(sx), 1.0, rows)
            self._draw_rects(painter, shown, sx, sy, dx, dy, clip, rows, (x_lo, x_hi))
        self._draw_selection(painter, sx, sy, dx, dy)
        painter.restore()
        self._last_shown, self._delegated_at = shown, None
        self.stats = {
            "visible": float(len(shown)),
            "slices": float(shown.count.sum()) if len(shown) else 0.0,
            "ms": (time.perf_counter() - start) * 1e3,
            "raster": float(raster),
        }

    def _paint_delegated(self, painter: QtGui.QPainter, t: QtGui.QTransform) -> None:
        """A frame whose rows a layer draws: only the selection's outline is drawn here,
        and what hit-testing needs is kept (the rects shown are found when first asked:
        64 ranks in view would otherwise each cull every frame for a hover that may not come)."""
        self._last_shown = None
        self._delegated_at = QtGui.QTransform(t)
        self.stats = {"raster": 1.0, "delegated": 1.0}
        if self._selected is not None:
            painter.save()
            painter.resetTransform()
            self._draw_selection(painter, t.m11(), t.m22(), t.dx(), t.dy())
            painter.restore()

    def _draw_rects(
        self,
        painter: QtGui.QPainter,
        shown: Rects,
        sx: float,
        sy: float,
        dx: float,
        dy: float,
        clip: tuple[float, float],
        rows: tuple[int, int],
        x_range: tuple[float, float],
    ) -> None:
        """Rows a pixel or taller: one drawRects per colour bucket, the highlighted rects
        outlined over the washed-out rest, then the names of the rects wide enough."""
        brush_set = self._muted if self._highlight is not None else self._brushes
        words = self._argb_muted if self._highlight is not None else self._argb
        geo = self._draw_batch(painter, shown, sx, sy, dx, dy, clip, brush_set, words)
        if self._highlight is not None:
            hits = self._highlight.query(x_range[0], x_range[1], abs(sx), 1.0, rows)
            painter.setPen(QtGui.QPen(QtGui.QColor(30, 30, 30), 1.0))
            self._draw_batch(painter, hits, sx, sy, dx, dy, clip, self._brushes)
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
        if self.labels_enabled and geo is not None:
            px0, px1, py0, h = geo
            self.labels.draw(painter, px0, px1, py0, h, shown.node, self._names)

    def _draw_raster(
        self,
        painter: QtGui.QPainter,
        shown: Rects,
        sx: float,
        sy: float,
        dx: float,
        dy: float,
        clip: tuple[float, float],
        rows: tuple[int, int],
        x_range: tuple[float, float],
        min_px: float,
    ) -> None:
        """Rows thinner than a pixel: every rect covers one pixel row, so the rects (and the
        highlighted ones over them) are filled into one image (`core.layout.raster`) with the
        pixels `_draw_batch` would paint, and the image is drawn once."""
        layers = [(shown, self._argb_muted if self._highlight is not None else self._argb)]
        if self._highlight is not None:
            hits = self._highlight.query(x_range[0], x_range[1], abs(sx), min_px, rows)
            layers.append((hits, self._argb))
        edges = [(device_edges(r, sx, sy, dx, dy, clip), r.bucket, argb) for r, argb in layers]
        edges = [e for e in edges if len(e[0][0])]
        if not edges:
            return
        left = int(np.floor(min(clip))) - 2
        right = int(np.ceil(max(clip))) + 2
        top = int(min(e[0][2].min() for e in edges))
        bottom = int(max(e[0][3].max() for e in edges))
        xs, xl, ys, cs = [], [], [], []
        for (x_start, x_last, y_start, _y_last), bucket, argb in edges:
            # bucket by bucket, as `_draw_batch` issues its drawRects: the same rect wins a pixel
            order = np.argsort(bucket.astype(np.int16), kind="stable")
            xs.append(x_start[order] - left)
            xl.append(x_last[order] - left)
            ys.append(y_start[order] - top)
            cs.append(argb[np.asarray(bucket, dtype=np.int64)[order] % len(argb)])
        image = raster.fill(
            np.concatenate(xs), np.concatenate(xl), np.concatenate(ys), np.concatenate(cs),
            right - left + 1, bottom - top + 1,
        )  # fmt: skip
        qimage = QtGui.QImage(
            image.data, image.shape[1], image.shape[0], image.strides[0],
            QtGui.QImage.Format.Format_ARGB32,
        )  # fmt: skip
        painter.drawImage(QtCore.QPointF(left, top), qimage)

    def _draw_batch(
        self,
        painter: QtGui.QPainter,
        shown: Rects,
        sx: float,
        sy: float,
        dx: float,
        dy: float,
        clip: tuple[float, float],
        brush_set: list[QtGui.QBrush],
        words: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
        """Map rects to device pixels and fill them, one drawRects per bucket; with `words`
        (the brushes' colours as image words: no pen outlines a rect), many rects as
        images a pixel row tall (`draw_row_strips`)."""
        if not len(shown):
            return None
        row_px = abs(sy)
        x_start, x_last, y_start, y_last = device_edges(shown, sx, sy, dx, dy, clip)
        # int16 keys make numpy's stable sort a radix sort: O(n) for the bucket grouping.
        order = np.argsort(shown.bucket.astype(np.int16), kind="stable")
        arr = np.empty((len(shown), 4), dtype=np.int32)
        arr[:, 0] = x_start[order]
        arr[:, 1] = y_start[order]
        arr[:, 2] = x_last[order]
        arr[:, 3] = y_last[order]
        h = max(row_px - 1.0, 1.0)
        geo = x_start, x_last + 1.0, y_start, h
        if words is not None and len(shown) >= STRIP_FROM and shown.bucket.max() < len(words):
            colour = words[np.asarray(shown.bucket, dtype=np.int64)[order]]
            cols = (arr[:, 0], arr[:, 2], arr[:, 1], arr[:, 3])
            if draw_row_strips(painter, *cols, colour, clip):
                return geo
        edges = np.searchsorted(shown.bucket[order], np.arange(len(brush_set) + 1))
        for bucket in range(len(brush_set)):
            s, e = int(edges[bucket]), int(edges[bucket + 1])
            if e > s:
                painter.setBrush(brush_set[bucket])
                draw_rect_array(painter, arr[s:e])
        return geo

    def _draw_selection(
        self, painter: QtGui.QPainter, sx: float, sy: float, dx: float, dy: float
    ) -> None:
        if self._selected is None:
            return
        x0, x1, row = self._selected
        a, b = sorted((x0 * sx + dx, x1 * sx + dx))
        t, u = sorted((row * sy + dy, (row + 1) * sy + dy))
        a, b = max(a, -10.0), min(b, 1e6)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        painter.setPen(QtGui.QPen(QtGui.QColor(0, 90, 200), 2.0))
        painter.drawRect(QtCore.QRectF(a, t, max(b - a - 1, 2.0), max(u - t - 1, 2.0)))


class TrackBands(pg.GraphicsObject):
    """Alternating background bands behind the lanes, so tracks read as separate rows."""

    def __init__(self, tracks: TrackLayout, span: int) -> None:
        super().__init__()
        self.tracks = tracks
        self.span = float(max(span, 1))
        self.setZValue(-10)

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(-1e18, 0, 2e18, float(max(self.tracks.total_rows, 1)))

    def paint(
        self,
        painter: QtGui.QPainter,
        option: QtWidgets.QStyleOptionGraphicsItem,
        widget: QtWidgets.QWidget | None = None,
    ) -> None:
        view = self.viewRect()
        if view is None:
            return
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        shades = (QtGui.QColor(242, 243, 247), QtGui.QColor(250, 250, 252))
        for i, (off, height) in enumerate(zip(self.tracks.offset, self.tracks.height, strict=True)):
            painter.setBrush(shades[i % 2])
            painter.drawRect(
                QtCore.QRectF(view.left(), float(off) - 0.5, view.width(), float(height) + 1.0)
            )


__all__ = ["RectBatchItem", "TrackBands", "draw_rect_array", "highlighted"]
