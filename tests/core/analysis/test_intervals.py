"""Unit tests of the interval algorithms (`core.intervals`, `core.nesting`) against small
per-event reference loops."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.analysis import intervals, nesting

# ---------------------------------------------------------------- reference implementations


def violations(start: np.ndarray, end: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Mask of slices that end after their parent (a partial overlap: not a valid tree)."""
    has = parent >= 0
    out = np.zeros(len(start), dtype=bool)
    out[has] = np.asarray(end)[has] > np.asarray(end)[parent[has]]
    return out


def ref_nest(lane: list[int], start: list[int], end: list[int]) -> tuple[list[int], list[int]]:
    """Stack walk over sorted slices: open while start <= t < end (HTA rule)."""
    depth, parent = [], []
    stack: list[int] = []
    for i in range(len(start)):
        if i and lane[i] != lane[i - 1]:
            stack = []
        while stack and end[stack[-1]] <= start[i]:
            stack.pop()
        depth.append(len(stack))
        parent.append(stack[-1] if stack else -1)
        if end[i] > start[i]:
            stack.append(i)
    return depth, parent


def ref_pairs(group: list[int], is_begin: list[bool]) -> tuple[set[tuple[int, int]], set, set]:
    pairs, stray = set(), set()
    stacks: dict[int, list[int]] = {}
    for i, (g, b) in enumerate(zip(group, is_begin, strict=True)):
        st = stacks.setdefault(g, [])
        if b:
            st.append(i)
        elif st:
            pairs.add((st.pop(), i))
        else:
            stray.add(i)
    open_ = {i for st in stacks.values() for i in st}
    return pairs, open_, stray


