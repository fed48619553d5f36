"""A frame's many rects filled as images a pixel row tall, one per row of rects, each copied
over its row's pixel rows into one image (`draw_row_strips`): the pixels one drawRects per
colour fills, for a fraction of the painter's work. `RectBatchItem` takes this way for a frame of
many rects on rows a pixel or taller (a whole trace in view)."""

from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui

from perfview.core.layout import raster

# From this many rects a frame fills its rows into images (`draw_row_strips`), not drawRects
STRIP_FROM = 2_000
MAX_STRIP_ROWS = 1 << 16  # pixel rows from the first rect's to the last's (a screen's: ~1,000)


def draw_row_strips(
    painter: QtGui.QPainter,
    x_start: np.ndarray,
    x_last: np.ndarray,
    y_start: np.ndarray,
    y_last: np.ndarray,
    words: np.ndarray,
    clip: tuple[float, float],
) -> bool:
    """Fill rects (inclusive device-pixel edges, in the order drawRects would fill them:
    a later one wins a pixel; `words` their 0xAARRGGBB colours) as one image a pixel tall
    per row of rects, copied over its row's pixel rows: the pixels `draw_rect_array`
    fills, for a fraction of the painter's work. Qt fills a rect span by span: a whole
    trace in view is ~12k rects one or two pixels wide and 17 tall, 5 ms of an 8 ms frame;
    filling one pixel row per row of rects and copying it down costs ~1 ms. The copies
    make one image, drawn once: a stretched draw a row cost ~25 µs each (a job's 65 rows
    in view: 1.7 ms, against 0.9 ms for the copy and the one draw). False (nothing drawn)
    where the rows' pixel rows are not apart (every rect of a row on the same pixel rows,
    rows not sharing any): the caller then fills them."""
    first = int(y_start.min())
    y = np.asarray(y_start, dtype=np.int64) - first
    if int(y.max()) > MAX_STRIP_ROWS:
        return False
    present = np.bincount(y) > 0
    tops = np.flatnonzero(present)
    row = (np.cumsum(present) - 1)[y]
    bottoms = np.empty(len(tops), dtype=np.int64)
    bottoms[row] = y_last - first
    if np.any(bottoms[row] != y_last - first) or np.any(bottoms[:-1] >= tops[1:]):
        return False
    left = int(np.floor(min(clip))) - 2
    width = int(np.ceil(max(clip))) + 2 - left + 1
    # one strip a row of rects, and a last one left blank for the pixel rows between them
    strips = raster.fill(x_start - left, x_last - left, row, words, width, len(tops) + 1)
    heights = bottoms - tops + 1
    ends = np.cumsum(heights)
    which = np.full(int(bottoms[-1] - tops[0]) + 1, len(tops), dtype=np.int64)
    step = np.arange(int(ends[-1]), dtype=np.int64) - np.repeat(ends - heights, heights)
    which[np.repeat(tops - tops[0], heights) + step] = np.repeat(np.arange(len(tops)), heights)
    picture = strips[which]  # each pixel row its strip's copy: one image, drawn unscaled
    image = QtGui.QImage(
        picture.data, width, len(which), picture.strides[0],
        QtGui.QImage.Format.Format_ARGB32_Premultiplied,
    )  # fmt: skip
    painter.drawImage(QtCore.QPoint(left, int(tops[0]) + first), image)
    return True
