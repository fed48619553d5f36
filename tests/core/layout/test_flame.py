"""flame.py and flame_cull.py maths against hand-computed rectangles, and colors.py stability."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.layout import colors, flame, flame_cull
from perfview.core.model import CallTree


def make_tree(parent: list[int], names: list[str], total: list[float]) -> CallTree:
    """A CallTree from parallel lists; node 0 is the root (name ignored)."""
    frames = pd.DataFrame({"name": names[1:], "file": "", "line": 0})
    frame = np.array([-1, *range(len(names) - 1)], dtype=np.int32)
    t = np.asarray(total, dtype=np.float64)
    return CallTree(
        parent=np.asarray(parent, dtype=np.int32),
        frame=frame,
        frames=frames,
        metrics={"total_ns": t, "self_ns": t.copy(), "calls": np.ones(len(t))},
    )


def by_node(rects: flame.Rects) -> dict[int, tuple[float, float, int]]:
    return {
        int(n): (float(a), float(b), int(r))
        for n, a, b, r in zip(rects.node, rects.x0, rects.x1, rects.row, strict=True)
    }


def test_layout_widths_equal_totals_heaviest_first() -> None:
    #          root(10)
    #        /        \
    #     b(3)        a(6)        <- a is heavier, so it goes left
    #               /     \
    #            d(1)     c(4)
    tree = make_tree([-1, 0, 0, 2, 2], ["", "b", "a", "d", "c"], [10, 3, 6, 1, 4])
    got = by_node(flame.layout(tree))
    assert got == {
        0: (0.0, 10.0, 0),
        2: (0.0, 6.0, 1),
        1: (6.0, 9.0, 1),
        4: (0.0, 4.0, 2),
        3: (4.0, 5.0, 2),
    }


def test_layout_scales_children_that_overflow_their_parent() -> None:
    # Estimated trees can give children more than the parent: they are squeezed to fit.
    tree = make_tree([-1, 0, 1, 1, 2], ["", "p", "x", "y", "z"], [8, 4, 6, 2, 6])
    got = by_node(flame.layout(tree))
    assert got[1] == (0.0, 4.0, 1)
    assert got[2] == pytest.approx((0.0, 3.0, 2))  # 6 * 4/8
    assert got[3] == pytest.approx((3.0, 4.0, 2))  # 2 * 4/8
    assert got[4] == pytest.approx((0.0, 3.0, 3))  # fills x, scaled with it


def test_layout_events_sorted_by_row_then_start() -> None:
    r = flame.layout_events(
        ts=np.array([50, 0, 10]), dur=np.array([5, 100, 5]), row=np.array([0, 0, 1])
    )
    assert r.node.tolist() == [1, 0, 2]
    assert r.x1.tolist() == [100.0, 55.0, 15.0]


def test_cull_keeps_long_slice_starting_before_window() -> None:
    # Row 0: a long slice [0, 1000] then many short ones after it; window [500, 510].
    ts = np.r_[0, np.arange(1000, 2000, 10)]
    dur = np.r_[1000, np.full(100, 5)]
    rects = flame.layout_events(ts, dur, np.zeros(len(ts), dtype=np.int32))
    got = flame_cull.visible(rects, 500, 510, px_per_unit=10.0)
    assert got.node.tolist() == [0]
    # A window among the short ones: [1003, 1022] overlaps [1000,1005],[1010,1015],[1020,1025].
    got = flame_cull.visible(rects, 1003, 1022, px_per_unit=10.0)
    assert got.node.tolist() == [1, 2, 3]


def test_cull_by_row_range() -> None:
    rects = flame.layout_events(np.zeros(4), np.full(4, 10), np.array([0, 1, 2, 3]))
    got = flame_cull.visible(rects, 0, 10, 1.0, rows=(1, 2))
    assert got.row.tolist() == [1, 2]


def test_merge_counts_slices_per_pixel_column_and_picks_dominant_colour() -> None:
    # 1 px = 10 units. Column 0 holds 3 tiny slices (buckets 1, 2, 2); column 1 holds 2
    # (bucket 5 wide, bucket 1 narrow). A wide slice [30, 80] passes through untouched.
    ts = np.array([0, 2, 4, 10, 15, 30])
    dur = np.array([1, 1, 1, 4, 1, 50])
    bucket = np.array([1, 2, 2, 5, 1, 3])
    rects = flame.layout_events(ts, dur, np.zeros(6, dtype=np.int32), bucket)
    got = flame_cull.visible(rects, 0, 100, px_per_unit=0.1)
    assert got.count.tolist() == [3, 2, 1]
    assert got.bucket.tolist() == [2, 5, 3]
    assert got.x0.tolist() == [0.0, 10.0, 30.0]
    assert got.x1.tolist() == [5.0, 16.0, 80.0]
    assert got.node.tolist()[1:] == [3, 5]  # widest member stands for the merged rect
    assert int(got.count.sum()) == len(ts)


def test_merge_never_mixes_rows() -> None:
    rects = flame.layout_events(np.array([0, 1]), np.array([1, 1]), np.array([0, 1]))
    got = flame_cull.visible(rects, 0, 10, px_per_unit=0.01)
    assert got.row.tolist() == [0, 1]
    assert got.count.tolist() == [1, 1]


def test_flame_index_levels_keep_counts_and_window() -> None:
    rng = np.random.default_rng(7)
    n = 120_000
    ts = np.sort(rng.integers(0, 10**9, n))
    dur = rng.integers(1, 2000, n)
    row = rng.integers(0, 4, n).astype(np.int32)
    bucket = rng.integers(0, 24, n)
    rects = flame.layout_events(ts, dur, row, bucket)
    index = flame_cull.FlameIndex(rects)
    ppu = 1000 / 1e9  # whole trace over 1000 px
    assert index.level_for(ppu) > 0
    zoomed_out = index.query(0, 1e9 + 2000, ppu)
    assert int(zoomed_out.count.sum()) == n
    # At most one rect per pixel column per row (+ rounding at level boundaries).
    assert len(zoomed_out) <= 4 * 1001 * 2
    # Deep zoom goes to the original rects and agrees with the plain function.
    lo, hi = 5e8, 5e8 + 20_000
    deep = index.query(lo, hi, 1000 / 20_000)
    plain = flame_cull.visible(rects, lo, hi, 1000 / 20_000)
    assert deep.node.tolist() == plain.node.tolist()


def test_levels_asked_for_by_two_threads_at_once_are_one_chain() -> None:
    """A job's tiles are drawn on a worker while the GUI thread may query the same index:
    the levels grow under a lock, so each is made once, each from the one before."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(11)
    n = 200_000
    ts = np.sort(rng.integers(0, 10**9, n))
    rects = flame.layout_events(
        ts, rng.integers(1, 2000, n), rng.integers(0, 8, n).astype(np.int32),
        rng.integers(0, 24, n),
    )  # fmt: skip
    shared, alone = flame_cull.FlameIndex(rects), flame_cull.FlameIndex(rects)
    top = shared.max_level
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _k: shared.build_levels(top), range(8)))
    assert alone.build_levels(top) == len(shared._levels) == top + 1
    for mine, theirs in zip(shared._levels, alone._levels, strict=True):
        assert np.array_equal(mine.rects.x0, theirs.rects.x0)
        assert np.array_equal(mine.rects.count, theirs.rects.count)


