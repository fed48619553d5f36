"""The build's folded sort keys and one-pass kernels give what the multi-key sorts and numpy
steps they replaced gave: empty input, one group, ties in time, -1 ids, sparse and negative
ids, keys too wide to fold, codes out of range."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis import intervals
from perfview.core.model import schema
from perfview.loaders.trace import kernels, lanes, slices, tables
from perfview.loaders.trace.columns import Columns

I64 = np.int64


def _lexsort_pairs(
    keys: list[np.ndarray], ts: np.ndarray, idx: np.ndarray, is_begin: np.ndarray
) -> tuple[np.ndarray, ...]:
    """`slices._pairs` as it was: one stable sort per key."""
    order = np.lexsort((idx, ts[idx], *[k[idx] for k in reversed(keys)]))
    sidx = idx[order]
    change = np.zeros(len(sidx), dtype=bool)
    if len(sidx):
        change[0] = True
        for k in keys:
            kv = k[sidx]
            change[1:] |= kv[1:] != kv[:-1]
    b, e, o, s = intervals.pair_begin_end(np.cumsum(change), is_begin[sidx])
    return sidx[b], sidx[e], sidx[o], sidx[s]


def _key_columns(rng: np.random.Generator, n: int, kind: str) -> list[np.ndarray]:
    if kind == "thread":  # pid, tid ids: sparse, big and negative (string ids)
        pool = np.array([0, 7, -1, -3, 2**40, 123456789, 2**61], dtype=I64)
        return [pool[rng.integers(0, 3, n)], pool[rng.integers(0, len(pool), n)]]
    if kind == "one":
        return [np.full(n, 5, dtype=I64), np.full(n, -2, dtype=I64)]
    if kind == "wide":  # sparse ids ranked; 7 columns of 500 distinct: past 2**62, lexsort
        return [rng.integers(0, 2**40, n) for _ in range(7)]
    # async: pid, then cat, fid (-1: none) and name interner codes (int32)
    return [
        rng.integers(0, 3, n).astype(I64),
        rng.integers(0, 4, n).astype(np.int32),
        rng.integers(-1, 6, n).astype(np.int32),
        rng.integers(0, 3, n).astype(np.int32),
    ]


@pytest.mark.parametrize("kind", ["thread", "one", "wide", "async"])
@pytest.mark.parametrize("n", [0, 1, 2, 500])
def test_pairs_equal_the_lexsort_pairing(kind: str, n: int) -> None:
    rng = np.random.default_rng(n)
    total = n + 20
    keys = _key_columns(rng, total, kind)
    ts = rng.integers(0, 6, total)  # few distinct times: many ties, broken by file order
    idx = np.sort(rng.choice(total, n, replace=False)).astype(I64)
    is_begin = rng.random(total) < 0.5
    got = slices._pairs(keys, ts, idx, is_begin)
    want = _lexsort_pairs(keys, ts, idx, is_begin)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)


def test_group_key_orders_as_the_keys_do() -> None:
    rng = np.random.default_rng(3)
    keys = _key_columns(rng, 2000, "thread") + _key_columns(rng, 2000, "async")[1:]
    idx = np.arange(2000, dtype=I64)
    key = slices._group_key(keys, idx)
    assert key is not None
    want = np.lexsort(tuple(k for k in reversed(keys)))
    assert np.array_equal(np.argsort(key, kind="stable"), want)
    assert slices._group_key(_key_columns(rng, 50, "wide"), np.arange(50, dtype=I64)) is not None
    assert slices._group_key(_key_columns(rng, 500, "wide"), np.arange(500, dtype=I64)) is None


def _old_flow_pairs(
    is_s: np.ndarray, is_t: np.ndarray, is_f: np.ndarray, fid: np.ndarray, ts: np.ndarray,
    ok: np.ndarray, cat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:  # fmt: skip
    """`tables.flow_pairs` as it was (four-key lexsort)."""
    idx = np.flatnonzero((is_s | is_t | is_f) & ok & (fid >= 0))
    counts = {"flows": int(is_s[idx].sum()), "flow_ends": int(is_f[idx].sum())}
    e = idx[np.lexsort((idx, ts[idx], fid[idx], cat[idx]))]
    same = np.zeros(len(e), dtype=bool)
    if len(e) > 1:
        same[1:] = (cat[e][1:] == cat[e][:-1]) & (fid[e][1:] == fid[e][:-1])
    linked = np.zeros(len(e), dtype=bool)
    linked[:-1] = same[1:] & (is_s[e] | is_t[e])[:-1] & (is_t[e] | is_f[e])[1:]
    has_prev = np.zeros(len(e), dtype=bool)
    has_prev[1:] = linked[:-1]
    counts["orphan_flow_ends"] = int((is_f[e] & ~has_prev).sum())
    src_k = np.flatnonzero(linked | (is_s[e] & ~linked))
    dst_k = np.where(linked[src_k], src_k + 1, -1)
    src = e[src_k]
    dst = np.where(dst_k >= 0, e[np.maximum(dst_k, 0)], -1)
    counts["flows_without_end"] = int((is_s[src] & (dst < 0)).sum())
    return src, dst, counts


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("n", [0, 1, 3, 3000])
def test_flow_pairs_equal_the_lexsort_matching(
    n: int, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if compiled:
        kernels.warm()
        monkeypatch.setattr(lanes, "COMPILED_MIN", 0)
    rng = np.random.default_rng(n)
    phase = rng.integers(0, 4, n)  # s, t, f, other
    is_s, is_t, is_f = phase == 0, phase == 1, phase == 2
    for mask in (is_s, is_t, is_f):
        mask.flags.writeable = False  # as `Phases` hands them
    fid = rng.integers(-1, max(n // 3, 1), n).astype(np.int32)
    cat = rng.integers(0, 3, n).astype(np.int32)
    ts = rng.integers(0, 20, n)  # ties in time within a flow
    ok = rng.random(n) < 0.9
    cols = Columns()
    cols.fid.append(fid)
    masks = {"s": is_s, "t": is_t, "f": is_f}
    got = tables.flow_pairs(masks.__getitem__, cols, ts, ok, cat)
    src, dst, counts = _old_flow_pairs(is_s, is_t, is_f, fid, ts, ok, cat)
    assert np.array_equal(got.src, src)
    assert np.array_equal(got.dst, dst)
    assert got.counts == counts


@pytest.mark.parametrize("n", [0, 1, 2000])
def test_flow_points_equal_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    is_s, is_t, is_f = (rng.random(n) < 0.2 for _ in range(3))
    ok = rng.random(n) < 0.8
    fid = rng.integers(-1, 5, n).astype(np.int32)
    got = kernels.flow_points(is_s, is_t, is_f, ok, fid)
    assert got.dtype == I64
    assert np.array_equal(got, np.flatnonzero((is_s | is_t | is_f) & ok & (fid >= 0)))


def test_seen_codes_equal_bincount_and_count_codes_out_of_range() -> None:
    codes = np.array([3, 0, 3, 5], dtype=np.int32)
    seen, bad = kernels.seen_codes(codes, 7)
    assert bad == 0
    assert np.array_equal(seen, np.bincount(codes, minlength=7) > 0)
    assert kernels.seen_codes(np.zeros(0, dtype=np.int32), 2)[0].tolist() == [False, False]
    assert kernels.seen_codes(np.array([0, -1, 9], dtype=np.int32), 3)[1] == 2


def _same_categorical(a: Any, b: Any) -> None:
    assert a.codes.dtype == b.codes.dtype
    assert np.array_equal(a.codes, b.codes)
    assert list(a.categories) == list(b.categories)


@pytest.mark.parametrize("n", [0, 1, 5000])
def test_categorical_compiled_equals_numpy(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unused values dropped, None and '' one category, repeated texts merged, codes in the
    narrowest type; int32 and int64 codes."""
    kernels.warm()
    rng = np.random.default_rng(n)
    values: list[Any] = ["b", None, "a", "", "b", *[f"n{k}" for k in range(300)]]
    for dtype in (np.int32, np.int64):
        codes = rng.integers(0, len(values) if n > 1 else 1, n).astype(dtype)
        want = lanes.categorical(codes, values)
        monkeypatch.setattr(lanes, "COMPILED_MIN", 0)
        assert lanes.compiled_steps(n) is kernels
        _same_categorical(lanes.categorical(codes, values), want)
        monkeypatch.setattr(lanes, "COMPILED_MIN", 10**9)
    few = np.array([2, 0, 2], dtype=np.int32)
    monkeypatch.setattr(lanes, "COMPILED_MIN", 0)
    _same_categorical(lanes.categorical(few, ["x", None, "y"]), pd.Categorical(["y", "x", "y"]))


