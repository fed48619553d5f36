"""The dependency graph of one trace, as arrays: what had to happen before what.

Nodes are the begin and end of every CPU slice and every GPU activity (kernel, memcpy, memset):
the slice at position j of `Graph.rows` has nodes 2j (begin) and 2j + 1 (end); one extra node,
the root, stands for the trace's first instant. Edges, each with its measured length
d = time(dst) - time(src) >= 0:

- `CHAIN`  consecutive begin/end points on one CPU thread (the thread's own order);
- `BUSY`   a GPU activity's start → end (its duration);
- `STREAM` the previous activity on a GPU stream → the next one's start (stream order);
- `LAUNCH` the runtime call (cudaLaunchKernel, hipMemcpyAsync, …) → the activity it queued,
  linked by correlation id (kineto's ac2g flows carry the same id);
- `SYNC`   the GPU activity a blocking host call waited for → that call's end
  (cuda/hip Stream/Device/Event Synchronize, blocking cudaMemcpy, hipMemcpyWithStream,
  aten::_local_scalar_dense behind .item());
- `XSTREAM` a stream waiting on another (cudaStreamWaitEvent): as kineto recorded it (its
  `cuda_sync` "Stream Wait Event" names the stream and the event record), else guessed: an
  activity that started after it was queued and its stream was free waits for the activity
  that ended last before it on another stream of the device;
- `XTHREAD` one CPU thread handing off to another of its process (the autograd thread's
  backward ending the main thread's wait, a task woken on an idle thread; see `threads`);
- `SOURCE` the root → a node nothing else leads to.

Every edge is exact for the measured trace, so replaying the graph with its measured lengths
gives back every measured time. For what-if replays each node keeps one *binding* edge (the
one whose source came last, which really held it back) at its measured length; the others get
the length they would have had without waiting (0 for stream order and syncs, the trace's
typical launch latency for launches), so that a node moves earlier only when its binding
predecessor does and no other becomes binding first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, names_at, per_events
from perfview.core.analysis.torch.critical_path import replay, threads
from perfview.core.analysis.torch.critical_path.context import Context, context
from perfview.core.model import Timeline

CHAIN, BUSY, STREAM, LAUNCH, SYNC, XSTREAM, SOURCE, XTHREAD = range(8)
CATEGORIES = (
    "cpu_op", "kernel", "memcpy", "communication", "launch", "sync", "data_loading", "idle",
)  # fmt: skip
CPU_OP, KERNEL, MEMCPY, COMM, LAUNCH_CAT, SYNC_CAT, DATA, IDLE = range(len(CATEGORIES))
UNNAMED = {
    CHAIN: "(between ops)", STREAM: "(kernel-to-kernel gap)", SOURCE: "(before the trace)",
    XTHREAD: "(hand-off between threads)",
}  # fmt: skip


@dataclass(frozen=True)
class Graph:
    """Nodes (times) and edges (struct of arrays) of one trace; see the module docstring."""

    rows: np.ndarray  # event row of each begin/end pair
    time: np.ndarray  # int64 measured ns per node; the root last
    src: np.ndarray
    dst: np.ndarray
    measured: np.ndarray  # int64 d per edge
    weight: np.ndarray  # float64 replay length per edge (binding: d; else its floor)
    etype: np.ndarray  # int8 CHAIN … SOURCE
    category: np.ndarray  # int8 index into CATEGORIES
    label: np.ndarray  # event row naming the edge (-1: UNNAMED by etype)
    binding: np.ndarray  # per node, the measured edge that held it back (-1 for the root)
    order: np.ndarray  # topological order of the nodes
    in_ptr: np.ndarray
    in_edge: np.ndarray
    typical: float = 0.0  # the launch latency non-binding launches were given (`_weights`)

    @property
    def root(self) -> int:
        return len(self.time) - 1

    @property
    def t0(self) -> int:
        return int(self.time[-1])

    def node_of(self, event_rows: np.ndarray, end: bool) -> np.ndarray:
        """Begin (or end) node of event rows (-1 for rows outside the graph)."""
        pos = np.searchsorted(self.rows, event_rows)
        pos = np.clip(pos, 0, max(len(self.rows) - 1, 0))
        hit = len(self.rows) > 0 and (self.rows[pos] == event_rows)
        return np.where(hit, 2 * pos + int(end), -1).astype(I64)

    def replay(self, weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(time per node as float64 ns, binding edge per node) under `weight` (default: the
        graph's own, which gives back the measured times)."""
        w = self.weight if weight is None else weight
        return replay.replay(self.order, self.in_ptr, self.in_edge, self.src, w, float(self.t0))  # type: ignore[no-any-return]


