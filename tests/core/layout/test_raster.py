"""`core.layout.raster.fill`: rects of one pixel row or a few written into an image, later
over earlier; the numpy way and the compiled one (`layout_kernels._fill`, taken once numba
is loaded) give the same images."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.layout import layout_kernels
from perfview.core.layout.raster import argb, fill, fill_bands


@pytest.fixture(autouse=True, params=["numpy", "compiled"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test both ways: `ready` says which `fill` takes."""
    compiled = request.param == "compiled"
    if compiled:
        layout_kernels.warm()  # compiled once (cached on disk), as the compile-ahead child does
    monkeypatch.setattr(layout_kernels, "ready", lambda n: compiled)
    return str(request.param)


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


def test_read_only_and_strided_inputs_fill_the_same(way: str) -> None:
    """A frame hands `fill` columns of an (n, 4) int32 array and read-only colours: the
    same image as contiguous int64 columns (the compiled way copies them to its types
    rather than compiling again)."""
    rng = np.random.default_rng(3)
    corners = np.stack([rng.integers(0, 90, 500), rng.integers(0, 20, 500)], axis=1)
    arr = np.concatenate([corners, corners + rng.integers(0, 9, (500, 2))], axis=1)
    arr = arr.astype(np.int32)
    colour = rng.integers(1, 2**32 - 1, 500, dtype=np.uint64).astype(np.uint32)
    colour.flags.writeable = False
    image = fill(arr[:, 0], arr[:, 2], arr[:, 1], colour, 100, 30, y_last=arr[:, 3])
    plain = [np.ascontiguousarray(arr[:, k], dtype=np.int64) for k in range(4)]
    assert np.array_equal(
        image, fill(plain[0], plain[2], plain[1], colour.copy(), 100, 30, y_last=plain[3])
    )
    if way == "compiled":
        assert len(layout_kernels.fill_kernel().signatures) == 1  # one compile for all


@pytest.mark.parametrize("rows", [(0, 40), (-7, 33), (5, 20)])  # the image's rows, some cut
def test_bands_fill_as_fill_does(rows: tuple[int, int]) -> None:
    """Rows of rects 1-9 px tall, apart (a job's rows a pixel or taller), some overlapping
    within a row and some past the image's edges: the band-at-a-time image is `fill`'s."""
    rng = np.random.default_rng(5)
    tops = np.cumsum(rng.integers(2, 12, 8)) - 10
    gaps = np.diff(tops)
    bottoms = tops + np.append([rng.integers(0, gap) for gap in gaps.tolist()], 3)
    band = np.sort(rng.integers(0, len(tops), 2_000))
    x0 = rng.integers(-10, 300, 2_000)
    x1 = x0 + rng.integers(0, 40, 2_000)
    colour = rng.integers(1, 2**32 - 1, 2_000, dtype=np.uint64).astype(np.uint32)
    y0, y1 = tops[band] - rows[0], bottoms[band] - rows[0]
    height = rows[1] - rows[0]
    image = fill_bands(x0, x1, y0, y1, colour, 290, height)
    assert image is not None
    assert np.array_equal(image, fill(x0, x1, y0, colour, 290, height, y_last=y1))


def test_rects_not_in_bands_are_left_to_fill() -> None:
    x = np.array([0, 5])
    colour = np.array([1, 2], dtype=np.uint32)
    assert fill_bands(x, x + 2, np.array([0, 3]), np.array([5, 8]), colour, 20, 20) is None
    assert fill_bands(x, x + 2, np.array([0, 0]), np.array([5, 4]), colour, 20, 20) is None


def test_drawing_over_an_image() -> None:
    under = np.full((3, 4), 9, dtype=np.uint32)
    out = fill(np.array([1]), np.array([2]), np.array([1]), np.array([5], np.uint32), 4, 3,
               out=under)  # fmt: skip
    assert out is under
    assert under.tolist() == [[9, 9, 9, 9], [9, 5, 5, 9], [9, 9, 9, 9]]


def test_palette_words_are_opaque_argb() -> None:
    assert argb([(255, 0, 0), (1, 2, 3)]).tolist() == [0xFFFF0000, 0xFF010203]
