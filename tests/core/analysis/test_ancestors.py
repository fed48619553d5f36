"""The one-pass ancestor queries equal the level-by-level numpy walk they replaced."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.analysis import ancestors
from perfview.loaders import load
from tests.conftest import sample
from tests.loaders.test_chrome_trace import TRACE_SAMPLES


def _random_forest(n: int, seed: int) -> np.ndarray:
    """A parent column listing parents first: deep chains, wide fans and roots mixed."""
    rng = np.random.default_rng(seed)
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(1, n):
        r = rng.random()
        if r < 0.1:
            continue  # a root
        parent[i] = i - 1 if r < 0.7 else rng.integers(0, i)
    return parent


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_pass_equals_the_walk_on_random_forests(seed: int) -> None:
    parent = _random_forest(3000, seed)
    rng = np.random.default_rng(seed + 10)
    member = rng.random(3000) < 0.4
    codes = rng.integers(0, 6, 3000)
    nearest, same, *_ = ancestors.kernels()
    assert np.array_equal(nearest(parent, member), ancestors._walk(parent, member, None))
    walked = ancestors._walk(parent, member, codes) >= 0
    assert np.array_equal(same(nearest(parent, member), codes, member), walked)


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_one_pass_equals_the_walk_on_samples(rel: str) -> None:
    events = load(sample(rel)).timeline.events  # type: ignore[union-attr]
    parent = events["parent"].to_numpy(dtype=np.int64)
    assert np.all(parent < np.arange(len(parent)))  # the events table lists parents first
    member = (events["kind"] == "cpu_op").to_numpy()
    codes = events["name"].cat.codes.to_numpy(dtype=np.int64)
    nearest, same, *_ = ancestors.kernels()
    assert np.array_equal(nearest(parent, member), ancestors._walk(parent, member, None))
    walked = ancestors._walk(parent, member, codes) >= 0
    assert np.array_equal(same(nearest(parent, member), codes, member), walked)


def _chains_forest(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A forest with only-child chains of one name (what the rounds fold), fans and roots."""
    rng = np.random.default_rng(seed)
    parent = _random_forest(n, seed)
    codes = rng.integers(0, 3, n)  # few names: many same-name parents
    member = rng.random(n) < 0.7
    return parent, codes, member


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_compiled_duplicate_drop_equals_the_numpy_rounds(seed: int) -> None:
    parent, codes, member = _chains_forest(4000, seed)
    for rounds in (1, 2, 50):
        expected = ancestors._drop_rounds(parent, codes, member, rounds)
        got = ancestors.drop_duplicate_chains(parent, codes, member, rounds)
        assert np.array_equal(got, expected)
    assert not np.array_equal(expected, member)  # the forests do have chains to fold


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_compiled_duplicate_drop_equals_the_numpy_rounds_on_samples(rel: str) -> None:
    events = load(sample(rel)).timeline.events  # type: ignore[union-attr]
    parent = events["parent"].to_numpy(dtype=np.int64)
    member = (events["kind"] == "cpu_op").to_numpy()
    codes = events["name"].cat.codes.to_numpy(dtype=np.int64)
    rounds = int(events["depth"].max()) + 1 if len(events) else 0
    expected = ancestors._drop_rounds(parent, codes, member, rounds)
    assert np.array_equal(ancestors.drop_duplicate_chains(parent, codes, member, rounds), expected)


def _child_sums_by_walk(parent: np.ndarray, member: np.ndarray, dur: np.ndarray) -> np.ndarray:
    anc = ancestors._walk(parent, member, None)
    counted = member & (anc >= 0)
    nested = np.zeros(len(parent), dtype=np.int64)
    np.add.at(nested, anc[counted], dur[counted])
    return nested


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_child_sums_equal_the_walk_on_random_forests(seed: int) -> None:
    parent = _random_forest(3000, seed)
    rng = np.random.default_rng(seed + 20)
    member = rng.random(3000) < 0.5
    dur = rng.integers(0, 1 << 40, 3000)
    got = ancestors.member_child_sums(parent, member, dur)
    assert np.array_equal(got, _child_sums_by_walk(parent, member, dur))
    assert got.any()


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_compiled_child_sums_equal_the_walk_on_samples(rel: str) -> None:
    events = load(sample(rel)).timeline.events  # type: ignore[union-attr]
    parent = events["parent"].to_numpy(dtype=np.int64)
    dur = events["dur"].to_numpy(dtype=np.int64)
    for member in ((events["kind"] == "cpu_op").to_numpy(), np.ones(len(parent), dtype=bool)):
        expected = _child_sums_by_walk(parent, member, dur)
        assert np.array_equal(ancestors.member_child_sums(parent, member, dur), expected)


def test_a_parent_after_its_child_takes_the_walk() -> None:
    """A table that does not list parents first (not what the loaders make) is still right."""
    parent = np.array([2, -1, 1, 2], dtype=np.int64)
    member = np.array([False, True, True, False])
    expected = ancestors._walk(parent, member, None)
    assert np.array_equal(ancestors.nearest_ancestor(parent, member), expected)
    assert expected.tolist() == [2, -1, 1, 2]
    dur = np.array([5, 100, 40, 7], dtype=np.int64)
    sums = ancestors.member_child_sums(parent, member, dur)  # the walk and a scatter-add
    assert np.array_equal(sums, _child_sums_by_walk(parent, member, dur))


def _totals_by_walk(
    parent: np.ndarray, codes: np.ndarray, member: np.ndarray, dur: np.ndarray, n_codes: int
) -> list[np.ndarray]:
    """`member_totals` from the walk, the scatter-adds and numpy's grouping."""
    below = _child_sums_by_walk(parent, member, dur)
    nested = ancestors._walk(parent, member, codes) >= 0
    rows = member & (codes >= 0)
    g = codes[rows]
    calls = np.bincount(g, minlength=n_codes)
    sums = []
    for values in (dur - below, np.where(nested, 0, dur), dur):
        total = np.zeros(n_codes, dtype=np.int64)
        np.add.at(total, g, values[rows])
        sums.append(total)
    longest = np.full(n_codes, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(longest, g, dur[rows])
    return [calls, *sums, longest]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fused_member_totals_equal_the_separate_passes(seed: int) -> None:
    parent = _random_forest(3000, seed)
    rng = np.random.default_rng(seed + 30)
    member = rng.random(3000) < 0.5
    codes = rng.integers(-1, 5, 3000)  # -1: a row in no group (a missing name)
    dur = rng.integers(0, 1 << 40, 3000)
    got = ancestors.member_totals(parent, codes, member, dur, 5)
    assert got is not None
    for fused, expected in zip(got, _totals_by_walk(parent, codes, member, dur, 5), strict=True):
        assert np.array_equal(fused, expected)
    assert got[2].sum() < got[3].sum()  # some rows are nested in their own code


def test_fused_member_totals_refuse_a_parent_after_its_child() -> None:
    parent = np.array([2, -1, 1, 2], dtype=np.int64)
    ones = np.ones(4, dtype=np.int64)
    assert ancestors.member_totals(parent, ones, np.ones(4, dtype=bool), ones, 2) is None