@pytest.mark.parametrize("n", [0, 1, 4000])
def test_kinds_compiled_equal_numpy(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    kernels.warm()
    rng = np.random.default_rng(n)
    cat_values: list[Any] = ["cpu_op", "Kernel", None, "gpu_memcpy", "weird"]
    name_values: list[Any] = ["ProfilerStep#1", "aten::mm", None, "ProfilerStep#2", 3]
    cat = rng.integers(0, len(cat_values), n).astype(np.int32)
    name = rng.integers(0, len(name_values), n).astype(np.int32)
    monkeypatch.setattr(lanes, "COMPILED_MIN", 10**9)
    want = lanes.kinds_for(cat, cat_values, name, name_values)
    monkeypatch.setattr(lanes, "COMPILED_MIN", 0)
    got = lanes.kinds_for(cat, cat_values, name, name_values)
    assert got.dtype == want.dtype == np.int8
    assert np.array_equal(got, want)
    if n > 100:
        assert schema.KINDS.index("annotation") in got.tolist()


def test_lane_search_with_folded_key_equals_lexsort_order() -> None:
    """Flow points bound by lane and time: queries of absent lanes (-1, past the last) and
    times outside every slice, the folded key and (times too wide) the lexsort fallback."""
    rng = np.random.default_rng(0)
    lane = np.repeat(np.arange(4, dtype=I64), 50)
    start = np.concatenate([np.sort(rng.integers(0, 1000, 50)) for _ in range(4)])
    end = start + rng.integers(0, 30, len(start))
    parent = np.full(len(start), -1, dtype=I64)
    for q_ts in (rng.integers(-50, 1100, 300), rng.integers(-(2**61), 2**61, 300)):
        q_lane = rng.integers(-1, 6, 300)
        pos = np.searchsorted(start[:0], q_ts[:0])  # shape only
        assert len(pos) == 0
        got_next = intervals.next_starting(lane, start, q_lane, q_ts)
        got_enc = intervals.enclosing(lane, start, end, parent, q_lane, q_ts)
        for i in range(300):  # by definition, query by query
            rows = np.flatnonzero(lane == q_lane[i])
            after = rows[start[rows] >= q_ts[i]]
            assert got_next[i] == (after[0] if len(after) else -1)
            before = rows[start[rows] <= q_ts[i]]
            last = before[-1] if len(before) else -1
            assert got_enc[i] == (last if last >= 0 and end[last] >= q_ts[i] else -1)
