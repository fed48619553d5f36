"""Turn decoded trace columns into the Timeline tables (slices, lanes, instants, flows, …).

Everything is vectorised: B/E and async pairing, overlap rows, nesting and flow binding use
`core.intervals` and `core.nesting`; per-item Python runs only over lanes, metadata and
counter events.
Times are int64 ns relative to the earliest timed event (metadata events do not count: many
producers give them ts 0).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pandas as pd

from perfview.core.analysis import intervals, nesting
from perfview.core.model import schema
from perfview.loaders.trace import heap
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.event_table import (
    Events,
    SliceParts,
    event_labels,
    events_table,
    instants_table,
)
from perfview.loaders.trace.lanes import (
    LaneInfo,
    build_lanes,
    compiled_steps,
    gpu_categories,
    joint_codes,
    key_ids,
)
from perfview.loaders.trace.slices import Phases, Slices, slices
from perfview.loaders.trace.tables import (
    FlowPairs,
    SortedSlices,
    counters_table,
    flow_ends,
    flow_pairs,
    flows_table,
    memory_table,
)

I64 = np.int64


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


def _rank_among(kept: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """np.searchsorted(kept, rows) for sorted, distinct `kept` rows of 0..n-1: how many kept
    rows come before each row, by one running count (a binary search per row cost 4x more)."""
    mask = np.zeros(n, dtype=I64)
    mask[kept] = 1
    before = np.cumsum(mask) - mask
    out: np.ndarray = before[rows]
    return out


def build(
    cols: Columns, *, compiled: bool = False, settle: Callable[[], object] | None = None,
    give_back: Callable[[], object] | None = None,
    let_go: Callable[[Sequence[str]], object] | None = None, consume: bool = False,
) -> Built:  # fmt: skip
    """Build every table of the Timeline from decoded columns.

    `compiled`: the scanner path, which has numba loaded: nesting is always compiled (else
    `core.nesting` picks by size). Each big temporary is dropped once used: with the file
    text already shrunk to its args, this is where a load peaks (1 GB NCCL trace: 5M events).
    `settle`: called once the times are read, before the bigger tables: the scanner path
    waits there for its args compaction (a thread), which so runs beside the first stage
    instead of before it, and gives the text's other pages back before the peak.
    The tables that need only the times (flow matching, counters, memory) are made on a
    second thread beside the slices and lanes, and the flows are bound to the sorted slices
    beside the args index: numpy and the compiled steps let go of the GIL, so a second core
    halves those stages' wall time, and the result is the same whichever thread ends first.
    `give_back`: where the columns lie in a file (the scanner's rows on disk), gives their
    pages back; called once the slices are found, before the events table (the load's
    peak) and at the end, so what a stage reads again is all that is resident of them.
    `consume` (the loader's, which builds once): each column of `cols` is let go once read
    for the last time (`_read`): its list is emptied, and `let_go` gives back the pages of
    those the scanner wrote (`Scanned`); else `cols` is left as it was.
    """
    read = functools.partial(_read, cols, let_go) if consume else _nothing_read
    spill = functools.partial(_spill, give_back or _nothing)
    ph = Phases(cols)
    if ph.copied:
        read("ph")  # the masks read the phases' copy of a byte an event
    warnings: list[str] = []
    counts: dict[str, int] = {"events": cols.n}
    ok = cols.cat_all("ts_ok").astype(bool, copy=False)
    fast = _kernels() if compiled else None
    key_id, key_text = key_ids(cols.keys.values)
    with ThreadPoolExecutor(2, thread_name_prefix="perfview-build") as beside:
        # the pid and tid lookups (compiled, no GIL) beside the times, into arrays made
        # here: made on the pool's threads, they came from malloc's other arenas, whose
        # freed memory the build's later steps cannot reuse (peak RSS +50 MB at 1 GB)
        pid = _lookup_beside(beside, key_id, cols.cat_all("pid"), fast)
        tid = _lookup_beside(beside, key_id, cols.cat_all("tid"), fast)
        ts, dur, t0, trace_end = _times(cols, ph, ok, warnings, fast)
        ev = Events(
            cols, ph, ts, ok, pid=pid(), tid=tid(),
            name=cols.cat_all("name"),  # int32 codes: gathers move half the bytes of int64
            cat=cols.cat_all("cat"),
        )  # fmt: skip
        del pid, tid
        read("pid", "tid", "ts", "dur", "dur_ok")  # in `ev` now
        if settle is not None:
            settle()
        early = beside.submit(_time_only_tables, ev)
        sl, tracks = slices(
            ph, cols, ts, dur, ok, trace_end, ev.pid, ev.tid, ev.name, ev.cat, warnings, counts
        )
        del dur, ts  # `ev.ts` is the one the later stages read
        ph.forget()  # the slices' seven masks (a byte an event each): no stage asks again
        spill()  # the phases, names, ids and times of every event are read
        labels = [beside.submit(event_labels, ev, sl, part) for part in (0, 1)]
        lanes, s, order, inst, scope = _lanes_sorted(
            ev, sl, tracks, key_id, key_text, compiled, warnings, counts
        )
        pairs, counters, memory = early.result()
        del early  # its result holds the flow pairs, let go below
        ends = flow_ends(pairs, ev.ph, cols, ev.ts, ev.pid, ev.tid, ev.name, ev.cat)
        instants = instants_table(ev, inst, scope)
        named = labels[0].result() | labels[1].result()  # they read the slices as found
        # the flows' ends, the instants and the labels were the last to read the events'
        # times, pids, tids, names and categories (32 bytes an event, 1.6 GB at 10 GB):
        # they go before the args index and the flows' binding, rather than sit beside them
        ev.let_go_fields()
        read("name", "cat", "fid", "bp_e", "shape", "scope")
        ph.forget()  # the masks the slices, lanes and flows asked for
        spill()  # before the args index and the events table
        late = beside.submit(flows_table, ends, cols, lanes, s)
        # the slices in their final order, and the slices as found let go before the events
        # table is made: their five columns (137 MB at 1 GB) were alive at the load's peak
        src = sl.src[order]
        arg_index = _arg_index(cols, src, fast)
        read("arg_rows")  # nothing reads it after `_arg_index`
        slices_end = int(s.end.max()) if len(s.end) else 0
        parts = SliceParts(src, order, named)
        del sl, labels, src, order, named
        flows = late.result()
        warnings.extend(pairs.warnings)
        pair_counts = pairs.counts
        del pairs, late, ends
        read("ts_ok")
        spill()  # the slices as found, the flows' ends and the binding's work
        events = events_table(ev, s, lanes, fast, parts, read)
        del parts, s
        spill()  # the ids the events table gathered
    _report(ev, warnings)
    counts.update(
        instants=len(instants), counters=int(ph("C").sum()), counter_samples=len(counters),
        lanes=len(lanes), memory_events=len(memory), metadata=int(ph("M").sum()), **pair_counts,
    )  # fmt: skip
    del ev, ph, ok
    read("ph")  # the last column (where `Phases` has no copy): the tables are made
    spill()  # what the events table and the report read
    return Built(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.coerce(instants, schema.INSTANTS),
        counters=counters,
        flows=flows,
        memory=memory,
        arg_index=arg_index,
        t0_ns=t0,
        duration_ns=_duration(max(trace_end, slices_end), instants, counters, memory),
        counts=counts,
        warnings=warnings,
    )


def _read(cols: Columns, let_go: Callable[[Sequence[str]], object] | None, *names: str) -> None:
    """The columns `names` were read for the last time: let go (see `build`). Emptied, a
    column read again by mistake is empty, which fails, not zeros, which would not."""
    for name in names:
        getattr(cols, name).clear()
    if let_go is not None:
        let_go(names)


def _nothing_read(*names: str) -> None:
    """`build` without `consume`: the columns stay."""


def _spill(give_back: Callable[[], object]) -> None:
    """Between the build's stages: the columns' pages where they lie in a file
    (`give_back`), and the holes the stage before left in malloc's heap
    (`heap.trim_holes`)."""
    give_back()
    heap.trim_holes()


def _nothing() -> None:
    """No columns to give back (they lie in memory)."""


def _lanes_sorted(
    ev: Events, sl: Slices, tracks: dict[int, object], key_id: np.ndarray,
    key_text: dict[int, str], compiled: bool, warnings: list[str], counts: dict[str, int],
) -> tuple[pd.DataFrame, SortedSlices, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The slices' overlap rows and lanes, then the slices sorted and nested: (lanes, sorted
    slices with depth and parent, their order, instant rows, the instants' scopes)."""
    cols = ev.cols
    inst, scope = _instant_rows(ev)
    thread_inst = inst[scope == ord("t")]

    # overlap rows per (pid, tid), then one lane per (pid, tid, sub); threads with only
    # instants get a lane too, so their (pid, tid) are coded along with the slices'
    # (async tracks are tids of their own)
    pair_all = _pair_codes(
        functools.partial(sl.key_columns, ev.pid, ev.tid, thread_inst),
        len(key_id) + len(tracks), compiled,
    )  # fmt: skip
    use = True if compiled else None  # the scanner path has numba loaded: always compiled
    o1, sub = _overlap_rows(pair_all, sl, use, warnings, counts)
    info = LaneInfo.from_metadata(cols, key_id, key_text, tracks)
    lanes, lane_all = build_lanes(
        info, pair_all, sub, functools.partial(_row_keys, ev, sl, thread_inst),
        _gpu_rows(ev, sl, cols.cats.values), cols.cats.values,
    )  # fmt: skip
    del pair_all, sub
    box = [lane_all[: len(sl.src)], o1]
    del o1, lane_all  # `_sorted_slices` lets them go as it goes
    order, s = _sorted_slices(box, sl)
    s.depth, s.parent = nesting.nest(s.lane, s.start, s.end, compiled=use)
    _lane_stats(lanes, s.lane, s.depth)
    return lanes, s, order, inst, scope


def _row_keys(
    ev: Events, sl: Slices, thread_inst: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(pid, tid) of some lane rows (`_lanes_sorted`: the slices, then the thread instants
    `thread_inst`), read where asked rather than kept for every row."""
    n_sl = len(sl.src)
    in_sl = rows < n_sl
    pid = np.empty(len(rows), dtype=I64)
    tid = np.empty(len(rows), dtype=I64)
    pid[in_sl], tid[in_sl] = sl.keys(ev.pid, ev.tid, rows[in_sl])
    inst = thread_inst[rows[~in_sl] - n_sl]
    pid[~in_sl], tid[~in_sl] = ev.pid[inst], ev.tid[inst]
    return pid, tid


def _gpu_rows(ev: Events, sl: Slices, cat_values: list[object]) -> np.ndarray:
    """Per slice: is its category a device-side one (`lanes.gpu_categories`)? Looked up per
    event first, through int32 codes (`lanes.categorical`'s lookup), then gathered: a slice's
    category codes would be a row-sized temporary."""
    lut = gpu_categories(cat_values)
    fast = compiled_steps(len(ev.cat))
    if fast is not None and ev.cat.dtype == np.int32:  # int8: a type `kernels.warm` loads
        per_event = np.empty(len(ev.cat), dtype=np.int8)
        fast.lookup_into(lut.astype(np.int8), ev.cat, per_event)
        per_event = per_event.view(bool)
    else:
        per_event = lut[ev.cat]
    out: np.ndarray = per_event[sl.src]
    return out


def _time_only_tables(ev: Events) -> tuple[FlowPairs, pd.DataFrame, pd.DataFrame]:
    """What needs only the times (run beside the slices and lanes): flow arrows matched, the
    counters and the memory tables."""
    pairs = flow_pairs(ev.ph, ev.cols, ev.ts, ev.ok, ev.cat)
    counters = counters_table(ev.cols, ev.ts, ev.ok, ev.pid)
    memory = memory_table(ev.cols, ev.ts, ev.ok, ev.pid, ev.tid)
    return pairs, counters, memory


def _sorted_slices(box: list[np.ndarray], sl: Slices) -> tuple[np.ndarray, SortedSlices]:
    """The slices' order by (lane, start, -duration, file order), and the sorted slices.

    `box`: each slice's lane and `o1`, the slices' order by (pair, start, -duration, file),
    handed over so that each goes once read. A lane is one (pid, tid, sub): within it `o1`
    already has the (start, -duration, file) order, so a stable sort by lane gives
    slice_order(lane_of, ...) without a 3-key sort. The slices' start and end as found
    are let go once sorted (the sorted ones are read from here on): with the lanes and
    `o1` gone before them, 24 bytes a slice fewer beside the nesting."""
    o1 = box.pop()
    lane = box.pop()[o1]  # each slice's lane, in `o1`'s order
    by_lane = np.argsort(lane, kind="stable")
    order = o1[by_lane]
    del o1
    lane = lane[by_lane]
    del by_lane
    s = SortedSlices(lane, sl.start[order], sl.end[order], np.zeros(0, dtype=I64))
    sl.start = sl.end = _GONE
    return order, s


_GONE = np.zeros(0, dtype=I64)  # a column let go: a stray read finds it empty


def _arg_index(cols: Columns, sorted_src: np.ndarray, fast: ModuleType | None) -> np.ndarray:
    """Each slice's row among the events that have args (the args blob's index), in the
    slices' final order."""
    arg_rows = cols.cat_all("arg_rows").astype(I64, copy=False)
    if fast is not None and cols.n < 2**31:  # its running count is int32
        ranks: np.ndarray = fast.rank_among(arg_rows, sorted_src, cols.n)
        return ranks
    return _rank_among(arg_rows, sorted_src, cols.n)


def _kernels() -> ModuleType | None:
    """The compiled one-pass steps (`kernels`) when their code is ready, else None (numpy)."""
    from perfview.loaders.trace import kernels

    return kernels if kernels.ready() else None


def _times(
    cols: Columns, ph: Phases, ok: np.ndarray, warnings: list[str], fast: ModuleType | None
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(ts relative to t0, durations clamped at 0, t0, end of the trace)."""
    ts_raw = cols.cat_all("ts").astype(I64, copy=False)
    if fast is not None:
        dur_raw = cols.cat_all("dur").astype(I64, copy=False)
        dur_ok = cols.cat_all("dur_ok").astype(bool, copy=False)
        ts, dur, t0, end, negative = fast.times(ts_raw, ok, ph("M"), ph("X"), dur_raw, dur_ok)
        _negative_warning(negative, warnings)
        return ts, dur, int(t0), max(int(end), 0)
    dur = np.where(
        cols.cat_all("dur_ok").astype(bool, copy=False),
        cols.cat_all("dur").astype(I64, copy=False),
        0,
    )
    timed = ok & ~ph("M")
    big = np.iinfo(I64).max
    # reductions with where=: no filtered copy of a 2.5M-row column for one number
    t0 = int(np.min(ts_raw, where=timed, initial=big)) if timed.any() else 0
    ts = ts_raw - t0
    is_x = ph("X") & ok
    _negative_warning(int(np.count_nonzero((dur < 0) & is_x)), warnings)
    np.maximum(dur, 0, out=dur)
    ends = np.max(ts, where=timed, initial=0)
    if is_x.any():  # X slices are timed (ok, not metadata)
        ends = max(ends, np.max(ts + dur, where=is_x, initial=0))
    return ts, dur, t0, max(int(ends), 0)


def _pair_codes(
    make: Callable[[], tuple[np.ndarray, np.ndarray]], keys: int, compiled: bool
) -> np.ndarray:
    """`joint_codes(pid, tid)` of the columns `make` makes; compiled on the scanner path
    (two `pd.factorize` hash passes and their temporaries were 0.1 s of a 1 GB NCCL trace's
    build). Either column holds at most `keys` distinct ids. Compiled, each column is
    overwritten by its codes and the pid column becomes the pair codes: what
    `kernels.pair_codes` makes, without its two row-sized arrays beside the columns (16
    bytes a slice at the load's peak)."""
    pid, tid = make()
    fast = _kernels() if compiled else None
    if fast is not None and pid.dtype == I64 and tid.dtype == I64:
        size = 1 << max(4, (2 * keys + 1).bit_length())
        n_tid = fast.first_seen(tid, tid, size)
        if n_tid >= 0 and fast.first_seen(pid, pid, size) >= 0:
            pid *= max(n_tid, 1)
            pid += tid
            return pid
        pid, tid = make()  # more distinct ids than `keys`: made again, overwritten
    return joint_codes(pid, tid)


def _lookup_beside(
    pool: ThreadPoolExecutor, lut: np.ndarray, codes: np.ndarray, fast: ModuleType | None
) -> Callable[[], np.ndarray]:
    """lut[codes] (codes of any integer type) started on `pool`: compiled, without a widened
    copy of `codes`, into an array made on this thread (see `build`); what this returns
    gives the result. Without the compiled kernels, numpy's gather here and now."""
    if fast is None:
        result = lut[codes.astype(I64, copy=False)]
        return lambda: result
    out = np.empty(len(codes), dtype=lut.dtype)
    done = pool.submit(fast.lookup_into, lut, codes, out)
    return lambda: (done.result(), out)[1]


def _negative_warning(negative: int, warnings: list[str]) -> None:
    if negative:
        warnings.append(f"{negative:,} slices have a negative duration; shown with zero length")


def _instant_rows(ev: Events) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the instants (torch's memory instants are the memory table's) and their
    scope letter (t, p or g)."""
    mem_rows = np.zeros(ev.cols.n, dtype=bool)
    mem_rows[ev.cols.mem("row").astype(I64)] = True
    inst = np.flatnonzero(ev.ph("iInR") & ev.ok & ~mem_rows)
    scope = ev.cols.cat_all("scope").astype(np.uint8, copy=False)[inst]
    scope = np.where(np.isin(scope, [ord("p"), ord("g")]), scope, ord("t")).astype(np.uint8)
    return inst, scope


def _overlap_rows(
    pair_all: np.ndarray, sl: Slices, use: bool | None, warnings: list[str],
    counts: dict[str, int],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The slices' order by (pair, start, -duration) and each row's overlap row (`sub`,
    instants after the slices: row 0)."""
    pair = pair_all[: len(sl.src)]
    o1 = intervals.slice_order(pair, sl.start, sl.end)
    sub = np.zeros(len(pair_all), dtype=np.int16)
    sub[o1] = nesting.assign_rows(pair, sl.start, sl.end, compiled=use, order=o1)
    n_overlap = int((sub > 0).sum())
    if n_overlap:
        warnings.append(
            f"{n_overlap:,} slices overlap others on their thread or stream without nesting; "
            "they are shown on extra rows"
        )
        counts["overlapping_slices"] = n_overlap
    return o1, sub


def _report(ev: Events, warnings: list[str]) -> None:
    """Warnings about events no table shows: unsupported phases, no valid timestamp."""
    unsupported = ev.ph.unsupported()
    if unsupported:
        parts = ", ".join(f"{k}: {v:,}" for k, v in sorted(unsupported.items(), key=_by_count))
        warnings.append(
            f"ignored {sum(unsupported.values()):,} events of unsupported phases ({parts})"
        )
    untimed = int((~ev.ok & ~ev.ph("M")).sum())
    if untimed:
        warnings.append(f"skipped {untimed:,} events without a valid timestamp")


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _lane_stats(lanes: pd.DataFrame, lane_sorted: np.ndarray, depth: np.ndarray) -> None:
    """Fill max_depth and n_events of each lane (slices are sorted by lane)."""
    n = len(lanes)
    lanes["n_events"] = np.bincount(lane_sorted, minlength=n).astype(I64)
    max_depth = np.zeros(n, dtype=np.int16)
    if len(lane_sorted):
        first = np.concatenate([[0], np.flatnonzero(lane_sorted[1:] != lane_sorted[:-1]) + 1])
        max_depth[lane_sorted[first]] = np.maximum.reduceat(depth, first)
    lanes["max_depth"] = max_depth


def _duration(end: int, *tables: pd.DataFrame) -> int:
    """Latest time anything happens: `end` (the trace's, or a slice's closed at the end,
    whichever is later) or a row of one of `tables`."""
    out = end
    for table in tables:
        if len(table):
            out = max(out, int(table["ts"].max()))
    return out


__all__ = ["Built", "build"]
