"""Turn decoded trace columns into the Timeline tables (slices, lanes, instants, flows, …).

Everything is vectorised: B/E and async pairing, overlap rows, nesting and flow binding use
`core.intervals` and `core.nesting`; per-item Python runs only over lanes, metadata and
counter events.
Times are int64 ns relative to the earliest timed event (metadata events do not count: many
producers give them ts 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core import intervals, nesting, schema
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.lanes import LaneInfo, build_lanes, categorical, joint_codes, kinds_for
from perfview.loaders.trace.tables import (
    SortedSlices,
    counters_table,
    flows_table,
    memory_table,
)

I64 = np.int64
SUPPORTED = frozenset("XBEiICMstfbenSTFpR")
ASYNC_TID = -(2**40)  # async track k of a process gets tid ASYNC_TID - k


@dataclass
class Built:
    """The tables plus what the loader reports."""

    events: pd.DataFrame
    lanes: pd.DataFrame
    instants: pd.DataFrame
    counters: pd.DataFrame
    flows: pd.DataFrame
    memory: pd.DataFrame
    arg_index: np.ndarray  # per events row: its row among the events whose args were kept
    t0_ns: int  # the earliest timestamp as read (before adding baseTimeNanoseconds)
    duration_ns: int
    counts: dict[str, int]
    warnings: list[str]


def key_ids(values: list[object]) -> tuple[np.ndarray, dict[int, str]]:
    """int ids for pid/tid values: ints stay, numeric strings become ints, other strings get
    stable negative ids (by sorted text). Returns ids per interner code and id -> text."""
    ids = np.zeros(len(values), dtype=I64)
    texts: dict[int, str] = {}
    strings = sorted({"" if v is None else str(v) for v in values if not _as_int(v)[1]})
    neg = {s: -1 - i for i, s in enumerate(strings)}
    for code, v in enumerate(values):
        num, ok = _as_int(v)
        text = "" if v is None else str(v)
        ids[code] = num if ok else neg[text]
        texts.setdefault(int(ids[code]), text)
    return ids, texts


def _as_int(v: object) -> tuple[int, bool]:
    if isinstance(v, bool) or v is None:
        return 0, False
    if isinstance(v, int):
        return (v, True) if 0 <= v < 2**62 else (0, False)
    if isinstance(v, str):
        t = v.strip()
        if t.isdigit() and len(t) < 18:
            return int(t), True
    return 0, False


class Phases:
    """Masks of events by phase letter."""

    def __init__(self, cols: Columns) -> None:
        self.code = cols.cat_all("ph")  # int32 codes: half the bytes to gather
        self.values = cols.phs.values
        self._masks: dict[str, np.ndarray] = {}

    def __call__(self, chars: str) -> np.ndarray:
        """Read-only mask of the events whose phase is in `chars` (memoised: build asks for
        the same few sets many times, and each is a pass over every event)."""
        mask = self._masks.get(chars)
        if mask is None:
            hits = [k for k, p in enumerate(self.values) if isinstance(p, str) and p and p in chars]
            if len(hits) <= 3:  # a few compares beat a gather (which first widens the codes)
                mask = np.zeros(len(self.code), dtype=bool)
                for k in hits:
                    mask |= self.code == k
            else:
                lut = np.zeros(len(self.values), dtype=bool)
                lut[hits] = True
                mask = lut[self.code]
            mask.flags.writeable = False
            self._masks[chars] = mask
        return mask

    def unsupported(self) -> dict[str, int]:
        counts = np.bincount(self.code, minlength=len(self.values)).tolist()
        return {
            str(v): int(c)
            for v, c in zip(self.values, counts, strict=False)
            if c and not (isinstance(v, str) and len(v) == 1 and v in SUPPORTED)
        }


def _pairs(
    keys: list[np.ndarray], ts: np.ndarray, idx: np.ndarray, is_begin: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pair begins/ends among events `idx` grouped by `keys`, in time then file order.

    Returns event indices: (begins, their ends, begins left open, stray ends).
    """
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