def random_nested(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Properly nested intervals (with ties and zero durations) built recursively."""
    starts, ends = [], []

    def fill(lo: int, hi: int, budget: int) -> None:
        t = lo
        while budget > 0 and t < hi:
            a = int(rng.integers(t, hi + 1))
            b = int(rng.integers(a, hi + 1))
            starts.append(a)
            ends.append(b)
            budget -= 1
            take = int(rng.integers(0, budget + 1))
            fill(a, b, take)
            budget -= take
            t = b

    fill(0, 1000, n)
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def sort_all(lane: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, ...]:
    order = intervals.slice_order(lane, start, end)
    return lane[order], start[order], end[order]


# ---------------------------------------------------------------- nest


def test_nest_simple_tree() -> None:
    lane = np.zeros(5, dtype=np.int64)
    start = np.array([0, 1, 2, 5, 20])
    end = np.array([10, 4, 3, 9, 30])
    depth, parent = nesting.nest(lane, start, end)
    assert depth.tolist() == [0, 1, 2, 1, 0]
    assert parent.tolist() == [-1, 0, 1, 0, -1]
    assert depth.dtype == np.int16
    assert parent.dtype == np.int64


def test_touching_slices_are_siblings_and_zero_duration_rules() -> None:
    # A=[0,10); B starts where A ends -> sibling; Z0 zero-dur at A's start -> child of A;
    # Z1 zero-dur at A's end -> not a child; C identical to A -> child of A (first is parent).
    lane, start, end = sort_all(
        np.zeros(5, dtype=np.int64), np.array([0, 10, 0, 10, 0]), np.array([10, 20, 0, 10, 10])
    )
    depth, parent = nesting.nest(lane, start, end)
    rd, rp = ref_nest(lane.tolist(), start.tolist(), end.tolist())
    assert depth.tolist() == rd
    assert parent.tolist() == rp
    pairs = list(zip(start.tolist(), end.tolist(), depth.tolist(), strict=True))
    assert pairs == [(0, 10, 0), (0, 10, 1), (0, 0, 2), (10, 20, 0), (10, 10, 1)]


@pytest.mark.parametrize("seed", range(8))
def test_nest_matches_stack_walk_on_random_nested_lanes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lanes, starts, ends = [], [], []
    for lane in range(3):
        s, e = random_nested(rng, 60)
        lanes.append(np.full(len(s), lane))
        starts.append(s)
        ends.append(e)
    lane, start, end = sort_all(np.concatenate(lanes), np.concatenate(starts), np.concatenate(ends))
    depth, parent = nesting.nest(lane, start, end)
    rd, rp = ref_nest(lane.tolist(), start.tolist(), end.tolist())
    assert depth.tolist() == rd
    assert parent.tolist() == rp
    assert not violations(start, end, parent).any()


def test_nest_handles_huge_times() -> None:
    big = 2**61
    lane = np.array([0, 0, 5, 5], dtype=np.int64)
    start = np.array([0, 1, big, big + 1], dtype=np.int64)
    end = np.array([10, 2, big + 10, big + 2], dtype=np.int64)
    depth, parent = nesting.nest(lane, start, end)
    assert depth.tolist() == [0, 1, 0, 1]
    assert parent.tolist() == [-1, 0, -1, 2]


# ---------------------------------------------------------------- overlap rows


def test_partial_overlap_goes_to_an_extra_row() -> None:
    lane, start, end = sort_all(
        np.zeros(3, dtype=np.int64), np.array([0, 5, 6]), np.array([10, 15, 8])
    )
    sub = nesting.assign_rows(lane, start, end)
    # [0,10) row 0, [5,15) overlaps it partially -> row 1, [6,8) nests in [0,10) -> row 0
    assert dict(zip(start.tolist(), sub.tolist(), strict=True)) == {0: 0, 5: 1, 6: 0}


def test_staircase_needs_only_two_rows() -> None:
    start = np.arange(0, 50, 5, dtype=np.int64)
    end = start + 8
    sub = nesting.assign_rows(np.zeros(len(start), dtype=np.int64), start, end)
    assert sub.tolist() == [0, 1] * 5


@pytest.mark.parametrize("seed", range(6))
def test_rows_are_properly_nested_for_random_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    lane = rng.integers(0, 3, n)
    start = rng.integers(0, 500, n)
    end = start + rng.integers(0, 60, n)
    lane, start, end = sort_all(lane, start, end)
    sub = nesting.assign_rows(lane, start, end)
    key = lane * 100 + sub
    lane2, start2, end2 = sort_all(key, start, end)
    depth, parent = nesting.nest(lane2, start2, end2)
    assert not violations(start2, end2, parent).any()
    rd, rp = ref_nest(lane2.tolist(), start2.tolist(), end2.tolist())
    assert depth.tolist() == rd
    assert parent.tolist() == rp


# ---------------------------------------------------------------- begin/end pairing


@pytest.mark.parametrize("seed", range(10))
def test_pair_begin_end_matches_a_stack(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    group = np.sort(rng.integers(0, 4, n))
    is_begin = rng.random(n) < 0.55
    b, e, o, s = intervals.pair_begin_end(group, is_begin)
    pairs, open_, stray = ref_pairs(group.tolist(), is_begin.tolist())
    assert set(zip(b.tolist(), e.tolist(), strict=True)) == pairs
    assert set(o.tolist()) == open_
    assert set(s.tolist()) == stray


def test_pair_begin_end_stray_end_then_pair() -> None:
    group = np.zeros(4, dtype=np.int64)
    is_begin = np.array([False, True, True, False])
    b, e, o, s = intervals.pair_begin_end(group, is_begin)
    assert (b.tolist(), e.tolist(), o.tolist(), s.tolist()) == ([2], [3], [1], [0])


# ---------------------------------------------------------------- range queries


def test_enclosing_and_next_starting() -> None:
    lane, start, end = sort_all(
        np.array([0, 0, 0, 1]), np.array([0, 2, 6, 0]), np.array([10, 4, 8, 5])
    )
    _, parent = nesting.nest(lane, start, end)
    q_lane = np.array([0, 0, 0, 0, 1, 2])
    q_ts = np.array([3, 5, 10, 11, 5, 0])
    got = intervals.enclosing(lane, start, end, parent, q_lane, q_ts)
    # 3 -> [2,4) (deepest), 5 -> [0,10), 10 -> [0,10) (end inclusive), 11 -> none,
    # lane 1 at 5 -> [0,5], lane 2 has no slices
    assert got.tolist() == [1, 0, 0, -1, 3, -1]
    nxt = intervals.next_starting(lane, start, np.array([0, 0, 0, 1]), np.array([1, 6, 9, 0]))
    assert nxt.tolist() == [1, 2, -1, 3]


@pytest.mark.parametrize("seed", range(5))
def test_slice_order_equals_a_three_key_sort(seed: int) -> None:
    """The folded-key sort gives exactly lexsort((-dur, start, lane)), ties included."""
    rng = np.random.default_rng(seed)
    n = 5000
    lane = rng.integers(-3, 4, n)
    start = rng.integers(-50, 50, n) * 10
    end = start + rng.choice([0, 0, 5, 10, 10, 30], n)
    want = np.lexsort((start - end, start, lane))
    assert np.array_equal(intervals.slice_order(lane, start, end), want)
    wide = np.array([0, 2**40, 2**40, 0]), np.array([0, 2**61, 5, 5]), np.array([1, 2**61, 9, 6])
    assert np.array_equal(
        intervals.slice_order(*wide), np.lexsort((wide[1] - wide[2], wide[1], wide[0]))
    )


@pytest.mark.parametrize("compiled", [True, False])
def test_rows_through_an_order_match_rows_of_the_sorted_copies(compiled: bool) -> None:
    """`assign_rows(..., order=o)` (the trace build's: no sorted copies) gives what the
    sorted copies give, also where a lane needs more rows than the kernel's first stack
    (16: it grows)."""
    rng = np.random.default_rng(7)
    n = 4000
    lane = rng.integers(0, 3, n)
    start = rng.integers(0, 20_000, n)
    end = start + rng.integers(0, 3_000, n)
    order = intervals.slice_order(lane, start, end)
    expected = nesting.assign_rows(lane[order], start[order], end[order], compiled=compiled)
    got = nesting.assign_rows(lane, start, end, compiled=compiled, order=order)
    assert got.tolist() == expected.tolist()
    assert int(got.max()) >= 16
