"""The Timeline tables besides slices and lanes: counters, memory events, flows.

Kept apart from `build` so each module stays small; all functions are vectorised (flow
binding searches the sorted slices with `core.intervals`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis import intervals
from perfview.core.model import schema
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.lanes import categorical, compiled_steps, lookup

I64 = np.int64


def counters_table(
    cols: Columns, ts: np.ndarray, ts_ok: np.ndarray, pid: np.ndarray
) -> pd.DataFrame:
    """C events: one series per numeric arg key, named "name.key" (or "name" if it has one)."""
    if not cols.counters:
        return schema.empty(schema.COUNTERS)
    rows, series, values = zip(*cols.counters, strict=True)
    row = np.asarray(rows, dtype=I64)
    parts = pd.Series(series, dtype=object).str.split("\x00", n=1, expand=True)
    df = pd.DataFrame({"event": row, "base": parts[0], "key": parts[1], "value": values})
    df = df[ts_ok[row]]
    n_keys = df.groupby("base")["key"].transform("nunique")
    label = np.where(n_keys > 1, df["base"] + "." + df["key"], df["base"])
    out = pd.DataFrame(
        {
            "ts": ts[df["event"].to_numpy()],
            "pid": pid[df["event"].to_numpy()],
            "name": pd.Categorical(np.asarray(label, dtype=object)),
            "value": df["value"].to_numpy(dtype=np.float64),
        }
    )
    out = out.sort_values(["name", "ts"], kind="stable").reset_index(drop=True)
    return schema.coerce(out, schema.COUNTERS)


def memory_table(
    cols: Columns, ts: np.ndarray, ts_ok: np.ndarray, pid: np.ndarray, tid: np.ndarray
) -> pd.DataFrame:
    """torch [memory] / [OutOfMemory] instants with their allocator args."""
    row = cols.mem("row").astype(I64)
    if len(row) == 0:
        return schema.empty(schema.MEMORY_EVENTS)
    keep = ts_ok[row]
    out = pd.DataFrame(
        {
            "ts": ts[row],
            "pid": pid[row],
            "tid": tid[row],
            "device_type": cols.mem("device_type"),
            "device_id": cols.mem("device_id"),
            "addr": cols.mem("addr"),
            "bytes": cols.mem("bytes"),
            "total_allocated": cols.mem("total_allocated"),
            "total_reserved": cols.mem("total_reserved"),
            "oom": cols.mem("oom").astype(bool),
        }
    )[keep]
    out = out.sort_values("ts", kind="stable").reset_index(drop=True)
    return schema.coerce(out, schema.MEMORY_EVENTS)


@dataclass
class SortedSlices:
    """The events table's arrays that flow binding searches (depth: the events table's)."""

    lane: np.ndarray
    start: np.ndarray
    end: np.ndarray
    parent: np.ndarray
    depth: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))


def _lane_lookup(lanes: pd.DataFrame, pid: np.ndarray, tid: np.ndarray, sub: int) -> np.ndarray:
    """Lane of each (pid, tid) on overlap row `sub`, -1 when none.

    A trace has few processes and threads: index both, then read a small table (cheaper than
    coding every query row by `lookup`); a huge table falls back to `lookup`.
    """
    here = lanes["sub"].to_numpy() == sub
    lane_pid, lane_tid = lanes["pid"].to_numpy()[here], lanes["tid"].to_numpy()[here]
    pids, tids = pd.Index(np.unique(lane_pid)), pd.Index(np.unique(lane_tid))
    if len(pids) * len(tids) > 1 << 22:
        return lookup(
            [lanes["pid"].to_numpy(), lanes["tid"].to_numpy(), lanes["sub"].to_numpy()],
            [pid.astype(I64), tid.astype(I64), np.full(len(pid), sub, dtype=np.int16)],
        )
    table = np.full((len(pids) + 1, len(tids) + 1), -1, dtype=I64)  # last row/column: absent
    table[pids.get_indexer(lane_pid), tids.get_indexer(lane_tid)] = np.flatnonzero(here)
    out: np.ndarray = table[pids.get_indexer(pid), tids.get_indexer(tid)]
    return out


def bind(
    lanes: pd.DataFrame,
    sl: SortedSlices,
    pid: np.ndarray,
    tid: np.ndarray,
    ts: np.ndarray,
    enclosing: np.ndarray,
) -> np.ndarray:
    """Slice row each flow point binds to: the enclosing slice on its thread where `enclosing`,
    else the next slice starting at/after it; row 0 of overlap first, then extra rows."""
    out = np.full(len(ts), -1, dtype=I64)
    max_sub = int(lanes["sub"].max()) if len(lanes) else 0
    for sub in range(max_sub + 1):
        todo = np.flatnonzero(out < 0)
        if len(todo) == 0:
            break
        lane = _lane_lookup(lanes, pid[todo], tid[todo], sub)
        ok = lane >= 0
        todo, lane = todo[ok], lane[ok]
        enc = enclosing[todo]
        if enc.any():
            out[todo[enc]] = intervals.enclosing(
                sl.lane, sl.start, sl.end, sl.parent, lane[enc], ts[todo[enc]]
            )
        if (~enc).any():
            out[todo[~enc]] = intervals.next_starting(sl.lane, sl.start, lane[~enc], ts[todo[~enc]])
    return out


@dataclass
class FlowPairs:
    """Flow arrows matched by (cat, id) in time order, before they are bound to slices:
    matching needs only the times, so `build` runs it beside the slices and lanes."""

    src: np.ndarray  # event where each arrow starts
    dst: np.ndarray  # event where it ends, -1 when none
    counts: dict[str, int]
    warnings: list[str]


def flow_pairs(
    phase_mask: Any, cols: Columns, ts: np.ndarray, ts_ok: np.ndarray, cat: np.ndarray
) -> FlowPairs:
    """Flow arrows s -> (t ->)* f, matched by (cat, id) in time order.

    The points are sorted by one int64 key per (cat, id) (both small interner codes), then
    time, then file order: a 2-key sort, where sorting by cat, id, time and row was four
    sorts, and the key, gathered once in that order, tells where a (cat, id) changes (four
    int32 gathers before). Each point's phase is gathered once (a byte)."""
    fid = cols.cat_all("fid")  # int32 codes (-1: none); widened only where they are output
    is_s, is_t, is_f = phase_mask("s"), phase_mask("t"), phase_mask("f")
    fast = compiled_steps(len(fid))
    if fast is not None:  # one pass, where numpy makes four full-length masks
        idx = fast.flow_points(is_s, is_t, is_f, ts_ok, fid)
    else:
        idx = np.flatnonzero((is_s | is_t | is_f) & ts_ok & (fid >= 0))
    p_s, p_t, p_f = is_s[idx], is_t[idx], is_f[idx]
    counts = {"flows": int(np.count_nonzero(p_s)), "flow_ends": int(np.count_nonzero(p_f))}
    key = _flow_keys(cat, fid, idx)
    order = np.lexsort((ts[idx], key))  # stable: file order within a time
    key = key[order]
    e = idx[order]
    del idx
    p_s, p_t, p_f = p_s[order], p_t[order], p_f[order]
    del order
    n = len(e)
    linked = np.zeros(n, dtype=bool)  # e[k] -> e[k+1] is a segment
    if n > 1:
        np.equal(key[1:], key[:-1], out=linked[:-1])
        linked[:-1] &= (p_s[:-1] | p_t[:-1]) & (p_t[1:] | p_f[1:])
    del key
    has_prev = np.zeros(n, dtype=bool)
    has_prev[1:] = linked[:-1]
    orphan = int(np.count_nonzero(p_f & ~has_prev))
    counts["orphan_flow_ends"] = orphan
    src_k = np.flatnonzero(linked | p_s)
    src = e[src_k]
    dst = np.full(len(src_k), -1, dtype=e.dtype)
    to = linked[src_k]
    dst[to] = e[src_k[to] + 1]
    warnings = []
    if orphan:
        warnings.append(f"{orphan:,} flow ends have no start (orphan flow ends)")
    no_end = int(np.count_nonzero(p_s & ~linked))  # starts (all among src) with no dst
    counts["flows_without_end"] = no_end
    if no_end:
        warnings.append(f"{no_end:,} flow starts have no end (the other side was not recorded)")
    return FlowPairs(src, dst, counts, warnings)


