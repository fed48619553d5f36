"""Rectangles a few pixel rows tall or less, filled into an image instead of drawn one by one.

When rows are thinner than a pixel (a job's every rank expanded and the whole job in view:
~2,000 rows in ~1,000 pixels), each visible rectangle covers one pixel row and a few pixel
columns, and there are hundreds of thousands of them even after sub-pixel merging in x
(`flame_cull.merge`). Handing each to the painter costs more than the pixels it changes, so
they are written into a 32-bit image with numpy (one pass over the pixels they cover, which
is bounded by the image's size times the rows sharing a pixel) and the image is drawn once.

The fill keeps the painter's rule for overlaps: rectangles are written in the order given,
so a later one wins a pixel, as with successive `drawRects` calls. numpy, no Qt: the
caller wraps the array in a `QImage`. Once numba is loaded (the window loads it at start-up)
the fill is compiled (`layout_kernels._fill`: the same pixels, one write each).
"""

from __future__ import annotations

import numpy as np


def fill(
    x_first: np.ndarray,
    x_last: np.ndarray,
    y: np.ndarray,
    colour: np.ndarray,
    width: int,
    height: int,
    y_last: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """A (height, width) uint32 image, 0 (transparent) where nothing is drawn, and each rect
    i's pixels x_first[i]..x_last[i] (inclusive) of row y[i] (to row y_last[i], inclusive,
    when given) set to colour[i], later rects over earlier ones. Coordinates are image
    pixels; what falls outside is clipped. `out`: draw over this (height, width) C-ordered
    uint32 image instead of a blank one, and return it."""
    if out is not None:
        image = out
    else:
        image = np.zeros((max(height, 0), max(width, 0)), dtype=np.uint32)
    if not len(x_first) or width <= 0 or height <= 0:
        return image
    from perfview.core.layout import layout_kernels

    if layout_kernels.ready(len(x_first)):  # one write a pixel, compiled (numba loaded)
        edges = [layout_kernels.plain(a, np.int64) for a in (x_first, x_last, y)]
        last = edges[2] if y_last is None else layout_kernels.plain(y_last, np.int64)
        words = layout_kernels.plain(colour, np.uint32)
        layout_kernels.fill_kernel()(*edges, last, words, image)
        return image
    x0 = np.asarray(x_first, dtype=np.int64)
    x1 = np.asarray(x_last, dtype=np.int64)
    row = np.asarray(y, dtype=np.int64)
    colour = np.asarray(colour, dtype=np.uint32)
    if y_last is not None:  # a rect a row per pixel row it covers, in the rects' order
        tall = np.maximum(np.asarray(y_last, dtype=np.int64) - row + 1, 1)
        if int(tall.max()) > 1:
            which = np.repeat(np.arange(len(row)), tall)
            x0, x1, row, colour = x0[which], x1[which], _spans(row, tall), colour[which]
    keep = (row >= 0) & (row < height) & (x1 >= 0) & (x0 < width) & (x1 >= x0)
    x0 = np.clip(x0[keep], 0, width - 1)
    x1 = np.clip(x1[keep], 0, width - 1)
    row = row[keep]
    lengths = x1 - x0 + 1
    total = int(lengths.sum())
    if total == 0:
        return image
    # one index per covered pixel, in the rects' order
    image.reshape(-1)[_spans(row * width + x0, lengths)] = np.repeat(colour[keep], lengths)
    return image


def _spans(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """first[i], first[i] + 1, ..., first[i] + lengths[i] - 1 for each i, end to end: the
    pixels (or pixel rows) each rect covers, in the rects' order."""
    lengths = np.asarray(lengths, dtype=np.int64)
    before = np.cumsum(lengths) - lengths
    total = int(before[-1] + lengths[-1]) if len(lengths) else 0
    return np.repeat(np.asarray(first, dtype=np.int64) - before, lengths) + np.arange(total)


MAX_BAND_ROWS = 1 << 16  # pixel rows from the first band's top to the last's (a screen's: ~1,000)


def fill_bands(
    x_first: np.ndarray,
    x_last: np.ndarray,
    y: np.ndarray,
    y_last: np.ndarray,
    colour: np.ndarray,
    width: int,
    height: int,
) -> np.ndarray | None:
    """`fill(x_first, x_last, y, colour, width, height, y_last)`'s image, made a band at a
    time, or None where the rects are not in bands. A band is the pixel rows y..y_last that
    every rect starting at row y covers (a row of slices, a pixel or taller), and bands do
    not share a pixel row. Each band is filled one pixel row tall, then copied over its
    pixel rows: a row of slices 17 px tall costs one row's writes and a copy, not 17 rows'
    writes (a job's 60 rows in view: 2,048 × 768 pixels filled in ~8 ms, as bands ~2 ms)."""
    if not len(y):
        return np.zeros((max(height, 0), max(width, 0)), dtype=np.uint32)
    first = int(np.min(y))
    rel = np.asarray(y, dtype=np.int64) - first
    if int(rel.max()) > MAX_BAND_ROWS:
        return None
    present = np.bincount(rel) > 0
    tops = np.flatnonzero(present)
    band = (np.cumsum(present) - 1)[rel]
    last = np.asarray(y_last, dtype=np.int64) - first
    bottoms = np.empty(len(tops), dtype=np.int64)
    bottoms[band] = last
    if np.any(bottoms[band] != last) or np.any(bottoms[:-1] >= tops[1:]):
        return None
    # one strip a band, and a last one left blank for the pixel rows between and around them
    strips = fill(x_first, x_last, band, colour, width, len(tops) + 1)
    tops, bottoms = tops + first, bottoms + first
    which = np.full(max(height, 0), len(tops), dtype=np.int64)
    heights = np.maximum(np.minimum(bottoms, height - 1) - np.maximum(tops, 0) + 1, 0)
    which[_spans(np.maximum(tops, 0), heights)] = np.repeat(np.arange(len(tops)), heights)
    return strips[which]


def argb(palette: object) -> np.ndarray:
    """Opaque 0xAARRGGBB words for an (r, g, b) palette (QImage's ARGB32 layout)."""
    rgb = np.asarray(palette, dtype=np.uint32).reshape(-1, 3)
    return np.asarray(
        (0xFF << 24) | (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2], dtype=np.uint32
    )


__all__ = ["MAX_BAND_ROWS", "argb", "fill", "fill_bands"]