@dataclass
class _Slices:
    src: np.ndarray  # event index that gives name, cat and args
    pid: np.ndarray
    tid: np.ndarray
    start: np.ndarray
    end: np.ndarray
    is_async: np.ndarray


def _slices(
    ph: Phases, cols: Columns, ts: np.ndarray, dur: np.ndarray, ok: np.ndarray, trace_end: int,
    pid: np.ndarray, tid: np.ndarray, warnings: list[str], counts: dict[str, int],
) -> tuple[_Slices, dict[int, object]]:  # fmt: skip
    """X slices, B/E pairs per thread and async pairs per (pid, cat, id, name)."""
    name = cols.cat_all("name").astype(I64, copy=False)
    cat = cols.cat_all("cat").astype(I64, copy=False)
    fid = cols.cat_all("fid").astype(I64, copy=False)
    x = np.flatnonzero(ph("X") & ok)
    b, e, open_b, stray = _pairs([pid, tid], ts, np.flatnonzero(ph("BE") & ok), ph("B"))
    if len(open_b):
        warnings.append(f"closed {len(open_b):,} slices left open at the end of the trace")
    if len(stray):
        warnings.append(f"dropped {len(stray):,} end events (E) that match no begin (B)")
    akeys = [pid, cat, fid, name]
    ab, ae, ao, astray = _pairs(akeys, ts, np.flatnonzero(ph("be") & ok), ph("b"))
    lb, le, lo, lstray = _pairs(akeys, ts, np.flatnonzero(ph("SF") & ok), ph("S"))
    a_b, a_e, a_open = np.concatenate([ab, lb]), np.concatenate([ae, le]), np.concatenate([ao, lo])
    if len(a_open):
        warnings.append(f"closed {len(a_open):,} async slices left open at the end of the trace")
    if len(astray) + len(lstray):
        warnings.append(
            f"dropped {len(astray) + len(lstray):,} async end events that match no begin"
        )
    a_src = np.concatenate([a_b, a_open])
    track = np.asarray(pd.factorize(name[a_src])[0], dtype=I64)  # one track per (pid, name)
    sync = np.concatenate([x, b, open_b])
    src = np.concatenate([sync, a_src])
    end = np.concatenate(
        [ts[x] + dur[x], ts[e], np.maximum(ts[open_b], trace_end), ts[a_e],
         np.maximum(ts[a_open], trace_end)]
    )  # fmt: skip
    counts.update(slices=len(sync), closed_at_end=len(open_b), **{"async": len(a_src)})
    tracks = {
        int(ASYNC_TID - k): cols.names.values[int(name[s])]
        for k, s in zip(track.tolist(), a_src.tolist(), strict=True)
    }
    sl = _Slices(
        src=src,
        pid=pid[src],
        tid=np.concatenate([tid[sync], ASYNC_TID - track]),
        start=ts[src],
        end=end,
        is_async=np.arange(len(src)) >= len(sync),
    )
    return sl, tracks