def _flow_keys(cat: np.ndarray, fid: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """One int64 key per point `idx` that sorts as (cat, fid) does: cat * (max fid + 1) +
    fid (interner codes below 2**31: no overflow; fid >= 0 at these points)."""
    key: np.ndarray = cat[idx].astype(I64)
    if len(idx):
        key *= int(fid[idx].max()) + 1
        key += fid[idx]
    return key


@dataclass
class FlowEnds:
    """What the flows table reads of each arrow's two events, gathered once the arrows are
    matched (`flow_ends`): the per-event times, pids, tids, names and categories (32 bytes
    an event, 1.6 GB at 10 GB) then need not stay alive until the flows are bound, which
    `build` does beside the events' args index, its peak."""

    flow_id: np.ndarray  # the arrow's id (its start's), int64
    name: np.ndarray  # interner codes of its start's name and category
    cat: np.ndarray
    src_ts: np.ndarray
    src_pid: np.ndarray
    src_tid: np.ndarray
    has_dst: np.ndarray  # the arrow has an end
    dst_ts: np.ndarray  # where it has one (len: has_dst.sum())
    dst_pid: np.ndarray
    dst_tid: np.ndarray
    dst_enclosing: np.ndarray  # bound to the slice enclosing it, not the next one


def flow_ends(
    pairs: FlowPairs, phase_mask: Any, cols: Columns, ts: np.ndarray, pid: np.ndarray,
    tid: np.ndarray, name: np.ndarray, cat: np.ndarray,
) -> FlowEnds:  # fmt: skip
    """Each matched arrow's start and end, read from the per-event columns (`FlowEnds`)."""
    src, dst = pairs.src, pairs.dst
    has_dst = dst >= 0
    d = dst[has_dst]
    bp = cols.cat_all("bp_e").astype(bool, copy=False)
    return FlowEnds(
        flow_id=cols.cat_all("fid")[src].astype(I64, copy=False),
        name=name[src],
        cat=cat[src],
        src_ts=ts[src],
        src_pid=pid[src],
        src_tid=tid[src],
        has_dst=has_dst,
        dst_ts=ts[d],
        dst_pid=pid[d],
        dst_tid=tid[d],
        dst_enclosing=bp[d] | phase_mask("t")[d],
    )


def flows_table(
    ends: FlowEnds, cols: Columns, lanes: pd.DataFrame, sl: SortedSlices
) -> pd.DataFrame:
    """The flows table: the arrows `ends` with each end bound to the slice it starts or
    lands in."""
    has_dst = ends.has_dst
    everywhere = np.ones(len(has_dst), dtype=bool)
    src_event = bind(lanes, sl, ends.src_pid, ends.src_tid, ends.src_ts, everywhere)
    dst_event = np.full(len(has_dst), -1, dtype=I64)
    dst_event[has_dst] = bind(
        lanes, sl, ends.dst_pid, ends.dst_tid, ends.dst_ts, ends.dst_enclosing
    )
    dst_ts = np.full(len(has_dst), -1, dtype=I64)
    dst_ts[has_dst] = ends.dst_ts
    flows = pd.DataFrame(
        {
            "flow_id": ends.flow_id,
            "cat": categorical(ends.cat, cols.cats.values),
            "name": categorical(ends.name, cols.names.values),
            "src_ts": ends.src_ts,
            "dst_ts": dst_ts,
            "src_event": src_event,
            "dst_event": dst_event,
        }
    )
    return schema.coerce(flows, schema.FLOWS)
