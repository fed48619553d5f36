"""A what-if replay batch by batch: the graph of one batch at a time, never the whole trace's.

Replaying under edits moves every later node, so batches are not independent: a batch's graph
(`batched.range_rows`: its range (lo, hi] plus what the edges into it come from) holds nodes
before its range whose replayed times earlier batches decided. The batches (`cuts_of`: every
`BATCH_BYTES` worth of slices, steps or not) are replayed in time order, and what each decided
is carried (`Carried`):

- per node of the trace, its replayed time (float64), which a later batch's graph takes for
  its nodes at or before its lo (`replay.replay_fixed`) and the predicted timeline reads;
- for the nodes a step still to walk may pass, the source of the new binding edge with that
  edge's category, label and type, which a step's predicted path walks (`replay.walk_sparse`)
  where it runs back before its batch (a host freed of its syncs runs ahead of the GPU: a
  step's path then goes back through work queued in earlier steps). They are let go once
  replayed at or before a lower bound on every later step's replayed start (`_Bound`).

Every node inside a range has the in-edges it has in the whole graph (`batched`), so the same
binding edge and replay weights, given the trace's typical launch latency (`typical_launch`,
counted over the same batches first) and the trace's first instant as the root (SOURCE edges
are counted from it). Edges only go forward in time, so the nodes at or before lo are decided
before the range is replayed: the times, binding edges and paths are the whole graph's
(`test_replay_batched.py`: every sample, every edit, batches down to one slice).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import remembered
from perfview.core.analysis.torch.common import I64
from perfview.core.analysis.torch.critical_path import batched, replay
from perfview.core.analysis.torch.critical_path.context import Context, context
from perfview.core.analysis.torch.critical_path.graph import (
    LAUNCH,
    Graph,
    build,
    build_graph,
)
from perfview.core.analysis.torch.critical_path.walk import StepLinks, steps_of
from perfview.core.model import Timeline


@dataclass
class Carried:
    """What the batches replayed so far decided: per node of the trace (the slice at
    position j of `rows` has nodes 2j and 2j + 1, the root last) its replayed time `t`; and
    for the nodes a step still to walk may pass (`keep`), their new binding edge: source
    node, category, label and type, sorted by node (`nodes`)."""

    rows: np.ndarray
    ts: np.ndarray  # the events' measured starts and ends (`Context`)
    end: np.ndarray
    t0: int  # the trace's first instant: the root's time
    t: np.ndarray
    nodes: np.ndarray
    src: np.ndarray
    category: np.ndarray
    label: np.ndarray
    etype: np.ndarray

    @classmethod
    def of(cls, ctx: Context, rows: np.ndarray) -> Carried:
        t0 = int(min(ctx.ts[rows].min(), ctx.end[rows].min())) if len(rows) else 0
        t = np.full(2 * len(rows) + 1, np.nan)
        t[-1] = t0
        none = np.zeros(0, I64)
        return cls(rows, ctx.ts, ctx.end, t0, t, none, none, np.zeros(0, np.int8), none,
                   np.zeros(0, np.int8))  # fmt: skip

    def measured(self, nodes: np.ndarray) -> np.ndarray:
        """The measured time (ns) of nodes of the trace."""
        root = nodes == len(self.t) - 1
        r = self.rows[np.where(root, 0, nodes // 2)] if len(self.rows) else nodes
        out = np.where(nodes % 2 == 0, self.ts[r], self.end[r]) if len(self.rows) else nodes
        return np.where(root, self.t0, out).astype(I64)

    def nodes_of(self, graph: Graph) -> np.ndarray:
        """The trace's node of each node of a batch's graph."""
        pos = np.searchsorted(self.rows, graph.rows)
        out = np.empty(len(graph.time), I64)
        out[0:-1:2], out[1:-1:2] = 2 * pos, 2 * pos + 1
        out[-1] = len(self.t) - 1
        return out

    def replay(self, graph: Graph, weight: np.ndarray, lo: float, hi: float) -> None:
        """Replay a batch's graph with its nodes at or before `lo` at their carried times,
        and carry what it decided for its nodes in (lo, hi]."""
        node = self.nodes_of(graph)
        fixed = np.where(graph.time <= lo, self.t[node], np.nan)
        fixed[-1] = self.t0
        t, via = replay.replay_fixed(graph.order, graph.in_ptr, graph.in_edge, graph.src,
                                     weight, float(self.t0), fixed)  # fmt: skip
        inside = np.flatnonzero((graph.time > lo) & (graph.time <= hi))
        inside = inside[inside != graph.root]
        self.t[node[inside]] = t[inside]
        inside = inside[via[inside] >= 0]
        e = via[inside]
        order = np.argsort(np.concatenate([self.nodes, node[inside]]), kind="stable")
        self.nodes = np.concatenate([self.nodes, node[inside]])[order]
        self.src = np.concatenate([self.src, node[graph.src[e]]])[order]
        self.category = np.concatenate([self.category, graph.category[e]])[order]
        self.label = np.concatenate([self.label, graph.label[e]])[order]
        self.etype = np.concatenate([self.etype, graph.etype[e]])[order]

    def keep(self, bound: float) -> None:
        """Let go of the binding edges of nodes replayed at or before `bound`: no step still
        to walk starts before it, and a walk stops at the first node at or before its start."""
        k = self.t[self.nodes] > bound
        self.nodes, self.src, self.category = self.nodes[k], self.src[k], self.category[k]
        self.label, self.etype = self.label[k], self.etype[k]

    def links(self, step: int, begin: int, end: int) -> StepLinks:
        """The predicted path of a step from its begin and end nodes (end -1: the node that
        ends last), as the pages keep it."""
        if end < 0:
            end = int(np.argmax(self.t[:-1])) if len(self.t) > 1 else len(self.t) - 1
        start, stop = float(self.t[begin]), float(self.t[end])
        at = replay.walk_sparse(self.nodes, self.src, self.t, end, start)
        dst, src = self.nodes[at], self.src[at]
        ns = self.t[dst] - np.maximum(self.t[src], start)
        first = np.maximum(self.measured(src), int(np.ceil(start)))
        return StepLinks(step, start, stop, first, self.measured(dst), ns, self.category[at],
                         self.label[at], self.etype[at])  # fmt: skip


def _nodes(carried: Carried, steps: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per step, its begin and end node in the trace's numbering (the whole recording as one
    step, or a step whose slice has no nodes: the root, and -1 for whichever node ends
    last, as `walk.StepNodes`)."""
    rows = carried.rows
    row = steps["row"].to_numpy(dtype=I64)
    pos = np.clip(np.searchsorted(rows, row), 0, max(len(rows) - 1, 0))
    out = (row < 0) | (rows[pos] != row) if len(rows) else np.ones(len(row), bool)
    begin = np.where(out, len(carried.t) - 1, 2 * pos).astype(I64)
    end = np.where(out, -1, 2 * pos + 1).astype(I64)
    return begin, end