def test_hit_prefers_containing_rect() -> None:
    rects = flame.layout_events(np.array([0, 100]), np.array([50, 10]), np.array([0, 0]))
    index = flame_cull.FlameIndex(rects)
    assert rects.node[index.hit(20.0, 0)] == 0
    assert rects.node[index.hit(104.0, 0)] == 1
    assert index.hit(70.0, 0) == -1
    assert rects.node[index.hit(70.0, 0, tolerance=25)] == 0
    assert index.hit(5.0, 3) == -1


def test_colours_are_stable_and_vectorised() -> None:
    names = ["aten::mm", "aten::add", "aten::mm"]
    codes = colors.palette_indices(names)
    assert codes[0] == codes[2] == colors.palette_index("aten::mm")
    cat = pd.Categorical(["x", None, "y"])
    got = colors.bucket_codes(cat)
    assert got.tolist() == [colors.palette_index("x"), 0, colors.palette_index("y")]
    assert all(0 <= c < len(colors.PALETTE) for c in codes)


def test_diverging_buckets() -> None:
    pal = colors.diverging_palette(5)
    assert pal[2] == (225, 225, 225)
    got = colors.diverging_buckets([-10, -1, 0, 1, 10, float("nan")], limit=2, steps=5)
    assert got.tolist() == [0, 1, 2, 3, 4, 2]


def test_many_rows_are_culled_by_one_search_with_the_per_row_answer() -> None:
    """`_Level.cull` over many rows (float32 keys, one searchsorted) gives exactly the
    per-row searchsorted's rects, bounds falling on slice edges and far outside included."""
    rng = np.random.default_rng(1)
    for trial in range(300):
        n, rows = int(rng.integers(1, 3_000)), int(rng.integers(1, 60))
        row = np.sort(rng.integers(0, rows, n)).astype(np.int32)
        scale = 10.0 ** int(rng.integers(0, 12))
        x0 = np.round(rng.uniform(0, 1_000, n)) * scale + 1e9 * (trial % 3)
        x1 = x0 + np.round(rng.exponential(20, n)) * scale
        rects = flame.Rects(x0, x1, row, np.arange(n), np.zeros(n, np.int32), np.ones(n, np.int64))
        level = flame_cull._Level(rects.sorted())
        r = level.rects
        far = 10.0 ** int(rng.integers(-1, 4))
        lo = float(rng.choice(r.x1)) if trial % 2 else rng.uniform(-50, 1_000) * scale * far
        hi = float(rng.choice(r.x0)) if trial % 4 < 2 else lo + rng.exponential(200) * scale * far
        span = (int(rng.integers(-2, rows)), int(rng.integers(0, rows + 3)))
        expected = flame_cull._cull_index(r, level.bounds, level.end_max, lo, hi, span)
        assert np.array_equal(level.cull(lo, hi, span), expected), trial
