"""Many `RectBatchItem`s whose rows are too thin for names, drawn as one picture of tiles.

A job with every rank expanded and the whole job in view stacks ~2,000 rows in ~1,000 pixels,
from 64 items (one per rank). Each item drawing itself (cull, merge, an image of its own)
made the frame cost ranks × slices: 120-200 ms. This layer draws every member's sub-pixel
rows into one image, cut into fixed pixel tiles kept between frames (`tile_cache`): while
the user pans, only the tiles that came into view are drawn, each from every member's
pre-merged level of detail, and the rest are copied. Work per frame is bounded by the new
pixels, not by ranks or slices.

The tiles live in *absolute* pixels of the zoom: a member's slice at x lands on pixel
`floor(x * sx + shift * sx)`, the view's own offset added afterwards as a whole number of
pixels. So a tile's pixels depend on the zoom and the data, never on where the view starts,
and a cached tile is the very picture a fresh draw would give (tested after a pan and after
a highlight change). The price is that the picture may sit up to half a pixel from the
exact transform, which at these zooms (rows thinner than a name) is hard to see; a member's
selection outline, drawn at the exact transform, may sit a pixel off the layer's slice.

While the user zooms (a wheel turning: the owner calls `moved_by_hand`), each frame is a new
zoom without tiles, and drawing them all would cost 50-100 ms a frame; as a map does, such
a frame shows the tiles of the last exact zoom stretched to the new one, and the exact
tiles are drawn once the hand has rested for `settle_ms` (`stats["scaled"]` says which a
frame was). And while the hand is on the view (moved less than `hand_ms` ago: a drag, a
jump, the zoom come to rest), tiles not kept are drawn on a worker thread, as a map fetches
them: the frame shows what is kept (and the last exact zoom stretched where a tile is
missing) and costs image copies only; the new tiles come back through `tiles_drawn` and the
next frame shows them. The drawing is numpy over arrays no one changes (a `Member`
snapshot of each rank's index and place; `sub_pixel_picture` draws it), so the worker
reads them without locks, and a result made for data or a highlight since replaced is
dropped. A view moved by code (a
screenshot, an export, a test) is always exact, drawn on the spot.

Rows from `rect_batch.layer_row_px()` (~12 px: where a name fits) are not drawn here:
members draw those themselves, names and all. Thinner rows were also drawn member by member
while a pixel or taller (a quarter of a 64-rank job in view, rows of ~1.4 px: 33-40 ms a
frame, scrolling; a twentieth, rows of ~9 px: 14-17 ms); here they are kept between frames:
rows under `rect_batch.OUTLINE_ROW_PX` (3 px) always, taller ones while the hand is on the
view (moved by code, a new place costs the members less than new tiles cost the layer). A
highlighted slice is drawn in its colour over the washed-out rest, and from 3 px outlined
as its member outlines it (in thinner rows an outline would cover it). A member's selection
outline is its own, drawn over the layer.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.layout.flame import Rects
from perfview.qt.items import sub_pixel_picture
from perfview.qt.items.rect_batch import OUTLINE_ROW_PX, RectBatchItem, thin_rows
from perfview.qt.items.sub_pixel_picture import Member, Region, Tiles
from perfview.qt.items.tile_cache import TILE_H, TILE_W, TileCache

Zoom = tuple[float, float, int]  # x and y scale (quantized), the tiles' version
SETTLE_MS = 150  # a zoom unchanged this long is drawn exactly (a wheel's steps come faster)
HAND_MS = 1_000  # the view moved by hand this recently: new tiles are drawn off the GUI thread
STRETCH_TILES = 256  # a stretched frame draws at most this many tiles, else it is exact


def quantized(scale: float) -> float:
    """`scale` to 10 significant digits: a pan computes the same zoom with different last
    bits, which must not miss the cache; the tiles are drawn with this value itself."""
    return float(f"{scale:.10g}")


class SubPixelRows(pg.GraphicsObject):
    """Draws its members' rows, when too thin for names (`thin_rows`), as one tiled picture.

    Members are `RectBatchItem`s in the same parent, placed by a transform that scales and
    shifts x and shifts y by whole rows (the job timeline's ranks). `invalidate()` drops
    the tiles; members call it when their data or highlight changes, the owner when it
    moves them. `tiles_drawn` is emitted (on the GUI thread) once tiles drawn off it are
    kept, and the frame that shows them asked for. While their rows are drawn here the
    members are hidden (`RectBatchItem.lend_rows`), but for one outlining a selection, and
    the layer counts their extent in the view's auto range instead: add it to the plot
    without `ignoreBounds`.
    """

    tiles_drawn = QtCore.Signal()
    _done = QtCore.Signal(object)  # a worker's tiles, delivered on the GUI thread

    def __init__(self, cache: TileCache | None = None) -> None:
        super().__init__()
        self.cache = cache or TileCache()
        self._members: list[RectBatchItem] = []
        self._lent = False  # the members' rows were drawn here at the last view (`_lend`)
        self._snapshot: list[Member] | None = None  # the members as last read (`_drawn`)
        self._version = 0
        self._bounds = QtCore.QRectF()
        self.stats: dict[str, float] = {}
        self.settle_ms = SETTLE_MS  # 0: every frame exact
        self.hand_ms = HAND_MS  # 0: tiles always drawn on the GUI thread
        self._exact: Zoom | None = None  # the zoom of the last frame drawn whole
        # that frame's tiles once what they show has changed (`invalidate`): shown where a
        # tile is still being drawn, until a frame is whole again
        self._stale: tuple[tuple[float, float], dict[Hashable, np.ndarray | None]] | None = None
        self._moved_at = float("-inf")  # when the user last moved the view
        self._changed_at = float("-inf")  # when the user last changed what is shown
        self._settle = QtCore.QTimer()
        self._settle.setSingleShot(True)
        self._settle.timeout.connect(self.update)
        # one worker: tiles asked for while it draws wait, the newest ask replacing older
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="perfview-tiles")
        self._busy: tuple[Zoom, Region] | None = None  # the ask the worker is drawing
        self._next: tuple[Zoom, Region] | None = None  # the newest ask waiting for it
        self._done.connect(self._keep_drawn)

    def moved_by_hand(self, *_how: object) -> None:
        """The user moved the view (wheel, drag): a new zoom may be stretched for a while,
        and new tiles are drawn off the GUI thread."""
        self._moved_at = time.perf_counter()

    def redraw_later(self) -> None:
        """What the tiles show is changing by the user's act (a search, a rank expanded):
        the new tiles are drawn off the GUI thread, the last picture shown meanwhile."""
        self._changed_at = time.perf_counter()

    @property
    def drawing(self) -> bool:
        """Whether tiles are being drawn off the GUI thread (or waiting to be)."""
        return self._busy is not None

    def set_members(self, members: Sequence[RectBatchItem]) -> None:
        """Draw these items' sub-pixel rows (top to bottom by their place: where two rows
        share a pixel row, the lower item's wins, as it would drawn after)."""
        for item in self._members:
            if item not in members:
                item.delegate_sub_pixel(None)
        self._members = list(members)
        for item in self._members:
            item.delegate_sub_pixel(self.invalidate)
        self.invalidate()
        self._lend(afresh=True)

    def viewTransformChanged(self) -> None:
        """pyqtgraph's call when the view's transform changed (a pan, a zoom, a resize),
        before the frame is painted: tell each member whether its rows are drawn here at
        the new scale (`RectBatchItem.lend_rows`: then Qt skips it)."""
        super().viewTransformChanged()
        self._lend()

    def _lend(self, *, afresh: bool = False) -> None:
        """Tell the members (all of them `afresh`) whether their rows are drawn here: rows
        thinner than `OUTLINE_ROW_PX` always, rows up to `layer_row_px()` while the hand is
        on the view (a view moved by code there is drawn by the members, on the spot: a
        new place's tiles cost the layer twice a member's own frame, 31-32 ms against
        14-19 for 60 rows of 11.3 px)."""
        t = self.deviceTransform_()
        lent = (
            t is not None
            and thin_rows(t.m11(), t.m22())
            and (t.m22() < OUTLINE_ROW_PX or self._by_hand())
        )
        if lent or self._lent or afresh:  # else each member drew its rows and goes on so
            for item in self._members:
                item.lend_rows(lent)
        self._lent = lent

    def invalidate(self) -> None:
        """What the tiles show changed (data, highlight, placement): draw them afresh."""
        if self._exact is not None and (kept := self.cache.of_zoom(self._exact)):
            self._stale = ((self._exact[0], self._exact[1]), kept)
        self._version += 1
        self._snapshot = None
        self._next = None  # a waiting ask is for the old picture; a drawing one is dropped
        self.cache.clear()
        self.prepareGeometryChange()
        bounds = QtCore.QRectF()
        for item in self._members:
            bounds = bounds.united(item.mapRectToParent(item.boundingRect()))
        if bounds != self._bounds:
            self._bounds = bounds
            self.informViewBoundsChanged()
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def dataBounds(
        self, ax: int, frac: float = 1.0, orthoRange: tuple[float, float] | None = None
    ) -> tuple[float, float] | None:
        """The members' extent on axis `ax` (0: x, 1: y), None without members: counted in
        the view's auto range in their stead while they are hidden (`_lend`)."""
        b = self._bounds
        if b.isNull():
            return None
        return (b.left(), b.right()) if ax == 0 else (b.top(), b.bottom())

    def paint(
        self,
        painter: QtGui.QPainter,
        option: QtWidgets.QStyleOptionGraphicsItem,
        widget: QtWidgets.QWidget | None = None,
    ) -> None:
        t = painter.transform()
        view = self.viewRect()
        if view is None or not self._members or not self._lent:
            return
        start = time.perf_counter()
        sx, sy = quantized(t.m11()), quantized(t.m22())
        offset = (round(t.dx()), round(t.dy()))
        # the view in absolute pixels, snapped outward to whole tiles
        tx0, tx1 = (
            int(np.floor(view.left() * sx / TILE_W)),
            int(np.floor(view.right() * sx / TILE_W)),
        )
        ty0, ty1 = (
            int(np.floor(view.top() * sy / TILE_H)),
            int(np.floor(view.bottom() * sy / TILE_H)),
        )
        zoom = (sx, sy, self._version)
        if self._in_gesture(zoom, view) and self._stretched(painter, view, zoom, offset, None):
            self._settle.start(max(int(self.settle_ms), 1))
            self.stats = {"scaled": 1.0, "ms": (time.perf_counter() - start) * 1e3}
            return
        wanted = [(tx, ty) for ty in range(ty0, ty1 + 1) for tx in range(tx0, tx1 + 1)]
        # the tiles this frame shows, held here: drawing new ones may push old ones out
        tiles = {k: self.cache.get((zoom, k)) for k in wanted if (zoom, k) in self.cache}
        missing = [k for k in wanted if k not in tiles]
        drawn, later = 0, False
        if missing:
            span = self._span(missing, bool(tiles), zoom, ty0)
            later = self._by_hand()
            if later:  # on the worker; meanwhile the last exact zoom where a tile is missing
                self._ask((zoom, span))
                self._stretched(painter, view, zoom, offset, missing)
                self._draw_stale(painter, zoom, offset, missing)
            else:
                drawn = self._draw_tiles(sx, sy, zoom, span, tiles)
        if not later:
            self._exact, self._stale = zoom, None
        in_view = {k: t for k, t in tiles.items() if ty0 <= k[1] <= ty1 and tx0 <= k[0] <= tx1}
        _put(painter, in_view, offset)
        # kept until here: each QImage drawn read its tile's memory
        self.stats = {
            "rects": float(drawn),  # rects filled into new tiles this frame
            "tiles": float(len(wanted)),
            "tiles_new": float(len(missing)),
            "tiles_later": float(len(missing) if later else 0),  # asked of the worker
            "scaled": 0.0,
            "ms": (time.perf_counter() - start) * 1e3,
        }

    def _span(self, missing: list[tuple[int, int]], panning: bool, zoom: Zoom, ty0: int) -> Region:
        """The tiles to draw for `missing` (inclusive tile numbers): their box, and while
        panning (some tiles kept) one tile column more on a side where none is kept; drawing
        it with the rest costs little (the work is mostly per rank, not per pixel), and the
        next frames of a pan that way find it ready."""
        xs = [k[0] for k in missing]
        ys = [k[1] for k in missing]
        lo, hi = min(xs), max(xs)
        ahead = [
            tx for tx in (lo - 1, hi + 1)
            if panning and self._on_data(tx, zoom[0]) and (zoom, (tx, ty0)) not in self.cache
        ]  # fmt: skip
        return min([lo, *ahead]), min(ys), max([hi, *ahead]), max(ys)

    def _by_hand(self) -> bool:
        """Whether the user moved the view or changed what it shows within `hand_ms`: new
        tiles are drawn later."""
        since = time.perf_counter() - max(self._moved_at, self._changed_at)
        return since * 1e3 < self.hand_ms

    def _in_gesture(self, zoom: Zoom, view: QtCore.QRectF) -> bool:
        """Whether this frame is in a zoom gesture: the user moved the view less than
        `settle_ms` ago, to a zoom other than the last exact one, and no tile of this zoom
        is kept where the view starts."""
        exact = self._exact
        if (
            exact is None or exact == zoom or exact[2] != zoom[2]
            or (time.perf_counter() - self._moved_at) * 1e3 >= self.settle_ms
        ):  # fmt: skip
            return False
        first = (
            int(np.floor(view.left() * zoom[0] / TILE_W)),
            int(np.floor(view.top() * zoom[1] / TILE_H)),
        )
        return (zoom, first) not in self.cache

    def _stretched(
        self,
        painter: QtGui.QPainter,
        view: QtCore.QRectF,
        zoom: Zoom,
        offset: tuple[int, int],
        only: list[tuple[int, int]] | None,
    ) -> bool:
        """Draw the last exact zoom's kept tiles stretched to this one (only over the tiles
        `only` of this zoom, if given) and say whether any was."""
        exact = self._exact
        if exact is None or exact == zoom or exact[2] != zoom[2]:
            return False
        sx0, sy0 = exact[0], exact[1]
        tx0, tx1 = (int(np.floor(x * sx0 / TILE_W)) for x in (view.left(), view.right()))
        ty0, ty1 = (int(np.floor(y * sy0 / TILE_H)) for y in (view.top(), view.bottom()))
        if (tx1 - tx0 + 1) * (ty1 - ty0 + 1) > STRETCH_TILES:
            return False
        kept = [
            (tx, ty, self.cache.get((exact, (tx, ty))))
            for ty in range(ty0, ty1 + 1)
            for tx in range(tx0, tx1 + 1)
            if (exact, (tx, ty)) in self.cache
        ]
        if not kept:
            return False
        rx, ry = zoom[0] / sx0, zoom[1] / sy0
        painter.save()
        painter.resetTransform()
        if only is not None:  # not under this zoom's kept tiles, whose blank pixels show through
            clip = QtGui.QRegion()
            for tx, ty in only:
                x, y = tx * TILE_W + offset[0], ty * TILE_H + offset[1]
                clip = clip.united(QtCore.QRect(x, y, TILE_W, TILE_H))
            # within the view's own clip (the ViewBox clips its children): replacing it
            # drew stretched tiles over the axes
            painter.setClipRegion(clip, QtCore.Qt.ClipOperation.IntersectClip)
        for tx, ty, tile in kept:
            if tile is not None:
                target = QtCore.QRectF(
                    tx * TILE_W * rx + offset[0], ty * TILE_H * ry + offset[1],
                    TILE_W * rx, TILE_H * ry,
                )  # fmt: skip
                painter.drawImage(target, _image(tile))
        painter.restore()
        return True

    def _draw_stale(
        self,
        painter: QtGui.QPainter,
        zoom: Zoom,
        offset: tuple[int, int],
        missing: list[tuple[int, int]],
    ) -> None:
        """Where a tile is missing, the tile the last whole frame had there before what the
        tiles show changed (a search's new highlight: the old picture until the new one
        comes, not a blank one), if it was at this zoom."""
        if self._stale is None or self._stale[0] != (zoom[0], zoom[1]):
            return
        kept = self._stale[1]
        _put(painter, {k: kept.get(k) for k in missing}, offset)

    def _on_data(self, tx: float, sx: float) -> bool:
        """Whether tile column `tx` at scale sx reaches the members' extent."""
        return bool(
            tx * TILE_W <= self._bounds.right() * sx
            and (tx + 1) * TILE_W >= self._bounds.left() * sx
        )

    def _draw_tiles(self, sx: float, sy: float, zoom: Zoom, span: Region, into: Tiles) -> int:
        """Draw the tiles span[0]..span[2] × span[1]..span[3] (inclusive) in one image, keep
        each in the cache and in `into`; returns the rects drawn."""
        tiles, drawn = sub_pixel_picture.tiles(self._drawn(), sx, sy, span)
        for key, tile in tiles.items():
            into[key] = tile
            self.cache.put((zoom, key), tile)
        return drawn

    def _drawn(self) -> list[Member]:
        """The members as the layer draws them, read once per version (`Member`)."""
        if self._snapshot is None:
            by_place = sorted(self._members, key=lambda item: item.transform().dy())
            self._snapshot = [Member.of(item) for item in by_place]
        return self._snapshot

    def _ask(self, ask: tuple[Zoom, Region]) -> None:
        """Have the worker draw `ask`'s tiles: now if it is idle, else once it is (the
        newest ask replaces one still waiting: the view has moved on from it)."""
        if ask == self._busy:
            return
        if self._busy is not None:
            self._next = ask
            return
        self._busy = ask
        (sx, sy, _version), span = ask
        self._worker.submit(self._draw_off_thread, self._drawn(), sx, sy, span, ask)

    def _draw_off_thread(
        self, members: list[Member], sx: float, sy: float, span: Region, ask: object
    ) -> None:
        """On the worker: draw the tiles and hand them to the GUI thread (`_keep_drawn`);
        None if drawing failed, which has the GUI thread draw them itself from then on (where
        the error shows as any frame's would)."""
        tiles: Tiles | None = None
        try:
            tiles, _drawn = sub_pixel_picture.tiles(members, sx, sy, span)
        finally:
            with contextlib.suppress(RuntimeError):  # the layer was deleted meanwhile
                self._done.emit((ask, tiles))

    def _keep_drawn(self, result: tuple[tuple[Zoom, Region], Tiles | None]) -> None:
        """On the GUI thread: keep the worker's tiles (unless what they show has changed
        since), start the waiting ask, and have the view drawn again."""
        (zoom, _span), tiles = result
        self._busy = None
        if tiles is None:  # the worker failed: drawn on the spot from now on
            self.hand_ms, self._next = 0, None
        elif zoom[2] == self._version:
            for key, tile in tiles.items():
                if (zoom, key) not in self.cache:
                    self.cache.put((zoom, key), tile)
        ask, self._next = self._next, None
        if ask is not None:
            self._ask(ask)
        self.update()
        self.tiles_drawn.emit()

    def picture(self, sx: float, sy: float, region: Region) -> tuple[np.ndarray, int]:
        """Every member's rows inside `region` (absolute pixels at scales sx, sy) as one
        (height, width) ARGB32 image, and how many rects it took (`picture`)."""
        return sub_pixel_picture.picture(self._drawn(), sx, sy, region)

    def placed(self, sx: float, sy: float, region: Region) -> list[tuple[Rects, np.ndarray, bool]]:
        """The rects `picture` fills, with their colours (`placed`)."""
        return sub_pixel_picture.placed(self._drawn(), sx, sy, region)


def _put(
    painter: QtGui.QPainter, tiles: dict[tuple[int, int], np.ndarray | None],
    offset: tuple[int, int],
) -> None:  # fmt: skip
    """Draw tiles at their places (tile numbers), the view's offset added in device pixels
    (the caller keeps each tile alive while it is drawn)."""
    painter.save()
    painter.resetTransform()
    for (tx, ty), tile in tiles.items():
        if tile is not None:
            point = QtCore.QPointF(tx * TILE_W + offset[0], ty * TILE_H + offset[1])
            painter.drawImage(point, _image(tile))
    painter.restore()


def _image(tile: np.ndarray) -> QtGui.QImage:
    """A tile as a QImage over its memory (the caller keeps `tile` alive while it is drawn).
    Opaque colours or 0: the words are premultiplied already (Qt's fast path)."""
    return QtGui.QImage(
        tile.data, TILE_W, TILE_H, TILE_W * 4, QtGui.QImage.Format.Format_ARGB32_Premultiplied
    )


__all__ = ["HAND_MS", "SETTLE_MS", "SubPixelRows", "quantized"]