def _rank_among(kept: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """np.searchsorted(kept, rows) for sorted, distinct `kept` rows of 0..n-1: how many kept
    rows come before each row, by one running count (a binary search per row cost 4x more)."""
    mask = np.zeros(n, dtype=I64)
    mask[kept] = 1
    before = np.cumsum(mask) - mask
    out: np.ndarray = before[rows]
    return out


def build(
    cols: Columns, *, compiled: bool = False, release: Callable[[], None] | None = None
) -> Built:
    """Build every table of the Timeline from decoded columns.

    `compiled`: the scanner path, which has numba loaded: nesting is always compiled (else
    `core.nesting` picks by size). `release` is called once the overlap rows are known,
    before the lanes, the order, the nesting and the output tables (the peak of the load), so
    the caller can free what it no longer needs by then (the scanner path shrinks the text to
    its args).
    """
    ph = Phases(cols)
    warnings: list[str] = []
    counts: dict[str, int] = {"events": cols.n}
    ts_raw = cols.cat_all("ts").astype(I64, copy=False)
    ok = cols.cat_all("ts_ok").astype(bool, copy=False)
    dur = np.where(
        cols.cat_all("dur_ok").astype(bool, copy=False),
        cols.cat_all("dur").astype(I64, copy=False),
        0,
    )
    is_meta = ph("M")
    timed = ok & ~is_meta
    big = np.iinfo(I64).max
    # reductions with where=: no filtered copy of a 2.5M-row column for one number
    t0 = int(np.min(ts_raw, where=timed, initial=big)) if timed.any() else 0
    ts = ts_raw - t0
    is_x = ph("X") & ok
    negative = int(np.count_nonzero((dur < 0) & is_x))
    if negative:
        warnings.append(f"{negative:,} slices have a negative duration; shown with zero length")
    np.maximum(dur, 0, out=dur)
    ends = np.max(ts, where=timed, initial=0)
    if is_x.any():  # X slices are timed (ok, not metadata)
        ends = max(ends, np.max(ts + dur, where=is_x, initial=0))
    trace_end = max(int(ends), 0)
    key_id, key_text = key_ids(cols.keys.values)
    pid = key_id[cols.cat_all("pid").astype(I64, copy=False)]
    tid = key_id[cols.cat_all("tid").astype(I64, copy=False)]
    name = cols.cat_all("name").astype(I64, copy=False)
    cat = cols.cat_all("cat").astype(I64, copy=False)

    sl, tracks = _slices(ph, cols, ts, dur, ok, trace_end, pid, tid, warnings, counts)
    mem_rows = np.zeros(cols.n, dtype=bool)
    mem_rows[cols.mem("row").astype(I64)] = True
    inst = np.flatnonzero(ph("iInR") & ok & ~mem_rows)
    scope = cols.cat_all("scope").astype(np.uint8, copy=False)[inst]
    scope = np.where(np.isin(scope, [ord("p"), ord("g")]), scope, ord("t")).astype(np.uint8)
    thread_inst = inst[scope == ord("t")]
    # overlap rows per (pid, tid), then one lane per (pid, tid, sub); threads with only
    # instants get a lane too, so their (pid, tid) are coded along with the slices'
    n_sl = len(sl.src)
    lane_pid = np.concatenate([sl.pid, pid[thread_inst]])
    lane_tid = np.concatenate([sl.tid, tid[thread_inst]])
    pair_all = joint_codes(lane_pid, lane_tid)
    pair = pair_all[:n_sl]
    o1 = intervals.slice_order(pair, sl.start, sl.end)
    sub = np.zeros(len(pair_all), dtype=np.int16)  # instants: row 0
    use = True if compiled else None  # the scanner path has numba loaded: always compiled
    sub[o1] = nesting.assign_rows(pair[o1], sl.start[o1], sl.end[o1], compiled=use)
    n_overlap = int((sub > 0).sum())
    if n_overlap:
        warnings.append(
            f"{n_overlap:,} slices overlap others on their thread or stream without nesting; "
            "they are shown on extra rows"
        )
    if release is not None:  # the peak of the load is ahead: lanes, order, nesting, tables
        release()
    info = LaneInfo.from_metadata(cols, key_id, key_text, tracks)
    lanes, lane_all = build_lanes(
        info, pair_all, lane_pid, lane_tid, sub, cat[sl.src], cols.cats.values
    )
    lane_of = lane_all[:n_sl]
    sub = sub[:n_sl]

    # a lane is one (pid, tid, sub): within it o1 already has the (start, -duration, file)
    # order, so a stable sort by lane gives slice_order(lane_of, ...) without a 3-key sort
    order = o1[np.argsort(lane_of[o1], kind="stable")]
    s = SortedSlices(lane_of[order], sl.start[order], sl.end[order], np.zeros(0, dtype=I64))
    depth, s.parent = nesting.nest(s.lane, s.start, s.end, compiled=use)
    src = sl.src[order]
    _lane_stats(lanes, s.lane, depth)
    kind = kinds_for(cat[src], cols.cats.values, name[src], cols.names.values)
    kind[sl.is_async[order]] = schema.KINDS.index("async")
    is_slice = (ph("X") | ph("B"))[src]
    events = pd.DataFrame(
        {
            "ts": s.start,
            "dur": s.end - s.start,
            "name": categorical(name[src], cols.names.values),
            "cat": categorical(cat[src], cols.cats.values),
            "kind": pd.Categorical.from_codes(kind, categories=pd.Index(list(schema.KINDS))),
            "pid": sl.pid[order],
            "tid": sl.tid[order],
            "lane": s.lane.astype(np.int32),
            "depth": depth,
            "parent": s.parent,
            "corr": np.where(is_slice, cols.cat_all("corr").astype(I64, copy=False)[src], -1),
            "ext_id": np.where(is_slice, cols.cat_all("ext").astype(I64, copy=False)[src], -1),
            "shape": categorical(
                cols.cat_all("shape").astype(I64, copy=False)[src], cols.shapes.values
            ),
        },
        copy=False,
    )
    instants = pd.DataFrame(
        {
            "ts": ts[inst],
            "name": categorical(name[inst], cols.names.values),
            "cat": categorical(cat[inst], cols.cats.values),
            "pid": pid[inst],
            "tid": tid[inst],
            "scope": pd.Categorical(
                [chr(c) for c in scope.tolist()] if len(scope) < 1000 else _chars(scope),
                categories=["t", "p", "g"],
            ),
        }
    )
    counters = counters_table(cols, ts, ok, pid)
    memory = memory_table(cols, ts, ok, pid, tid)
    flows, fwarn, fcounts = flows_table(ph, cols, ts, ok, pid, tid, name, cat, lanes, s)
    warnings.extend(fwarn)
    unsupported = ph.unsupported()
    if unsupported:
        parts = ", ".join(f"{k}: {v:,}" for k, v in sorted(unsupported.items(), key=_by_count))
        warnings.append(
            f"ignored {sum(unsupported.values()):,} events of unsupported phases ({parts})"
        )
    untimed = int((~ok & ~is_meta).sum())
    if untimed:
        warnings.append(f"skipped {untimed:,} events without a valid timestamp")
    if n_overlap:
        counts["overlapping_slices"] = n_overlap
    counts.update(
        instants=len(instants),
        counters=int(ph("C").sum()),
        counter_samples=len(counters),
        lanes=len(lanes),
        memory_events=len(memory),
        metadata=int(is_meta.sum()),
        **fcounts,
    )
    arg_rows = cols.cat_all("arg_rows").astype(I64, copy=False)
    return Built(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.coerce(instants, schema.INSTANTS),
        counters=counters,
        flows=flows,
        memory=memory,
        arg_index=_rank_among(arg_rows, src, cols.n),
        t0_ns=t0,
        duration_ns=_duration(trace_end, sl.end, instants, counters, memory),
        counts=counts,
        warnings=warnings,
    )


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _chars(codes: np.ndarray) -> np.ndarray:
    return codes.view("S1").astype(str)


def _lane_stats(lanes: pd.DataFrame, lane_sorted: np.ndarray, depth: np.ndarray) -> None:
    """Fill max_depth and n_events of each lane (slices are sorted by lane)."""
    n = len(lanes)
    lanes["n_events"] = np.bincount(lane_sorted, minlength=n).astype(I64)
    max_depth = np.zeros(n, dtype=np.int16)
    if len(lane_sorted):
        first = np.concatenate([[0], np.flatnonzero(lane_sorted[1:] != lane_sorted[:-1]) + 1])
        max_depth[lane_sorted[first]] = np.maximum.reduceat(depth, first)
    lanes["max_depth"] = max_depth


def _duration(trace_end: int, ends: np.ndarray, *tables: pd.DataFrame) -> int:
    """Latest time anything happens (slices closed at the end included)."""
    out = max(trace_end, int(ends.max()) if len(ends) else 0)
    for table in tables:
        if len(table):
            out = max(out, int(table["ts"].max()))
    return out


__all__ = ["Built", "Phases", "build", "key_ids"]
