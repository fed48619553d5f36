"""Every step's measured critical path, walked on graphs of batches of steps, not of the trace.

The whole trace's graph costs ~340 bytes a slice while it is made (11 GB for a 10 GB trace).
A step's path only reads the nodes inside the step: walking back from its end, each node is
left through its binding edge until the walk reaches the step's start, and a node's binding
edge depends only on the edges into it. So the steps are taken in batches of consecutive
steps whose slices fit `BATCH_BYTES`; each batch's graph is built (`graph.build`) over the
slices of its time range (lo, hi] plus what the edges into that range come from, its steps
walked, their links kept (`walk.StepLinks`) and the graph let go. Working memory is bounded by
the biggest batch, not the trace; a step bigger than the budget is still computed, alone in
its batch (its graph as big as the step). A recording without any step or annotation is one
stand-in step spanning everything: its graph is the whole trace's.

What the range's edges come from, so that every node inside it has exactly the edges it has
in the whole graph (and so the same binding edge; the tests compare both on every sample):
- on each CPU thread with points inside, its last point at or before lo (thread order);
  threads hand off to each other only from points after that (`threads`), and a thread that
  starts inside the range may be woken by any thread's last point before it;
- on each GPU stream with work inside, the latest end of what started before it (stream
  order), and for work that may have waited on another stream (`_stream_waits`), everything
  that ended after it was queued;
- each blocking call that returns inside the range: what ended after it began;
- every activity's launch call, and the activity a recorded stream wait waited for.
The slices kept are those ending at or after the earliest of these and starting by hi. The
slices before the range then only add edges into nodes at or before lo, which no walk reads.

One weight is the trace's, not the batch's: non-binding launches replay at the trace's
typical launch latency (`graph._weights`), and a node's replayed binding edge can depend on
it. Each batch first walks with its own median, noting the launches that could tie; the
trace's median is known once every batch has counted the binding launches it owns (the
batches cover the whole time axis), and the few batches whose noted launches fall between
the two medians are walked again with the trace's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64
from perfview.core.analysis.torch.critical_path.context import Context, context
from perfview.core.analysis.torch.critical_path.graph import (
    LAUNCH,
    Graph,
    build,
    position_in,
)
from perfview.core.analysis.torch.critical_path.walk import (
    StepLinks,
    StepNodes,
    links_of,
    step_paths,
)
from perfview.core.analysis.torch.unions import merge_intervals
from perfview.core.model import Timeline

BYTES_PER_SLICE = 340  # peak while a graph is made (tracemalloc, 1 GB NCCL replica)
# Small batches are faster too: a graph's sorts grow faster than its size (688k slices: 1.36 s
# CPU in 2 batches, 1.0 s in 4 or 14), and what a range adds at its edges is ~4 % at 50k.
BATCH_BYTES = 64 << 20


LONG_SHARE = 0.001  # the longest slices, searched apart: `Bounds.short` is the rest's longest
CHUNK = 1 << 22  # rows a pass over durations reads at once (32 MB of int64)
SAMPLES_PER_BATCH = 8  # a lane's starts sampled this many times a batch: where to cut


@dataclass(frozen=True)
class Bounds:
    """Per lane, what finds a range's boundary and its slices without a whole-trace array
    (the events are sorted by lane, then start: a lane's slices are a run of rows and its
    starts a view of the time column): each CPU thread's begin and end points in time order;
    each GPU stream's activities by start, with the running latest end and when each was
    queued (its launch call's start). The slices overlapping a range are, per lane, those
    starting from its start less `short` (the longest but the `long` 0.1 %) to its end.
    ~8 bytes a CPU slice and 24 a GPU activity kept (an array of every slice by start and
    each thread's points as one array kept ~40 bytes a slice: 1.3 GB for a 10 GB trace)."""

    runs: list[tuple[int, int]]  # each lane's rows [a, z), lanes with graph rows only
    run_starts: np.ndarray  # (first, last) start of each run: a batch skips the runs outside
    cpu: list[tuple[np.ndarray, np.ndarray]]  # per CPU thread: starts, ends, in time order
    gpu: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    sync_end: np.ndarray  # blocking calls by return
    sync_begin: np.ndarray
    short: int
    long: np.ndarray  # rows of duration > short
    span: tuple[int, int]  # first and last start of all
    count: int  # the graph's slices
    sample: np.ndarray  # every `stride`-th start of each lane, sorted: where to cut
    stride: int

    def rank(self, times: np.ndarray) -> np.ndarray:
        """How many of the graph's slices start before each of `times`."""
        out = np.zeros(len(times), I64)
        for starts in self._starts():
            out += np.searchsorted(starts, times, side="left")
        return out

    def every(self, cap: int) -> np.ndarray:
        """About every `cap`-th start, in time order (exact where the stride is 1)."""
        step = max(1, cap // self.stride)
        return self.sample[step::step]

    def _starts(self) -> list[np.ndarray]:
        return _lane_starts(self.cpu, self.gpu)


def _lane_starts(
    cpu: list[tuple[np.ndarray, np.ndarray]], gpu: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
) -> list[np.ndarray]:
    """Each lane's starts of the graph's slices, in time order (CPU threads, then streams)."""
    return [starts for starts, _ends in cpu] + [ts for ts, _run, _q in gpu]


def bounds_of(ctx: Context, cap: int = 0) -> Bounds:
    """The `Bounds` of the graph's rows, lane by lane (the only temporaries are one lane's).
    `cap`: the batch size the cuts will be asked for (`every`), which sets the sample."""
    lane = ctx.lane
    offsets = np.searchsorted(lane, np.arange(int(lane[-1]) + 2 if len(lane) else 1))
    runs: list[tuple[int, int]] = []
    cpu: list[tuple[np.ndarray, np.ndarray]] = []
    gpu: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    launch = ctx.launch
    for a, z in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        if a == z:
            continue
        on_cpu = ctx.cpu[a:z]
        g = np.searchsorted(ctx.gpu_rows, [a, z])
        if g[1] > g[0]:
            k = np.arange(g[0], g[1])
            rows = ctx.gpu_rows[k]
            gts = ctx.ts[rows]
            lts = np.where(launch[k] >= 0, ctx.ts[np.clip(launch[k], 0, None)], gts)
            gpu.append((gts, np.maximum.accumulate(ctx.end[rows]), np.minimum(gts, lts)))
        if on_cpu.any():
            whole = bool(on_cpu.all())  # its starts are a view of the time column
            starts = ctx.ts[a:z] if whole else ctx.ts[a:z][on_cpu]
            ends = ctx.end[a:z] if whole else ctx.end[a:z][on_cpu]
            cpu.append((starts, np.sort(ends)))
        if g[1] > g[0] or on_cpu.any():
            runs.append((a, z))
    by_lane = _lane_starts(cpu, gpu)
    count = sum(len(x) for x in by_lane)
    short, long = _short_and_long(ctx, runs, count)
    s = np.flatnonzero(ctx.is_sync & (ctx.gpu | ctx.cpu))
    order = np.argsort(ctx.end[s], kind="stable")
    span = (min(int(x[0]) for x in by_lane), max(int(x[-1]) for x in by_lane)) if count else (0, 0)
    stride = max(1, cap // (SAMPLES_PER_BATCH * max(1, len(by_lane))))
    sample = np.sort(
        np.concatenate([np.zeros(0, I64), *(x[stride - 1 :: stride] for x in by_lane)])
    )
    edges = np.asarray(runs, I64).reshape(-1, 2)
    run_starts = np.stack([ctx.ts[edges[:, 0]], ctx.ts[edges[:, 1] - 1]], axis=1)
    return Bounds(runs, run_starts, cpu, gpu, ctx.end[s][order], ctx.ts[s][order], short, long,
                  span, count, sample, stride)  # fmt: skip


def _durations(
    ctx: Context, runs: list[tuple[int, int]]
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(rows, durations) of the graph's slices, `CHUNK` rows of a lane at a time."""
    for a, z in runs:
        for c in range(a, z, CHUNK):
            d = min(c + CHUNK, z)
            rows = c + np.flatnonzero(ctx.gpu[c:d] | ctx.cpu[c:d])
            yield rows, ctx.end[rows] - ctx.ts[rows]


def _short_and_long(ctx: Context, runs: list[tuple[int, int]], n: int) -> tuple[int, np.ndarray]:
    """`short`, about the longest duration but the 0.1 % longest of the `n` slices of `runs`
    (any value is right: it only splits the slices between the search by start and the
    `long` list), and the rows longer than it. Found chunk by chunk, never every slice's
    duration at once."""
    if not n:
        return 0, np.zeros(0, I64)
    keep = max(1, int(n * LONG_SHARE))
    tops = [np.zeros(0, I64)]
    for _rows, dur in _durations(ctx, runs):
        if len(dur) > keep:
            dur.partition(len(dur) - keep)
            dur = dur[-keep:]
        tops.append(np.sort(dur)[-keep:])
        if len(tops) > 64:  # the running top `keep`, not one per chunk
            tops = [np.sort(np.concatenate(tops))[-keep:]]
    top = np.sort(np.concatenate(tops))
    short = int(top[-keep])
    long = [rows[dur > short] for rows, dur in _durations(ctx, runs)]
    return short, np.concatenate([np.zeros(0, I64), *long]).astype(I64)


def _earliest(b: Bounds, lo: int, hi: int) -> int:
    """The earliest time the edges into nodes in (lo, hi] come from (see the module doc)."""
    low = lo
    last_before: list[int] = []
    new_thread = False
    for starts, ends in b.cpu:  # its points: the two sorted arrays read as one
        i_s, j_s = np.searchsorted(starts, [lo, hi], side="right").tolist()
        i_e, j_e = np.searchsorted(ends, [lo, hi], side="right").tolist()
        i = i_s + i_e
        inside = j_s + j_e > i
        if i:  # the last point at or before lo
            last = int(starts[i_s - 1]) if i_s else int(ends[i_e - 1])
            last = max(last, int(ends[i_e - 1])) if i_e else last
            last_before.append(last)
            if inside:
                low = min(low, last)
        new_thread |= inside and not i
    if new_thread and last_before:
        low = min(low, *last_before)
    for ts, run, queued in b.gpu:
        i = int(np.searchsorted(ts, lo, side="right"))
        j = int(np.searchsorted(ts, hi, side="right"))
        m = int(run[i - 1]) if i else None
        if m is not None and (j > i or m > lo):
            low = min(low, m)
        if j > i:  # their wait on another stream: whatever ended after they were ready
            q = int(queued[i:j].min())
            low = min(low, q if m is None else max(q, m))
    i, j = np.searchsorted(b.sync_end, [lo, hi], side="right")
    if j > i:
        low = min(low, int(b.sync_begin[i:j].min()))
    return low


def range_rows(ctx: Context, b: Bounds, lo: int, hi: int) -> np.ndarray:
    """The rows of the graph of the range (lo, hi]: the slices overlapping [earliest, hi]
    (`_earliest`), the launch calls of its GPU activities and what their recorded waits
    waited for."""
    low = _earliest(b, lo, hi)
    parts = [np.zeros(0, I64)]
    first, last = b.run_starts[:, 0], b.run_starts[:, 1]
    for k in np.flatnonzero((first <= hi) & (last >= low - b.short)).tolist():
        a, z = b.runs[k]  # the lane's slices starting from low - short to hi
        starts = ctx.ts[a:z]
        i, j = np.searchsorted(starts, low - b.short), np.searchsorted(starts, hi, side="right")
        if j > i:
            r = np.arange(a + i, a + j)
            end = ctx.end[r]
            parts.append(r[(ctx.gpu[r] | ctx.cpu[r]) & (end >= low) & (end - ctx.ts[r] <= b.short)])
    near = np.concatenate(parts)
    long = b.long[(ctx.end[b.long] >= low) & (ctx.ts[b.long] <= hi)]
    keep = np.sort(np.concatenate([near, long]))
    gpu = keep[ctx.gpu[keep]]
    launch = ctx.launch[np.searchsorted(ctx.gpu_rows, gpu)]
    _w, awaited, waiter = ctx.waits
    extra = np.concatenate([launch[launch >= 0], awaited[np.isin(waiter, gpu)]])
    extra = np.unique(extra[position_in(keep, extra) < 0])  # the few calls queued before it
    return np.insert(keep, np.searchsorted(keep, extra), extra).astype(I64)


def batch_cuts(b: Bounds, steps: pd.DataFrame, cap: int) -> list[int]:
    """Batch boundaries over the whole time axis: at step starts where they can be, each
    batch starting at most `cap` slices' worth, at least one step."""
    if not b.count:
        return []
    start = steps["start_ns"].to_numpy(dtype=I64)
    stop = steps["end_ns"].to_numpy(dtype=I64)
    first = min(b.span[0], int(start.min()) if len(start) else b.span[0])
    last = max(b.span[1], int(stop.max()) if len(stop) else b.span[1]) + 1
    fill = b.every(cap)  # where no step is: cut every `cap` slices
    s, e = merge_intervals(start, stop)
    k = np.searchsorted(s, fill, side="right") - 1
    inside = (k >= 0) & (fill < e[np.clip(k, 0, None)]) if len(s) else np.zeros(len(fill), bool)
    cand = np.unique(np.concatenate([[first, last], start, fill[~inside]]))
    count = np.diff(b.rank(cand))
    cuts = [int(cand[0])]
    held = 0
    for c, n in zip(cand[:-1].tolist(), count.tolist(), strict=True):
        if held and held + n > cap:  # [c, next) would overflow this batch: it starts the next
            cuts.append(c)
            held = 0
        held += n
    cuts.append(int(cand[-1]))
    return cuts


@dataclass
class _Batch:
    lo: int
    hi: int
    steps: pd.DataFrame
    typical: float
    ties: np.ndarray  # lengths of non-binding launches into nodes the walks read
    links: list[StepLinks]
    which: np.ndarray  # positions of its steps in the steps asked for


def _walk(tl: Timeline, ctx: Context, rows: np.ndarray, steps: pd.DataFrame,
          typical: float | None) -> tuple[Graph, list[StepLinks], np.ndarray]:  # fmt: skip
    graph = build(tl, ctx, rows, typical)
    nodes = StepNodes.of(tl, graph, steps)
    t, via = graph.replay()
    paths = step_paths(graph, nodes, t, via)
    is_launch = np.flatnonzero(graph.etype == LAUNCH)
    into = np.full(len(graph.time), -1, I64)
    into[graph.dst[is_launch]] = is_launch
    read = np.concatenate([np.zeros(0, I64), *(graph.dst[p.edges] for p in paths)])
    e = into[read]
    e = e[(e >= 0) & (graph.binding[read] != e)]
    return graph, links_of(graph, paths), graph.measured[e]


@dataclass(frozen=True)
class Walked:
    """Every step's measured path (`StepLinks`) and the trace's typical launch latency (the
    median binding launch delay of the whole trace), which a what-if replays with
    (`replay_batched`)."""

    links: list[StepLinks]
    typical: float


def ranges(
    ctx: Context, bounds: Bounds, steps: pd.DataFrame, cap: int
) -> list[tuple[int, int, int, int, np.ndarray]]:
    """Per batch, in time order: (a, z, lo, hi, mine): it owns the activities starting in
    [a, z), its graph's range is (lo, hi] and `mine` marks the steps starting in it. The
    ranges cover the time axis from the first slice on."""
    cuts = batch_cuts(bounds, steps, cap)
    start = steps["start_ns"].to_numpy(dtype=I64)
    stop = steps["end_ns"].to_numpy(dtype=I64)
    out = []
    for a, z in itertools.pairwise(cuts):
        mine = (start >= a) & (start < z)
        hi = max(z - 1, int(stop[mine].max()) if mine.any() else z - 1)
        out.append((a, z, a - 1, hi, mine))
    return out


def cap_of(batch_bytes: int | None) -> int:
    """The most slices a batch holds under `batch_bytes` (default `BATCH_BYTES`)."""
    return max(1, (BATCH_BYTES if batch_bytes is None else batch_bytes) // BYTES_PER_SLICE)


def step_links(
    tl: Timeline, steps: pd.DataFrame, batch_bytes: int | None = None
) -> list[StepLinks]:
    """The measured path of each of `steps` (step, row, start_ns, end_ns: `walk.steps_of`),
    in their order, walked batch by batch (see the module doc): the same links as a walk on
    the whole trace's graph."""
    return walked(tl, steps, batch_bytes).links


def walked(tl: Timeline, steps: pd.DataFrame, batch_bytes: int | None = None) -> Walked:
    """`step_links` and the trace's typical launch latency (`Walked`)."""
    if not len(steps):
        return Walked([], 0.0)
    steps = steps.reset_index(drop=True)
    ctx = context(tl)
    if (steps["row"].to_numpy() < 0).any():  # the whole recording as one step
        graph, links, _ = _walk(tl, ctx, ctx.rows, steps, None)
        ctx.give_back(tl)
        return Walked(links, graph.typical)
    cap = cap_of(batch_bytes)
    bounds = bounds_of(ctx, cap)
    # the context and bounds hold what the walks read of every slice: the columns' pages
    # read to make them go back, and so do those a batch reads (`mapped_pages`)
    ctx.give_back(tl)
    owned: list[np.ndarray] = []
    batches: list[_Batch] = []
    for a, z, lo, hi, mine in ranges(ctx, bounds, steps, cap):
        sub = range_rows(ctx, bounds, lo, hi)
        graph, links, ties = _walk(tl, ctx, sub, steps[mine], None)
        # the binding launches of the activities starting in [a, z): counted once, here
        g = np.flatnonzero(ctx.gpu[sub] & (ctx.ts[sub] >= a) & (ctx.ts[sub] < z))
        bind = graph.binding[2 * g]
        bind = bind[bind >= 0]
        owned.append(graph.measured[bind[graph.etype[bind] == LAUNCH]])
        if mine.any():
            batches.append(_Batch(lo, hi, steps[mine], graph.typical, ties, links,
                                  np.flatnonzero(mine)))  # fmt: skip
        del graph
        ctx.give_back(tl)
    every = np.concatenate(owned) if owned else np.zeros(0, I64)
    typical = float(np.median(every)) if len(every) else 0.0
    out: list[StepLinks | None] = [None] * len(steps)
    for b in batches:
        if ((b.ties <= b.typical) != (b.ties <= typical)).any():
            sub = range_rows(ctx, bounds, b.lo, b.hi)
            _graph, b.links, _ = _walk(tl, ctx, sub, b.steps, typical)
            ctx.give_back(tl)
        for i, one in zip(b.which.tolist(), b.links, strict=True):
            out[i] = one
    ctx.give_back(tl)
    return Walked([links for links in out if links is not None], typical)


__all__ = [
    "BATCH_BYTES", "Bounds", "Walked", "batch_cuts", "bounds_of", "cap_of", "range_rows", "ranges",
    "step_links", "walked",
]  # fmt: skip