class _Bound:
    """A lower bound on the replayed start of the steps still to walk: a step begins on its
    CPU thread after every earlier point of that thread (thread-order edges are never removed
    and never negative), so per thread with steps to come, the replayed time of its latest
    point before them; -inf while a thread with steps to come has no replayed point yet."""

    def __init__(self, carried: Carried, ctx: Context, steps: pd.DataFrame,
                 begin: np.ndarray) -> None:  # fmt: skip
        row = steps["row"].to_numpy(dtype=I64)
        self.lane = np.where(begin < len(carried.t) - 1, ctx.lane[np.clip(row, 0, None)], -1)
        self.start = carried.measured(begin)
        self.ctx = ctx
        self.seen: dict[int, tuple[int, float]] = {}  # lane → (measured, replayed) time

    def update(self, carried: Carried, graph_rows: np.ndarray, todo: np.ndarray) -> float:
        """Note the latest points before the steps still to walk (`todo`, their positions)
        among the rows of a replayed batch, and return the bound."""
        if not len(todo):
            return np.inf
        if (self.lane[todo] < 0).any():
            return -np.inf
        ctx = self.ctx
        rows = graph_rows[ctx.cpu[graph_rows]]
        pos = np.searchsorted(carried.rows, rows)
        bound = np.inf
        for ln in np.unique(self.lane[todo]).tolist():
            first = int(self.start[todo][self.lane[todo] == ln].min())
            k = np.flatnonzero((ctx.lane[rows] == ln) & (ctx.ts[rows] < first))
            k = k[np.isfinite(carried.t[2 * pos[k]])]
            if len(k):
                j = k[np.argmax(ctx.ts[rows[k]])]
                best = (int(ctx.ts[rows[j]]), float(carried.t[2 * pos[j]]))
                if ln not in self.seen or best[0] >= self.seen[ln][0]:
                    self.seen[ln] = best
            if ln not in self.seen:
                return -np.inf
            bound = min(bound, self.seen[ln][1])
        return bound


def cuts_of(bounds: batched.Bounds, t0: int, top: int, cap: int) -> np.ndarray:
    """The replay's batch boundaries: every `cap` slices by start, steps or not (a step's
    path is walked once the batch holding its end is replayed, so a step bigger than a batch
    is replayed in several); the ranges (c - 1, next - 1] cover t0 to `top`."""
    return np.unique(np.concatenate([[t0], bounds.every(cap), [top + 1]]).astype(I64))


