"""`core.layout.raster.fill`: rects of one pixel row or a few written into an image, later
over earlier."""

from __future__ import annotations

import numpy as np

from perfview.core.layout.raster import argb, fill


def test_each_rect_sets_its_pixels_and_a_later_one_wins() -> None:
    image = fill(
        np.array([0, 2, 1]), np.array([3, 2, 1]), np.array([0, 0, 1]),
        np.array([1, 2, 3], dtype=np.uint32), 5, 2,
    )  # fmt: skip
    assert image.tolist() == [[1, 1, 2, 1, 0], [0, 3, 0, 0, 0]]


def test_what_falls_outside_the_image_is_clipped() -> None:
    image = fill(
        np.array([-3, 3, 0, 0]), np.array([1, 9, 4, 4]), np.array([0, 0, -1, 2]),
        np.array([5, 6, 7, 8], dtype=np.uint32), 5, 2,
    )  # fmt: skip
    assert image.tolist() == [[5, 5, 0, 6, 6], [0, 0, 0, 0, 0]]


def test_the_work_is_the_pixels_covered_not_the_rects() -> None:
    """200,000 one-pixel rects over 100 rows of 1,000 pixels: every pixel of the image is
    written (each twice), and the image is all that is allocated."""
    rng = np.random.default_rng(7)
    n = 200_000
    x = rng.integers(0, 1_000, n)
    y = rng.integers(0, 100, n)
    colour = rng.integers(1, 2**32 - 1, n, dtype=np.uint64).astype(np.uint32)
    image = fill(x, x, y, colour, 1_000, 100)
    expected = np.zeros((100, 1_000), dtype=np.uint32)
    expected[y, x] = colour  # the same last-wins rule, one pixel each
    assert np.array_equal(image, expected)


def test_rects_of_several_pixel_rows_cover_them_all_and_a_later_one_still_wins() -> None:
    """Rects down to `y_last` fill every row they cover, in the rects' order, as drawRects
    fills QRects of inclusive corners: against numpy slicing, rect by rect."""
    rng = np.random.default_rng(11)
    n = 3_000
    x0 = rng.integers(-5, 60, n)
    x1 = x0 + rng.integers(0, 8, n)
    y0 = rng.integers(-3, 30, n)
    y1 = y0 + rng.integers(-1, 4, n)  # below y0: one row, as a rect is at least one tall
    colour = rng.integers(1, 2**32 - 1, n, dtype=np.uint64).astype(np.uint32)
    image = fill(x0, x1, y0, colour, 50, 25, y_last=y1)
    expected = np.zeros((25, 50), dtype=np.uint32)
    for a, b, top, bottom, c in zip(x0, x1, y0, np.maximum(y1, y0), colour, strict=True):
        expected[max(top, 0) : max(bottom + 1, 0), max(a, 0) : max(b + 1, 0)] = c
    assert np.array_equal(image, expected)
    one_row = fill(x0, x1, y0, colour, 50, 25)
    assert np.array_equal(one_row, fill(x0, x1, y0, colour, 50, 25, y_last=y0))


def test_palette_words_are_opaque_argb() -> None:
    assert argb([(255, 0, 0), (1, 2, 3)]).tolist() == [0xFFFF0000, 0xFF010203]
