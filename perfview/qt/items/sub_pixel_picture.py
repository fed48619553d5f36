"""What a job's thin rows look like in a region of pixels: numpy only, any thread.

`SubPixelRows` (the Qt item) decides which tiles a frame needs, keeps them and schedules
their drawing; this module draws them. Its input is a `Member` snapshot of each rank (index,
highlight, colours, place), read on the GUI thread; nothing here changes it, so the layer's
worker draws from it without locks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from perfview.core.layout import raster
from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex, merged_loaded
from perfview.qt.items.rect_batch import OUTLINE_ROW_PX, RectBatchItem, device_edges
from perfview.qt.items.tile_cache import TILE_H, TILE_W

Region = tuple[int, int, int, int]  # absolute pixels: x0, y0, x1, y1 (exclusive ends)
Tiles = dict[tuple[int, int], np.ndarray | None]


@dataclass(frozen=True)
class Member:
    """What the layer draws of one member, read on the GUI thread so a worker can draw it:
    its index and highlight (arrays no one changes once made), colours, and its place (x
    scale and shift, y shift in rows)."""

    index: FlameIndex | None
    highlight: FlameIndex | None
    argb: np.ndarray
    argb_muted: np.ndarray
    scale_x: float
    shift_x: float
    shift_y: float

    @classmethod
    def of(cls, item: RectBatchItem) -> Member:
        place = item.transform()
        return cls(
            item.index, item.highlight_index, item.argb, item.argb_muted,
            place.m11(), place.dx(), place.dy(),
        )  # fmt: skip


def tiles(members: list[Member], sx: float, sy: float, span: Region) -> tuple[Tiles, int]:
    """The tiles span[0]..span[2] × span[1]..span[3] (inclusive) drawn as one image and cut
    (None where nothing is drawn), and the rects it took."""
    x0, y0 = span[0] * TILE_W, span[1] * TILE_H
    x1, y1 = (span[2] + 1) * TILE_W, (span[3] + 1) * TILE_H
    image, drawn = picture(members, sx, sy, (x0, y0, x1, y1))
    out: Tiles = {}
    for ty in range(span[1], span[3] + 1):
        for tx in range(span[0], span[2] + 1):
            a, b = (ty - span[1]) * TILE_H, (tx - span[0]) * TILE_W
            part = image[a : a + TILE_H, b : b + TILE_W]
            out[(tx, ty)] = np.ascontiguousarray(part) if part.any() else None
    return out, drawn


def picture(members: list[Member], sx: float, sy: float, region: Region) -> tuple[np.ndarray, int]:
    """The members' rows inside `region` (absolute pixels at scales sx, sy) as one
    (height, width) ARGB32 image (`placed`'s rects filled, in their order), and how many
    rects it took. Rows a pixel or taller are bands of their own, so the washed-out or
    plain base is filled a band at a time (`raster.fill_bands`: one pixel row each, copied
    down) and the highlighted drawn over it. Qt-free and reads nothing that changes: a
    worker may call it."""
    x0, y0, x1, y1 = region
    width, height = x1 - x0, y1 - y0
    base: list[list[np.ndarray]] = []  # x_start, x_last, y_start, y_last, colour: per part
    lit: list[list[np.ndarray]] = []
    for shown, argb, highlighted in placed(members, sx, sy, region):
        edges = device_edges(shown, 1.0, sy, 0.0, 0.0, (x0, x1))
        words = argb[np.asarray(shown.bucket, dtype=np.int64) % len(argb)]
        key = shown.bucket.astype(np.int16)
        if highlighted and sy >= OUTLINE_ROW_PX:
            edges, words, key = _outlined(edges, words, key)
        # bucket by bucket, as drawRects would paint them: the same rect wins a pixel
        order = np.argsort(key, kind="stable")
        x_start, x_last, y_start, y_last = edges
        part = [x_start[order] - x0, x_last[order] - x0, y_start[order] - y0]
        (lit if highlighted else base).append([*part, y_last[order] - y0, words[order]])
    drawn = sum(len(p[0]) for p in base + lit)
    joined = [
        [np.concatenate(column) for column in zip(*parts, strict=True)] for parts in (base, lit)
    ]
    image = None
    if base and sy >= 1.0:  # each row of the layer its own band
        x_start, x_last, y_start, y_last, colour = joined[0]
        image = raster.fill_bands(x_start, x_last, y_start, y_last, colour, width, height)
    if image is None:
        image = np.zeros((height, width), dtype=np.uint32)
        if base:
            x_start, x_last, y_start, y_last, colour = joined[0]
            raster.fill(x_start, x_last, y_start, colour, width, height, y_last, out=image)
    if lit:
        x_start, x_last, y_start, y_last, colour = joined[1]
        raster.fill(x_start, x_last, y_start, colour, width, height, y_last, out=image)
    return image, drawn


Edges = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
OUTLINE_WORD = np.uint32(0xFF1E1E1E)  # the member's outline pen, QColor(30, 30, 30)


def _outlined(
    edges: Edges, words: np.ndarray, key: np.ndarray
) -> tuple[Edges, np.ndarray, np.ndarray]:
    """Highlighted rects as a member outlines them (`RectBatchItem._draw_rects`: one
    drawRects a bucket with a 1-px pen): Qt fills a call's rects, then strokes each
    rect's border, its last column and row one past the rect (x_start..x_last + 1,
    y_start..y_last + 1). The fills, then four border rects each in the pen's colour,
    with sort keys that keep each bucket's borders after its fills."""
    x_start, x_last, y_start, y_last = edges
    right, bottom = x_last + 1.0, y_last + 1.0
    # each rect, then its top, bottom, left and right borders
    both: Edges = (
        np.concatenate([x_start, x_start, x_start, x_start, right]),
        np.concatenate([x_last, right, right, x_start, right]),
        np.concatenate([y_start, y_start, bottom, y_start, y_start]),
        np.concatenate([y_last, y_start, bottom, bottom, bottom]),
    )
    ink = np.concatenate([words, np.full(4 * len(words), OUTLINE_WORD, dtype=np.uint32)])
    keys = np.concatenate([2 * key.astype(np.int16), np.tile(2 * key.astype(np.int16) + 1, 4)])
    return both, ink, keys