def typical_launch(tl: Timeline, ctx: Context, bounds: batched.Bounds, cuts: np.ndarray) -> float:
    """The trace's typical launch latency (the median binding launch delay, `graph._weights`)
    counted over the batches: each counts the binding launches of the activities starting in
    its range (their begin nodes' binding edges are the whole graph's)."""
    owned = []
    for c, nxt in itertools.pairwise(cuts.tolist()):
        sub = batched.range_rows(ctx, bounds, c - 1, nxt - 1)
        graph = build(tl, ctx, sub)
        g = np.flatnonzero(ctx.gpu[sub] & (ctx.ts[sub] >= c) & (ctx.ts[sub] < nxt))
        bind = graph.binding[2 * g]
        bind = bind[bind >= 0]
        owned.append(graph.measured[bind[graph.etype[bind] == LAUNCH]])
        del graph
    every = np.concatenate(owned) if owned else np.zeros(0, I64)
    return float(np.median(every)) if len(every) else 0.0


_TYPICAL = remembered.Store()  # per trace, one number: the next what-if replays in one pass


def fits_whole(slices: int) -> bool:
    """Whether the whole trace's graph fits what the pages may remember (`remembered.BUDGET`:
    an eighth of the machine's memory): then it is built once and kept, and each edit after
    the first replays it in milliseconds (a 1 GB trace: 0.17 s, against 4.7 s batch by
    batch). Bigger traces (10 GB: ~11 GB of graph) are replayed batch by batch."""
    return slices * batched.BYTES_PER_SLICE <= remembered.BUDGET


def replayed(
    tl: Timeline,
    weights: Callable[[Graph], np.ndarray],
    batch_bytes: int | None = None,
    steps: pd.DataFrame | None = None,
) -> tuple[Carried, pd.DataFrame, list[StepLinks]]:
    """(carried state, steps, each step's predicted path): `weights(graph)` gives a batch
    graph's edited weights (`what_if.edited_weights`); the batches (`cuts_of`) are counted
    once for the typical launch latency, then replayed in time order (see the module doc),
    so every node gets its replayed time. A trace that is one batch (or one stand-in step)
    is replayed on its whole graph, remembered per trace (`build_graph`), as before batches:
    the next edit then costs a replay (milliseconds). `steps` (default `steps_of`): step,
    row, start_ns, end_ns."""
    steps = steps_of(tl) if steps is None else steps.reset_index(drop=True)
    ctx = context(tl)
    rows = ctx.rows
    carried = Carried.of(ctx, rows)
    if not len(steps) or not len(rows):
        return carried, steps, []
    begin, end = _nodes(carried, steps)
    numbers = steps["step"].to_numpy(dtype=I64)
    whole = (steps["row"].to_numpy() < 0).any()  # the whole recording as one step

    def on_the_whole_graph() -> tuple[Carried, pd.DataFrame, list[StepLinks]]:
        graph = build_graph(tl)  # remembered: the next edit replays (milliseconds)
        carried.replay(graph, weights(graph), -np.inf, np.inf)
        del graph
        trio = zip(numbers.tolist(), begin.tolist(), end.tolist(), strict=True)
        return carried, steps, [carried.links(s, b, e) for s, b, e in trio]

    if whole or (batch_bytes is None and fits_whole(len(rows))):
        return on_the_whole_graph()
    cap = batched.cap_of(batch_bytes)
    bounds = batched.bounds_of(ctx, cap)
    top = int(max(ctx.end[rows].max(), ctx.ts[rows].max()))
    cuts = cuts_of(bounds, carried.t0, top, cap)
    if len(cuts) == 2:  # one batch
        return on_the_whole_graph()
    typical = (  # the trace's whatever the batches: they cover the axis, each launch once
        _TYPICAL.while_alive(
            tl.events, id(tl.events), lambda: typical_launch(tl, ctx, bounds, cuts)
        )
        if batch_bytes is None
        else typical_launch(tl, ctx, bounds, cuts)
    )
    ends_at = np.where(end >= 0, carried.measured(np.clip(end, 0, None)), np.iinfo(I64).max)
    by_end = np.argsort(ends_at, kind="stable")
    ends = ends_at[by_end]
    lower = _Bound(carried, ctx, steps, begin)
    out: list[StepLinks | None] = [None] * len(steps)
    done = 0
    for c, nxt in itertools.pairwise(cuts.tolist()):
        lo, hi = c - 1, nxt - 1
        sub = batched.range_rows(ctx, bounds, lo, hi)
        graph = build(tl, ctx, sub, typical, carried.t0)
        carried.replay(graph, weights(graph), lo, hi)
        kept = graph.rows
        del graph
        upto = int(np.searchsorted(ends, hi, side="right"))
        for i in by_end[done:upto].tolist():  # the steps ending by hi: every node is replayed
            out[i] = carried.links(int(numbers[i]), int(begin[i]), int(end[i]))
        done = upto
        carried.keep(lower.update(carried, kept, by_end[done:]))
    return carried, steps, [one for one in out if one is not None]


__all__ = ["Carried", "cuts_of", "fits_whole", "replayed", "typical_launch"]
