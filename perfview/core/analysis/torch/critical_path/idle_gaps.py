"""Why each GPU stream is idle: every gap between a stream's activities inside a step gets one
cause, read off the dependency graph (the edge that held back the activity after the gap).

- the activity's launch came late: the gap up to the launch call is the CPU's — labelled by
  what the launching thread was doing when the stream ran dry: `sync drain` (blocked in a
  synchronising call), `data loader` (under enumerate(DataLoader)), `collective` (a
  communication op) or `cpu op` (named: the innermost slice open then); the rest of the gap,
  launch call → start, is `launch latency`;
- it was queued in time but started after the previous one ended: `launch latency`
  (kernel-to-kernel gap);
- it waited on another stream (cudaStreamWaitEvent): `another stream`, or `collective` when
  the awaited activity is a collective kernel;
- nothing explains it (no launch recorded, or no later work on the stream): `unknown`.
This replaces the coarse host-wait / kernel-wait split of the GPU idle page with named causes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64
from perfview.core.analysis.torch.critical_path.batched import (
    BATCH_BYTES,
    BYTES_PER_SLICE,
    batch_cuts,
    bounds_of,
    range_rows,
)
from perfview.core.analysis.torch.critical_path.context import Context, context
from perfview.core.analysis.torch.critical_path.graph import (
    CHAIN,
    COMM,
    DATA,
    LAUNCH,
    STREAM,
    SYNC_CAT,
    XSTREAM,
    Graph,
    build,
    build_graph,
    edge_names,
    position_in,
)
from perfview.core.analysis.torch.critical_path.walk import steps_of
from perfview.core.analysis.torch.unions import merge_intervals
from perfview.core.model import Timeline

CAUSES = (
    "cpu op", "launch latency", "sync drain", "data loader", "collective", "another stream",
    "unknown",
)  # fmt: skip
_CPU_CAUSE = {SYNC_CAT: "sync drain", DATA: "data loader", COMM: "collective"}
GAP_COLS = ["step", "device", "stream", "start_ns", "end_ns", "idle_ns", "cause", "detail"]


def _lane_info(tl: Timeline) -> tuple[dict[int, str], dict[int, str]]:
    lanes = tl.lanes
    ids = lanes["lane"].to_numpy(dtype=I64).tolist()
    return (
        dict(zip(ids, lanes["device"].astype(str).tolist(), strict=True)),
        dict(zip(ids, lanes["thread"].astype(str).tolist(), strict=True)),
    )


class _CpuAt:
    """What each CPU lane was doing at an instant: the CHAIN edge covering it."""

    def __init__(self, tl: Timeline, graph: Graph) -> None:
        chain = np.flatnonzero(graph.etype == CHAIN)
        lane = tl.events["lane"].to_numpy()[graph.rows[graph.src[chain] // 2]].astype(I64)
        order = np.lexsort((graph.time[graph.src[chain]], lane))
        self.edges = chain[order]
        self.lane = lane[order]
        self.t = graph.time[graph.src[self.edges]]
        self.graph = graph

    def at(self, lane: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The chain edge of `lane` covering each instant `x` (-1 if none)."""
        out = np.full(len(x), -1, I64)
        for ln in np.unique(lane).tolist():
            lo, hi = np.searchsorted(self.lane, [ln, ln + 1])
            want = np.flatnonzero(lane == ln)
            j = np.searchsorted(self.t[lo:hi], x[want], side="right") - 1
            ok = j >= 0
            e = self.edges[lo:hi][np.clip(j, 0, None)]
            ok &= self.graph.time[self.graph.dst[e]] >= x[want]
            out[want[ok]] = e[ok]
        return out