def placed(
    members: list[Member], sx: float, sy: float, region: Region
) -> list[tuple[Rects, np.ndarray, bool]]:
    """The rects `picture` fills, with their colours and whether they are the highlighted
    ones: x in absolute pixels, rows the layer's (every member's own rows under its place),
    slices narrower than the pixels two rows share merged; the washed-out base first, the
    highlighted over it (outlined where rows are `OUTLINE_ROW_PX` or taller, as a member
    outlines them). `members` top to bottom by their place.

    Each member only culls its level of detail; everything after (placing, merging) runs
    once over all members together: per member it was ~100 numpy calls, most of a frame
    with 64 ranks in view."""
    # k rows share a pixel row: merge over k pixel columns (rows a pixel or taller: over one,
    # as a member drawing its own rows merges)
    min_px = min(max(1.0 / sy, 1.0), 8.0)
    groups: dict[tuple[int, bytes], tuple[np.ndarray, list[Rects], list[Rects]]] = {}
    for member in members:
        for layer, (rects, argb, coarse) in enumerate(
            _member_rects(member, sx, sy, region, min_px)
        ):
            if len(rects):
                _argb, raw, ready = groups.setdefault((layer, argb.tobytes()), (argb, [], []))
                (ready if coarse else raw).append(rects)
    out = []
    for (layer, _words), (argb, raw, ready) in sorted(groups.items(), key=lambda g: g[0][0]):
        # compiled where numba is loaded; never imported here, on the GUI thread (~1 s)
        parts = [merged_loaded(_joined(raw), 1.0, min_px)] if raw else []
        out.append((_joined(parts + ready), argb, layer == 1))
    return out


def _member_rects(
    member: Member, sx: float, sy: float, region: Region, min_px: float
) -> list[tuple[Rects, np.ndarray, bool]]:
    """A member's rects in `region`, x in absolute pixels and rows the layer's: the
    washed-out base and the highlighted ones over it, each with its colours and whether it
    is merged already (a coarse level) or still to merge (the finest)."""
    index = member.index
    if index is None or not len(index.rects):
        return []
    sxl, dxa, shift = member.scale_x * sx, member.shift_x * sx, member.shift_y
    x0, y0, x1, y1 = region
    r_lo = math.floor(y0 / sy - shift) - 1  # math: called for each of 64 ranks a frame
    r_hi = math.ceil(y1 / sy - shift) + 1
    if r_hi < 0 or r_lo >= index.n_rows or sxl <= 0:
        return []
    rows = (max(r_lo, 0), min(r_hi, index.n_rows - 1))
    # a merged rect spans < 2 of its columns: this margin keeps every merge that reaches
    # into the region whole, so a tile is the same whichever region it was drawn in
    margin = (2.0 * min_px + 4.0) / sxl
    x_lo, x_hi = (x0 - dxa) / sxl - margin, (x1 - dxa) / sxl + margin
    if x_hi < index.x_min or x_lo > index.x_max:
        return []
    highlight = member.highlight
    layers = [(index, member.argb_muted if highlight is not None else member.argb)]
    if highlight is not None:
        layers.append((highlight, member.argb))
    out = []
    for source, argb in layers:
        rects, idx, to_merge = source.culled(x_lo, x_hi, sxl, min_px, rows)
        placed = Rects(
            rects.x0[idx] * sxl + dxa, rects.x1[idx] * sxl + dxa,
            rects.row[idx].astype(np.int64) + int(shift), idx,
            rects.bucket[idx], rects.count[idx],
        )  # fmt: skip
        out.append((placed, argb, not to_merge))
    return out


def _joined(parts: list[Rects]) -> Rects:
    """Rects of several members end to end (each in (row, x0) order, rows ascending)."""
    if len(parts) == 1:
        return parts[0]
    return Rects(*(np.concatenate([getattr(r, f) for r in parts]) for f in _FIELDS))


_FIELDS = ("x0", "x1", "row", "node", "bucket", "count")


__all__ = ["Member", "Region", "Tiles", "picture", "placed", "tiles"]
