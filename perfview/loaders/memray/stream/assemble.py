"""The replayed state → `MemrayCapture`: the same tables memray's own reader path produces
(`loaders.memray.loader`), so either reader feeds the same views."""

from __future__ import annotations

from datetime import datetime
from math import ceil

import numpy as np
import pandas as pd

from perfview.core.model.memray_model import MemrayCapture, StackInterner
from perfview.loaders.memray.stream import kernel as K
from perfview.loaders.memray.stream import tables as T
from perfview.loaders.memray.stream.lines import line_number
from perfview.loaders.memray.stream.replay import State

MAX_SNAPSHOTS = 10_000  # memray's FileReader keeps at most this many memory snapshots


class Stacks:
    """Stack nodes → interned stacks (innermost frame first, as memray lists them)."""

    def __init__(self, s: State, intern: StackInterner) -> None:
        self.s = s
        self.intern = intern
        self.locs: dict[int, tuple[str, str, int]] = {}
        self.ids: dict[tuple[int, int], int] = {}

    def _loc(self, node: int) -> tuple[str, str, int]:
        loc = self.locs.get(node)
        if loc is None:
            row = self.s.nodes[node]
            code = self.s.codes.get(int(row[T.N_CODE]))
            if self.s.header.version <= 11:  # the stream names its frames itself
                loc = self.s.frames11.get(int(row[T.N_CODE]), ("", "", 0))
            elif code is None:  # memray's map gives an empty code object then
                loc = ("", "", 0)
            else:
                line = line_number(
                    self.s.header.python_version, code.linetable, int(row[T.N_OFF]), code.first_line
                )
                loc = (code.name, code.file, line)
            self.locs[node] = loc
        return loc

    def stack(self, node: int, skip: int = 0) -> int:
        """The stack id of `node`, without its `skip` outermost frames."""
        key = (node, skip)
        sid = self.ids.get(key)
        if sid is None:
            frames = []
            n = node
            while n:
                frames.append(self._loc(n))
                n = int(self.s.nodes[n, T.N_PARENT])
            sid = self.ids[key] = self.intern.stack(frames[: max(len(frames) - skip, 0)])
        return sid


def _sites(stacks: Stacks, cnt: np.ndarray, size: np.ndarray) -> pd.DataFrame:
    nodes = np.flatnonzero(cnt > 0)
    s = stacks.s
    main, skip = s.header.main_tid, s.header.skipped_frames
    on_main = s.tids[s.nodes[nodes, T.N_THREAD]] == main
    frame = pd.DataFrame(
        {
            "stack": np.array(
                [
                    stacks.stack(int(n), skip if m else 0)
                    for n, m in zip(nodes, on_main, strict=True)
                ],
                dtype=np.int32,
            ),
            "size_bytes": size[nodes].astype(np.int64),
            "count": cnt[nodes].astype(np.int64),
        }
    )
    return group_sites(frame)