def stream_gaps(ctx: Context, steps: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Every gap of every GPU stream, read off the events (no graph): lane, start, end and
    the row of the activity after it (-1: none), lanes in order, each in time order; the
    first gap starts at the first step's start at the latest, the last ends at the last
    step's end at the earliest."""
    rows = ctx.gpu_rows
    lane, ts, end = ctx.lane[rows].astype(I64), ctx.ts[rows], ctx.end[rows]
    lo_all, hi_all = int(steps["start_ns"].min()), int(steps["end_ns"].max())
    parts = []
    for ln in np.unique(lane).tolist():
        k = np.flatnonzero(lane == ln)
        k = k[np.argsort(ts[k], kind="stable")]
        run = np.maximum.accumulate(end[k])
        gs = np.concatenate([[min(lo_all, int(ts[k[0]]))], run])
        ge = np.concatenate([ts[k], [max(hi_all, int(run[-1]))]])
        nxt = np.concatenate([rows[k], [-1]])
        keep = ge > gs
        parts.append((np.full(int(keep.sum()), ln, I64), gs[keep], ge[keep], nxt[keep]))
    return tuple(np.concatenate(c) for c in zip(*parts, strict=True))


def idle_gaps(tl: Timeline, batch_bytes: int | None = None) -> pd.DataFrame:
    """One row per idle interval of a GPU stream inside a step (a gap split at its launch
    call has two rows): step, device, stream, start_ns, end_ns, idle_ns, cause, detail.
    Each gap's cause is read off the graph of the batch of steps holding the activity after
    it (`batched.gap_causes`), never the whole trace's graph."""
    steps = steps_of(tl)
    ctx = context(tl)
    if not len(ctx.gpu_rows) or not len(steps):
        return pd.DataFrame(columns=GAP_COLS)
    g_lane, gs, ge, nxt = stream_gaps(ctx, steps)
    return _clip(tl, steps, *_batched_label(tl, ctx, steps, g_lane, gs, ge, nxt, batch_bytes))


def _batched_label(tl: Timeline, ctx: Context, steps: pd.DataFrame, g_lane: np.ndarray,
                   gs: np.ndarray, ge: np.ndarray, nxt: np.ndarray,
                   batch_bytes: int | None) -> tuple[np.ndarray, ...]:  # fmt: skip
    """`label` of the gaps overlapping a step, each on the graph of the batch of steps
    (`batched`'s batches) its next activity starts in: that node is inside the batch's range,
    so it has its whole-graph binding edge. What `label` reads before the range (the CPU
    edge covering a late launch's gap start, an awaited activity's binding: `reads_from`)
    widens that batch's range down to it, and its graph is built again."""
    s, e = merge_intervals(
        steps["start_ns"].to_numpy(dtype=I64), steps["end_ns"].to_numpy(dtype=I64)
    )
    k = np.searchsorted(s, ge, side="left") - 1
    wanted = np.flatnonzero((k >= 0) & (e[np.clip(k, 0, None)] > gs))
    n = len(gs)
    cap = max(1, (BATCH_BYTES if batch_bytes is None else batch_bytes) // BYTES_PER_SLICE)
    bounds = bounds_of(ctx, cap)
    cuts = np.asarray(batch_cuts(bounds, steps, cap), I64)
    at = np.where(nxt[wanted] >= 0, ctx.ts[np.clip(nxt[wanted], 0, None)], cuts[0])
    owner = np.clip(np.searchsorted(cuts, at, side="right") - 1, 0, max(len(cuts) - 2, 0))
    parts: list[tuple[np.ndarray, ...]] = []
    for i in np.unique(owner).tolist():
        mine = wanted[owner == i]
        lo, hi = int(cuts[i]) - 1, int(cuts[i + 1]) - 1
        graph = build(tl, ctx, range_rows(ctx, bounds, lo, hi))
        need = reads_from(graph, nxt[mine], gs[mine])
        if need <= lo:
            lo = need - 1
            graph = build(tl, ctx, range_rows(ctx, bounds, lo, hi))
        lane, start, stop, cause, detail, late = label(
            tl, graph, g_lane[mine], gs[mine], ge[mine], nxt[mine]
        )
        del graph
        # where the whole-trace `label` puts each row: the gaps in order, then the CPU parts
        key = np.concatenate([mine, n + mine[late]])
        parts.append((key, lane, start, stop, cause, detail))
    if not parts:
        empty = np.zeros(0, I64)
        return empty, empty, empty, np.zeros(0, object), np.zeros(0, object), empty
    key, lane, start, stop, cause, detail = (np.concatenate(c) for c in zip(*parts, strict=True))
    order = np.argsort(key, kind="stable")
    return lane[order], start[order], stop[order], cause[order], detail[order], order[:0]


def whole_idle_gaps(tl: Timeline) -> pd.DataFrame:
    """`idle_gaps` read off the whole trace's graph: the reference the tests hold it to."""
    steps = steps_of(tl)
    ctx = context(tl)
    if not len(ctx.gpu_rows) or not len(steps):
        return pd.DataFrame(columns=GAP_COLS)
    g_lane, gs, ge, nxt = stream_gaps(ctx, steps)
    graph = build_graph(tl)
    return _clip(tl, steps, *label(tl, graph, g_lane, gs, ge, nxt))


def label(tl: Timeline, graph: Graph, g_lane: np.ndarray, gs: np.ndarray, ge: np.ndarray,
          nxt_row: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Split each gap by cause (`nxt_row`: the row of the activity after it, in `graph`, or
    -1): lane, start, stop, cause and detail of the gaps, then of their CPU parts; and the
    gaps the CPU parts are of (positions in the arguments)."""
    n = len(gs)
    nxt = np.where(nxt_row >= 0, position_in(graph.rows, nxt_row), -1)
    b = np.where(nxt >= 0, graph.binding[2 * np.clip(nxt, 0, None)], -1)
    et = np.where(b >= 0, graph.etype[np.clip(b, 0, None)], -1)
    src = graph.src[np.clip(b, 0, None)]
    cause = np.full(n, "unknown", object)
    detail = np.full(n, "", object)
    detail[nxt < 0] = "(no later work on the stream)"
    cause[et == STREAM] = "launch latency"
    detail[et == STREAM] = "(kernel-to-kernel gap)"
    _dev, lane_label = _lane_info(tl)
    x = np.flatnonzero(et == XSTREAM)
    other = tl.events["lane"].to_numpy()[graph.rows[src[x] // 2]].astype(I64)
    from_comm = graph.category[graph.binding[src[x]]] == COMM
    cause[x] = np.where(from_comm, "collective", "another stream")
    detail[x] = [lane_label.get(int(o), str(o)) for o in other.tolist()]
    # launched late: the CPU's part up to the launch call, then launch latency
    la = np.flatnonzero(et == LAUNCH)
    at = graph.time[src[la]]
    cut = np.clip(at, gs[la], ge[la])
    cause[la] = "launch latency"
    detail[la] = edge_names(tl, graph, b[la])
    late = la[cut > gs[la]]
    cpu_lane = tl.events["lane"].to_numpy()[graph.rows[src[late] // 2]].astype(I64)
    edge = _CpuAt(tl, graph).at(cpu_lane, gs[late])
    has = edge >= 0
    cpu_cause = np.full(len(late), "cpu op", object)
    cpu_detail = np.full(len(late), "(thread idle)", object)
    cats = graph.category[edge[has]].tolist()
    cpu_cause[has] = [_CPU_CAUSE.get(c, "cpu op") for c in cats]
    cpu_detail[has] = edge_names(tl, graph, edge[has])
    cpu_end = cut[cut > gs[la]]
    rows_lane = np.concatenate([g_lane, g_lane[late]])
    start = np.concatenate([gs, gs[late]])
    stop = np.concatenate([ge, ge[late]])
    start[la] = cut  # the launch-latency part starts at the launch call
    stop[n:] = cpu_end
    return (rows_lane, start, stop, np.concatenate([cause, cpu_cause]),
            np.concatenate([detail, cpu_detail]), late)  # fmt: skip


def reads_from(graph: Graph, nxt_row: np.ndarray, gs: np.ndarray) -> int:
    """The earliest instant `label` reads the graph at for these gaps: the start of a gap
    launched late (the CPU edge covering it) and the end an awaited activity (its binding)."""
    nxt = position_in(graph.rows, nxt_row)
    b = np.where(nxt >= 0, graph.binding[2 * np.clip(nxt, 0, None)], -1)
    et = np.where(b >= 0, graph.etype[np.clip(b, 0, None)], -1)
    src = graph.src[np.clip(b, 0, None)]
    x = et == XSTREAM
    la = et == LAUNCH
    late = la & (graph.time[src] > gs)
    t = np.concatenate([graph.time[src[x]], gs[late]])
    return int(t.min()) if len(t) else np.iinfo(np.int64).max


def _clip(tl: Timeline, steps: pd.DataFrame, rows_lane: np.ndarray, start: np.ndarray,
          stop: np.ndarray, all_cause: np.ndarray, all_detail: np.ndarray,
          _late: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """Clip every labelled gap to every step window it overlaps."""
    dev, lane_label = _lane_info(tl)
    frames = []
    for step, lo, hi in steps[["step", "start_ns", "end_ns"]].itertuples(index=False):
        a, z = np.maximum(start, lo), np.minimum(stop, hi)
        keep = np.flatnonzero(z > a)
        frames.append(pd.DataFrame({
            "step": int(step),
            "device": [dev.get(int(v), "") for v in rows_lane[keep].tolist()],
            "stream": [lane_label.get(int(v), "") for v in rows_lane[keep].tolist()],
            "start_ns": a[keep], "end_ns": z[keep], "idle_ns": z[keep] - a[keep],
            "cause": all_cause[keep], "detail": all_detail[keep],
        }))  # fmt: skip
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=GAP_COLS)
    return out.sort_values(["step", "device", "stream", "start_ns"], kind="stable")[
        GAP_COLS
    ].reset_index(drop=True)


def idle_gaps_table(tl: Timeline) -> pd.DataFrame:
    """`perfview summary --view idle-gaps`: per step, stream, cause and detail: gaps, idle_ns
    and share_pct (of that stream's idle time in the step), biggest first."""
    gaps = idle_gaps(tl)
    cols = ["step", "device", "stream", "cause", "detail", "gaps", "idle_ns", "share_pct"]
    if not len(gaps):
        return pd.DataFrame(columns=cols)
    keys = ["step", "device", "stream", "cause", "detail"]
    out = (
        gaps.groupby(keys, sort=False)
        .agg(gaps=("idle_ns", "size"), idle_ns=("idle_ns", "sum"))
        .reset_index()
    )
    total = out.groupby(["step", "device", "stream"])["idle_ns"].transform("sum")
    out["share_pct"] = out["idle_ns"] * 100.0 / total
    out = out.sort_values(["step", "device", "stream", "idle_ns"],
                          ascending=[True, True, True, False], kind="stable")  # fmt: skip
    return out[cols].astype({"gaps": "int64", "idle_ns": "int64"}).reset_index(drop=True)


def cause_totals(tl: Timeline, batch_bytes: int | None = None) -> pd.DataFrame:
    """step, device, stream, then one `<cause>` ns column per cause (the idle-gap chart)."""
    gaps = idle_gaps(tl, batch_bytes)
    if not len(gaps):
        return pd.DataFrame(columns=["step", "device", "stream", *CAUSES])
    wide = gaps.pivot_table(index=["step", "device", "stream"], columns="cause",
                            values="idle_ns", aggfunc="sum")  # fmt: skip
    return wide.reindex(columns=list(CAUSES)).fillna(0).astype(I64).reset_index()


__all__ = [
    "CAUSES", "cause_totals", "idle_gaps", "idle_gaps_table", "label", "reads_from",
    "stream_gaps", "whole_idle_gaps",
]  # fmt: skip