class _Edges:
    """Edges gathered while building, concatenated once."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, src: np.ndarray, dst: np.ndarray, d: np.ndarray, etype: int,
            cat: np.ndarray | int, label: np.ndarray | int) -> None:  # fmt: skip
        n = len(src)
        self.parts.append((
            np.asarray(src, I64), np.asarray(dst, I64), np.asarray(d, I64),
            np.full(n, etype, np.int8), np.broadcast_to(np.asarray(cat, np.int8), (n,)),
            np.broadcast_to(np.asarray(label, I64), (n,)),
        ))  # fmt: skip

    def arrays(self) -> list[np.ndarray]:
        empty = [np.zeros(0, I64)] * 3 + [np.zeros(0, np.int8)] * 2 + [np.zeros(0, I64)]
        cols = list(zip(*self.parts, strict=True)) if self.parts else [[a] for a in empty]
        return [np.concatenate(c) for c in cols]


def _cpu_chain(tl: Timeline, ctx: Context, rows: np.ndarray, cpu_pairs: np.ndarray,
               time: np.ndarray, edges: _Edges) -> None:  # fmt: skip
    """CHAIN edges: each CPU lane's begin/end points in order, labelled with the innermost
    slice open between them (ends before begins at one instant, deeper ends first)."""
    ev = tl.events
    r = rows[cpu_pairs]
    n = len(r)
    if not n:
        return
    node = np.concatenate([2 * cpu_pairs, 2 * cpu_pairs + 1])
    is_end = np.concatenate([np.zeros(n, bool), np.ones(n, bool)])
    rr = np.concatenate([r, r])
    zero = ev["dur"].to_numpy(dtype=I64)[rr] == 0
    cls = np.where(is_end, np.where(zero, 2, 0), np.where(zero, 1, 3))
    depth = ev["depth"].to_numpy()[rr].astype(I64)  # the rows, then cast: not the column
    dkey = np.where(is_end & ~zero, -depth, depth)
    lane = ev["lane"].to_numpy()[rr].astype(I64)
    order = np.lexsort((rr, dkey, cls, time[node], lane))
    node, is_end, rr, lane = node[order], is_end[order], rr[order], lane[order]
    same = lane[1:] == lane[:-1]
    parent = ev["parent"].to_numpy(dtype=I64)
    inner = np.where(is_end, parent[rr], rr)[:-1][same]
    a, b = node[:-1][same], node[1:][same]
    edges.add(a, b, time[b] - time[a], CHAIN, _slice_category(ctx, inner), inner)
    src, dst = threads.hand_offs(tl, node, is_end, rr, lane, time)
    edges.add(src, dst, time[dst] - time[src], XTHREAD, IDLE, -1)


def _slice_category(ctx: Context, inner: np.ndarray) -> np.ndarray:
    """Category of CPU time spent with `inner` the innermost open slice (-1: none)."""
    out = np.full(len(inner), CPU_OP, np.int8)
    has = inner >= 0
    i = inner[has]
    cat = np.full(len(i), CPU_OP, np.int8)
    cat[ctx.comm_op[i]] = COMM
    cat[ctx.is_sync[i]] = SYNC_CAT
    cat[ctx.loader[i]] = DATA
    out[has] = cat
    return out


def position_in(rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Position in `rows` (sorted) of each wanted row, -1 where it is not there."""
    pos = np.searchsorted(rows, wanted)
    pos = np.clip(pos, 0, max(len(rows) - 1, 0))
    hit = (rows[pos] == wanted) if len(rows) else np.zeros(len(wanted), bool)
    return np.where(hit, pos, -1).astype(I64)


def _gpu_edges(ctx: Context, rows: np.ndarray, gpu_pairs: np.ndarray, time: np.ndarray,
               edges: _Edges) -> None:  # fmt: skip
    """BUSY, STREAM, LAUNCH, SYNC and XSTREAM edges."""
    g = gpu_pairs
    r = rows[g]
    if not len(r):
        return
    ts, end = time[2 * g], time[2 * g + 1]
    comm = ctx.comm_kernel[r]
    copy = ctx.copy[r]
    cat = np.where(comm, COMM, np.where(copy, MEMCPY, KERNEL)).astype(np.int8)
    edges.add(2 * g, 2 * g + 1, end - ts, BUSY, cat, r)
    launch = ctx.launch[np.searchsorted(ctx.gpu_rows, r)]
    lpos = position_in(rows, launch)
    launch[lpos < 0] = -1  # a call outside these rows (never for a batch: `batched` adds them)
    has = launch >= 0
    lnode = 2 * lpos[has]
    d = ts[has] - time[lnode]
    ok = d >= 0
    edges.add(lnode[ok], 2 * g[has][ok], d[ok], LAUNCH, LAUNCH_CAT, launch[has][ok])
    queued = np.where(has, time[2 * np.clip(lpos, 0, None)], ts)
    queued[has] = np.where(ok, queued[has], ts[has])
    lane = ctx.lane[r]
    ready = queued.copy()
    for ln in np.unique(lane).tolist():
        k = np.flatnonzero(lane == ln)
        k = k[np.argsort(ts[k], kind="stable")]
        e = end[k]
        run = np.maximum.accumulate(e)
        arg = np.maximum.accumulate(np.where(e == run, np.arange(len(k)), 0))
        if len(k) > 1:
            gap = ts[k[1:]] - run[:-1]
            ok = gap >= 0
            prev = k[arg[:-1]]
            edges.add(2 * g[prev[ok]] + 1, 2 * g[k[1:][ok]], gap[ok], STREAM, IDLE, -1)
            ready[k[1:]] = np.maximum(ready[k[1:]], run[:-1])
    _sync_edges(ctx, rows, g, end, queued, lane, time, edges)
    waited = _wait_edges(ctx, r, g, ts, end, edges)
    _stream_waits(ctx, g, ts, end, np.where(waited, ts, ready), lane, edges)