def group_sites(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per stack (memray may give several: same lines, other offsets or threads)."""
    out = frame.groupby("stack", as_index=False, sort=True)[["size_bytes", "count"]].sum()
    out["stack"] = out["stack"].astype(np.int32)
    return out


def peak_and_leaks(s: State, stacks: Stacks) -> tuple[pd.DataFrame, pd.DataFrame]:
    st = s.st
    nodes = s.nodes[: int(st[K.N_NODES])]
    epoch = int(st[K.EPOCH]) + int(st[K.PENDING])  # the last state may be the peak itself
    now = nodes[:, T.N_EPOCH] < epoch  # unchanged since the peak: their counts now hold
    peak_cnt = np.where(now, nodes[:, T.N_CNT], nodes[:, T.N_HCNT])
    peak_bytes = np.where(now, nodes[:, T.N_BYTES], nodes[:, T.N_HBYTES])
    peak = _sites(stacks, peak_cnt, peak_bytes)
    leaks = _sites(stacks, nodes[:, T.N_CNT], nodes[:, T.N_BYTES])
    return peak, leaks


def _lifetimes(s: State) -> pd.DataFrame:
    """Raw rows: generation allocated / freed (-1: never), thread slot, node, count, bytes."""
    h = s.hu.astype(bool)
    live = s.au.astype(bool)
    n_mm = int(s.st[K.N_MMAP])
    mm = s.mm[:n_mm]
    first = np.zeros(n_mm, np.int64)
    if n_mm:
        first[np.unique(mm[:, K.M_ID], return_index=True)[1]] = 1  # a split map counts once
    cols = {
        "start": [s.hk[h, 0], s.av[live, K.V_GEN], mm[:, K.M_GEN]],
        "end": [s.hk[h, 1], np.full(int(live.sum()), -1), np.full(n_mm, -1)],
        "thread": [s.hk[h, 2], s.av[live, K.V_THREAD], mm[:, K.M_THREAD]],
        "node": [s.hk[h, 3], s.av[live, K.V_NODE], mm[:, K.M_NODE]],
        "count": [s.hv[h, 0], np.ones(int(live.sum()), np.int64), first],
        "size_bytes": [s.hv[h, 1], s.av[live, K.V_SIZE], mm[:, K.M_END] - mm[:, K.M_BEGIN]],
    }
    return pd.DataFrame({k: np.concatenate(v).astype(np.int64) for k, v in cols.items()})


def intervals_and_threads(s: State, stacks: Stacks) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = _lifetimes(s)
    n_mem = int(s.st[K.N_MEM])
    if n_mem > MAX_SNAPSHOTS:  # memray then counts every stride-th memory record only
        stride = ceil(n_mem / MAX_SNAPSHOTS)
        rows["start"] = -(-rows["start"] // stride)
        ended = rows["end"] >= 0
        rows.loc[ended, "end"] = -(-rows.loc[ended, "end"] // stride)
        rows = rows[rows["start"] != rows["end"]]
    keys = ["thread", "node", "start", "end"]
    rows = rows.groupby(keys, as_index=False, sort=False)[["count", "size_bytes"]].sum()
    tids = s.tids[rows["thread"].to_numpy()]
    main, skip = s.header.main_tid, s.header.skipped_frames
    rows["stack"] = [
        stacks.stack(int(n), skip if int(t) == main else 0)
        for n, t in zip(rows["node"].to_numpy(), tids, strict=True)
    ]
    rows["tid"] = tids
    intervals = group_intervals(rows[["tid", "stack", "start", "end", "count", "size_bytes"]])
    per_thread = intervals.groupby("tid")["count"].sum()
    seen = set(per_thread.index.tolist())
    n_threads = int(s.st[K.N_THREADS])
    extra = sorted(
        {int(t) for t, c in zip(s.tids[:n_threads], s.tcount[:n_threads], strict=True) if c > 0}
        - seen
    )
    threads = pd.DataFrame(
        {
            "tid": np.concatenate([per_thread.index.to_numpy(np.int64), np.array(extra, np.int64)]),
            "name": pd.Series(
                [s.names.get(int(t), "") for t in per_thread.index] + [""] * len(extra),
                dtype=object,
            ),
            "allocations": np.concatenate(
                [per_thread.to_numpy(np.int64), np.zeros(len(extra), np.int64)]
            ),
        }
    )
    return intervals, threads


def group_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (thread, stack, snapshots allocated/freed before)."""
    out = frame.groupby(["tid", "stack", "start", "end"], as_index=False, sort=True)[
        ["count", "size_bytes"]
    ].sum()
    out = out.astype(np.int64)
    out["stack"] = out["stack"].astype(np.int32)
    return out


def memory(s: State) -> pd.DataFrame:
    mem = s.mem[: int(s.st[K.N_MEM])]
    if len(mem) > MAX_SNAPSHOTS:
        mem = mem[:: ceil(len(mem) / MAX_SNAPSHOTS)]
    return pd.DataFrame(
        {"ts_ns": mem[:, 0] * 1_000_000, "rss_bytes": mem[:, 1], "heap_bytes": mem[:, 2]}
    )


def ns(ms: int) -> int:
    """memray's datetime for a time in ms, as ns (the same float steps the memray path takes)."""
    try:
        dt = datetime.fromtimestamp(ms // 1000).replace(microsecond=ms % 1000 * 1000).astimezone()
    except (OverflowError, ValueError, OSError):  # a damaged header's time
        return 0
    return int(dt.timestamp() * 1e9)


def capture(s: State) -> MemrayCapture:
    intern = StackInterner()
    stacks = Stacks(s, intern)
    peak, leaks = peak_and_leaks(s, stacks)
    intervals, threads = intervals_and_threads(s, stacks)
    frames, offsets, flat = intern.arrays()
    h = s.header
    return MemrayCapture(
        peak=peak,
        leaks=leaks,
        intervals=intervals,
        frames=frames,
        stack_offsets=offsets,
        stack_frames=flat,
        memory=memory(s),
        threads=threads,
        meta={
            "version": h.version,
            "records": int(s.st[K.RECORDS]),
            "peak_bytes": int(s.st[K.PEAK]),
            "command_line": h.command_line,
            "pid": h.pid,
            "python_allocator": h.python_allocator,
            "native_traces": h.native_traces,
            "start_ns": ns(h.start_ms),
            "end_ns": ns(h.end_ms),
            "reader": "perfview",
        },
    )
