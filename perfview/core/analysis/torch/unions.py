"""Unions of time intervals, and the split of windows among prioritised categories.

Plain arrays of int64 ns (no Timeline): the Overview's step breakdown and utilisation, the
CPU-gap finding, the streams' and jobs' overlaps and the critical path's batch cuts all
measure time as unions of (start, end) intervals. Each category's union is sorted and
disjoint, so `partition` can split a trace's windows a time range at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

I64 = np.int64


def merge_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals as sorted, disjoint (start, end) arrays (touching ones are joined).
    A union already (`partition` merges its categories' unions) is given back as it is, and
    input sorted by start is not sorted again; otherwise one sorted copy of each column is
    made and reused in place."""
    start = np.asarray(start, dtype=I64)
    end = np.asarray(end, dtype=I64)
    if not len(start):
        return start[:0], end[:0]
    if bool((start[1:] >= start[:-1]).all()):
        if bool((start[1:] > end[:-1]).all()) and bool((end >= start).all()):
            return start, end  # a union already: as it is
        s, e = start, np.maximum(end, start)
    else:
        order = np.argsort(start, kind="stable")
        s, e = start[order], end[order]
        del order
        np.maximum(e, s, out=e)
    run = np.maximum.accumulate(e, out=e)  # e is a copy either way
    new = np.ones(len(s), dtype=bool)
    np.greater(s[1:], run[:-1], out=new[1:])
    first = np.flatnonzero(new)
    del new
    # A group's end is the running maximum at its last member: every earlier group ended
    # before this one's first start (<= its first end), so the running maximum there is the
    # group's own. (The per-group `np.maximum.at` it replaces was most of the Overview's
    # preparation on a 1 GB trace.)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(s) - 1
    return s[first], run[last]


def covered(starts: np.ndarray, ends: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For merged intervals: is each point inside [start, end)?"""
    if not len(starts):
        return np.zeros(len(points), dtype=bool)
    k = np.searchsorted(starts, points, side="right") - 1
    return (k >= 0) & (ends[np.clip(k, 0, None)] > points)


PARTITION_CHUNK = 1 << 21  # interval ends `partition` sorts at once (a time range's)
_SAMPLE = 64  # every this many intervals' start sampled to place the ranges


def partition(
    categories: Sequence[tuple[np.ndarray, np.ndarray]],
    win_start: np.ndarray,
    win_end: np.ndarray,
) -> np.ndarray:
    """Time of each window given to each category by priority: shape (windows, categories + 1).

    Every instant of a window goes to the first category (in the given order) that has an
    interval active at that instant; instants with none go to the extra last column. So the row
    sums equal the window lengths, and overlaps are never counted twice. Windows must be sorted
    and disjoint. Works on elementary segments between all interval ends (vectorised), a time
    range of about `PARTITION_CHUNK` intervals at a time: a window across ranges gets the sum
    of its parts, exactly (a range's edge only splits a segment, whose owner it keeps).
    """
    win_start = np.asarray(win_start, dtype=I64)
    win_end = np.asarray(win_end, dtype=I64)
    merged = [merge_intervals(s, e) for s, e in categories]
    out = np.zeros((len(win_start), len(categories) + 1), dtype=I64)
    if not len(win_start):
        return out
    lo, hi = int(win_start.min()), int(win_end.max())
    for a, z in itertools.pairwise(_ranges(merged, lo, hi)):
        w0 = int(np.searchsorted(win_end, a, side="right"))  # the windows overlapping [a, z)
        w1 = int(np.searchsorted(win_start, z, side="left"))
        if w1 <= w0:
            continue
        parts = []
        for m_s, m_e in merged:  # sorted and disjoint: their ends are sorted too
            i, j = np.searchsorted(m_e, a, side="right"), np.searchsorted(m_s, z, side="left")
            parts.append((np.clip(m_s[i:j], a, z), np.clip(m_e[i:j], a, z)))
        ws, we = np.clip(win_start[w0:w1], a, z), np.clip(win_end[w0:w1], a, z)
        out[w0:w1] += _partition_range(parts, ws, we)
    return out


def _ranges(merged: list[tuple[np.ndarray, np.ndarray]], lo: int, hi: int) -> list[int]:
    """Time cuts from lo to hi with about `PARTITION_CHUNK` intervals between two."""
    total = sum(len(m_s) for m_s, _e in merged)
    if total <= PARTITION_CHUNK:
        return [lo, hi]
    sample = np.sort(np.concatenate([m_s[::_SAMPLE] for m_s, _e in merged]))
    inner = sample[PARTITION_CHUNK // _SAMPLE :: PARTITION_CHUNK // _SAMPLE]
    return [lo, *np.unique(inner[(inner > lo) & (inner < hi)]).tolist(), hi]


def _partition_range(
    merged: list[tuple[np.ndarray, np.ndarray]], win_start: np.ndarray, win_end: np.ndarray
) -> np.ndarray:
    """`partition` of windows and merged intervals within one time range."""
    out = np.zeros((len(win_start), len(merged) + 1), dtype=I64)
    lo, hi = int(win_start.min()), int(win_end.max())
    cuts = [win_start, win_end] + [a for m in merged for a in m]
    bounds = np.sort(np.clip(np.concatenate(cuts), lo, hi))  # np.unique hashes: slower here
    bounds = bounds[np.concatenate([[True], bounds[1:] != bounds[:-1]])]
    seg_start, seg_len = bounds[:-1], np.diff(bounds)
    k = np.searchsorted(win_start, seg_start, side="right") - 1
    inside = (k >= 0) & (seg_start < win_end[np.clip(k, 0, None)])
    owner = np.full(len(seg_start), len(merged), dtype=I64)
    for c in range(len(merged) - 1, -1, -1):
        owner[covered(*merged[c], seg_start)] = c
    flat = k[inside] * (len(merged) + 1) + owner[inside]
    sums = np.bincount(flat, weights=seg_len[inside], minlength=out.size)
    return np.rint(sums).astype(I64).reshape(out.shape)


__all__ = ["covered", "merge_intervals", "partition"]