def _sync_edges(ctx: Context, rows: np.ndarray, g: np.ndarray, end: np.ndarray,
                queued: np.ndarray, lane: np.ndarray, time: np.ndarray,
                edges: _Edges) -> None:  # fmt: skip
    """SYNC edges: per blocking call, the activity queued before it that ended last before it
    returned, over every stream (the call's own stream is not recorded)."""
    sp = np.flatnonzero(ctx.is_sync[rows])
    if not len(sp):
        return
    s = rows[sp]
    s_begin, s_end = time[2 * sp], time[2 * sp + 1]
    best = np.full(len(s), -1, I64)
    best_end = np.full(len(s), np.iinfo(I64).min, I64)
    for ln in np.unique(lane).tolist():
        k = np.flatnonzero(lane == ln)
        k = k[np.argsort(queued[k], kind="stable")]
        e = end[k]
        run = np.maximum.accumulate(e)
        arg = np.maximum.accumulate(np.where(e == run, np.arange(len(k)), 0))
        j = np.searchsorted(queued[k], s_begin, side="right") - 1
        jj = np.clip(j, 0, None)
        cand_end = run[jj]
        ok = (j >= 0) & (cand_end > s_begin) & (cand_end <= s_end) & (cand_end > best_end)
        best[ok] = k[arg[jj[ok]]]
        best_end[ok] = cand_end[ok]
    hit = best >= 0
    edges.add(2 * g[best[hit]] + 1, 2 * sp[hit] + 1, s_end[hit] - best_end[hit], SYNC,
              SYNC_CAT, s[hit])  # fmt: skip


def _wait_edges(ctx: Context, r: np.ndarray, g: np.ndarray, ts: np.ndarray, end: np.ndarray,
                edges: _Edges) -> np.ndarray:  # fmt: skip
    """XSTREAM edges of the recorded waits (`_recorded_waits`) between activities of these
    rows (`r`, the GPU activities'). Returns which activities got such an edge, so the guess
    below leaves them alone."""
    waited = np.zeros(len(g), bool)
    w, a, b = ctx.waits
    s_, d_ = position_in(r, a), position_in(r, b)
    keep = (s_ >= 0) & (d_ >= 0)
    if keep.any():
        s_, d_ = s_[keep], d_[keep]
        edges.add(2 * g[s_] + 1, 2 * g[d_], ts[d_] - end[s_], XSTREAM, SYNC_CAT, w[keep])
        waited[d_] = True
    return waited


def _stream_waits(ctx: Context, g: np.ndarray, ts: np.ndarray, end: np.ndarray,
                  ready: np.ndarray, lane: np.ndarray, edges: _Edges) -> None:  # fmt: skip
    """XSTREAM edges: an activity that started later than it was ready (queued, stream free)
    waited on the activity of another stream of its device that ended last before it."""
    late = ts > ready
    if not late.any():
        return
    lanes = np.unique(lane)
    if len(lanes) < 2:
        return
    dev = ctx.lane_device
    best = np.full(len(g), -1, I64)
    best_end = ready.copy()
    for ln in lanes.tolist():
        k = np.flatnonzero(lane == ln)
        k = k[np.argsort(end[k], kind="stable")]
        want = np.flatnonzero(late & (lane != ln) & (dev[lane] == dev[ln]))
        j = np.searchsorted(end[k], ts[want], side="right") - 1
        jj = np.clip(j, 0, None)
        ok = (j >= 0) & (end[k][jj] > best_end[want])
        best[want[ok]] = k[jj[ok]]
        best_end[want[ok]] = end[k][jj[ok]]
    hit = np.flatnonzero(best >= 0)
    edges.add(2 * g[best[hit]] + 1, 2 * g[hit], ts[hit] - best_end[hit], XSTREAM, SYNC_CAT,
              -1)  # fmt: skip


def _weights(n_nodes: int, src: np.ndarray, dst: np.ndarray, d: np.ndarray, etype: np.ndarray,
             typical: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:  # fmt: skip
    """(replay weight per edge, binding edge per node, the typical launch latency): see the
    module docstring. `typical` (default: the median of these edges' binding launches) is
    given by a batch's graph (`batched`), whose own median is not the whole trace's."""
    order = np.lexsort((etype, d, dst))
    first = np.ones(len(order), bool)
    first[1:] = dst[order][1:] != dst[order][:-1]
    bind_edge = order[first]
    binding = np.full(n_nodes, -1, I64)
    binding[dst[bind_edge]] = bind_edge
    is_bind = np.zeros(len(d), bool)
    is_bind[bind_edge] = True
    if typical is None:
        launch_bound = d[is_bind & (etype == LAUNCH)]
        typical = float(np.median(launch_bound)) if len(launch_bound) else 0.0
    w = np.zeros(len(d), np.float64)
    w[is_bind] = d[is_bind]
    lz = ~is_bind & (etype == LAUNCH)
    w[lz] = np.minimum(d[lz], typical)
    keep = ~is_bind & ((etype == BUSY) | (etype == SOURCE))
    w[keep] = d[keep]
    return w, binding, typical


def build(tl: Timeline, ctx: Context, rows: np.ndarray, typical: float | None = None,
          t0: int | None = None) -> Graph:  # fmt: skip
    """The dependency graph over `rows` (sorted event rows of the graph, `Context.rows`, or a
    part of them: `batched` picks a batch of steps' rows, with what their edges come from).
    `t0`, the root's time (default: the rows' first instant), is the whole trace's for a
    batch replayed under edits (`replay_batched`: a SOURCE edge's length is counted from it,
    and `all=F` scales that length)."""
    ts, end = ctx.ts, ctx.end
    time = np.empty(2 * len(rows) + 1, I64)
    time[0:-1:2], time[1:-1:2] = ts[rows], end[rows]
    time[-1] = t0 if t0 is not None else int(time[:-1].min()) if len(rows) else 0
    edges = _Edges()
    is_gpu = ctx.gpu[rows]
    _cpu_chain(tl, ctx, rows, np.flatnonzero(~is_gpu), time, edges)
    _gpu_edges(ctx, rows, np.flatnonzero(is_gpu), time, edges)
    src, dst, d, etype, cat, label = edges.arrays()
    del edges
    n = len(time)
    reached = np.zeros(n, bool)
    reached[dst] = True
    reached[-1] = True
    orphan = np.flatnonzero(~reached)
    root = np.full(len(orphan), n - 1, I64)
    src, dst = np.concatenate([src, root]), np.concatenate([dst, orphan])
    d = np.concatenate([d, time[orphan] - time[-1]])
    etype = np.concatenate([etype, np.full(len(orphan), SOURCE, np.int8)])
    cat = np.concatenate([cat, np.full(len(orphan), IDLE, np.int8)])
    label = np.concatenate([label, np.full(len(orphan), -1, I64)])
    weight, binding, typical = _weights(n, src, dst, d, etype, typical)
    order = replay.topological_order(n, src, dst, time)
    in_ptr, in_edge = replay.incoming(n, dst)
    return Graph(rows, time, src, dst, d, weight, etype, cat, label, binding, order, in_ptr,
                 in_edge, typical)  # fmt: skip


@per_events
def build_graph(tl: Timeline) -> Graph:
    """The dependency graph of the whole of `tl` (made once per loaded trace; see the module
    docstring). The pages' paths are walked on batches of steps instead (`batched`); the
    what-if replays and the idle gaps read this one."""
    ctx = context(tl)
    return build(tl, ctx, ctx.rows)


def names_of(tl: Timeline, label: np.ndarray, etype: np.ndarray) -> np.ndarray:
    """The name of edges by their label slice and type (`edge_names`)."""
    out = np.empty(len(label), object)
    has = label >= 0
    out[has] = names_at(tl.events, label[has]).astype(str)
    for et, text in UNNAMED.items():
        out[~has & (etype == et)] = text
    out[~has & (etype == XSTREAM)] = "(wait on another stream)"
    out[pd.isna(out)] = ""
    return out


def edge_names(tl: Timeline, graph: Graph, edges: np.ndarray) -> np.ndarray:
    """The name of each edge: its label slice's name, else what UNNAMED says of its type."""
    return names_of(tl, graph.label[edges], graph.etype[edges])


__all__ = [
    "CATEGORIES", "Graph", "build", "build_graph", "edge_names", "names_of", "position_in",
]  # fmt: skip
