"""The critical path walked batch by batch (`batched`) is the whole trace's, exactly.

Every real sample: each step's links (times, lengths, categories, names' rows) equal a walk on
the whole trace's graph, for the real steps (or a step-less recording's stand-ins) and for a few
hundred made-up steps (top-level and nested CPU slices), in batches of every size; every node
inside a batch's range keeps the binding edge it has in the whole graph; the pages' figures are
the ones measured before the graph was batched. Skips cleanly where the samples are absent."""

from __future__ import annotations

import itertools
import mmap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch.critical_path import batched, path, walk
from perfview.core.analysis.torch.critical_path import context as context_module
from perfview.core.analysis.torch.critical_path.context import context
from perfview.core.analysis.torch.critical_path.graph import Graph, build, build_graph
from perfview.core.model import Timeline
from perfview.loaders import load
from tests.conftest import SAMPLES

# per sample, measured before the graph was batched (whole-trace graph): segments on the
# track, their total ns, rows of the breakdown, and the steps table (step, step_ns, path_ns,
# bound_by, bound_pct)
BEFORE = {
    "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json": (
        959,
        225218000,
        35,
        [[1, 225218000, 225218000, "cpu_op", 100.0]],
    ),
    "kineto_cpu/dtu_jc_resnet18_cpu_trace.json": (
        929,
        479493000,
        34,
        [[1, 479493000, 479493000, "cpu_op", 100.0]],
    ),
    "kineto_cpu/hta_cpu_only_rank-34.pt.trace.json.gz": (
        4,
        210109162,
        2,
        [[551, 210109162, 210109162, "cpu_op", 82.437963]],
    ),
    "kineto_gpu/hta_mi250_rocm6.2.json.gz": (
        188,
        9337364,
        53,
        [[1, 9288291, 9288291, "cpu_op", 97.281211], [2, 49073, 49073, "cpu_op", 100.0]],
    ),
    "kineto_gpu/hta_nccl_data.json.gz": (
        46186,
        667105339,
        348,
        [
            [4, 222442191, 222442191, "cpu_op", 99.041009],
            [5, 219726905, 219726905, "cpu_op", 99.05364],
            [6, 224936243, 224936243, "cpu_op", 99.016956],
        ],
    ),
    "kineto_gpu/hta_sampled_rank-0.json.gz": (
        6943,
        1230240000,
        392,
        [
            [551, 607312000, 607312000, "cpu_op", 97.970236],
            [552, 622928000, 622928000, "cpu_op", 97.956425],
        ],
    ),
    "kineto_gpu/hta_sampled_rank-1.json.gz": (
        6799,
        1238543000,
        367,
        [
            [551, 607904000, 607904000, "cpu_op", 97.911019],
            [552, 630639000, 630639000, "cpu_op", 98.083373],
        ],
    ),
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz": (
        70164,
        1048976000,
        594,
        [
            [5, 176078000, 176078000, "cpu_op", 59.657652],
            [6, 173992000, 173992000, "cpu_op", 59.085475],
            [7, 176918000, 176918000, "cpu_op", 57.121943],
            [8, 181259000, 181259000, "cpu_op", 59.295814],
            [9, 176468000, 176468000, "cpu_op", 58.530158],
            [10, 164261000, 164261000, "cpu_op", 60.537803],
        ],
    ),
    "kineto_gpu/tracelens_torch_compile_triton_mi300x.json.gz": (
        54,
        12939993,
        23,
        [[1, 12939993, 12939993, "kernel", 96.38295]],
    ),
    "kineto_gpu/zoology_trace.json": (
        2641,
        12478000,
        47,
        [[1, 12478000, 12478000, "cpu_op", 100.0]],
    ),
    "odd/hta_large_integer_rank-70.pt.trace.json.gz": (
        1,
        50000,
        1,
        [[1, 50000, 50000, "communication", 100.0]],
    ),
    "ranks/hta_sampled_2of128/rank-0.json.gz": (
        6943,
        1230240000,
        392,
        [
            [551, 607312000, 607312000, "cpu_op", 97.970236],
            [552, 622928000, 622928000, "cpu_op", 97.956425],
        ],
    ),
    "ranks/hta_sampled_2of128/rank-1.json.gz": (
        6799,
        1238543000,
        367,
        [
            [551, 607904000, 607904000, "cpu_op", 97.911019],
            [552, 630639000, 630639000, "cpu_op", 98.083373],
        ],
    ),
}
GPU = (
    "kineto_gpu/hta_nccl_data.json.gz",
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz",
    "kineto_gpu/hta_sampled_rank-0.json.gz",
)


def _timeline(rel: str) -> Timeline:
    if not (SAMPLES / rel).exists():
        pytest.skip(f"real samples folder {SAMPLES} is absent")
    tl = load(Path(SAMPLES / rel)).timeline
    assert tl is not None
    return tl


def _whole(tl: Timeline, steps: pd.DataFrame) -> list[walk.StepLinks]:
    """The reference: the steps walked on the whole trace's graph."""
    graph = build_graph(tl)
    nodes = walk.StepNodes.of(tl, graph, steps)
    t, via = graph.replay()
    return walk.links_of(graph, walk.step_paths(graph, nodes, t, via))


def _made_up_steps(tl: Timeline) -> pd.DataFrame:
    """~300 CPU slices of depth 0 and 1 as steps (windows cut everywhere in the trace), and
    every blocking call (their paths run back along the GPU streams they waited for)."""
    ev = tl.events
    ctx = context(tl)
    cpu = ctx.cpu & (ctx.end > ctx.ts)
    rows = np.flatnonzero(cpu & (ev["depth"].to_numpy() <= 1))
    rows = np.union1d(rows[:: max(1, len(rows) // 300)], np.flatnonzero(cpu & ctx.is_sync))
    return pd.DataFrame({"step": np.arange(len(rows)), "row": rows, "start_ns": ctx.ts[rows],
                         "end_ns": ctx.end[rows]})  # fmt: skip


def _assert_same(got: list[walk.StepLinks], want: list[walk.StepLinks]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert (a.step, a.start, a.end) == (b.step, b.start, b.end)
        for field in ("begin_ns", "end_ns", "ns", "category", "label", "etype"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), (a.step, field)


@pytest.mark.parametrize("rel", sorted(BEFORE))
def test_pages_figures_are_the_ones_before(rel: str) -> None:
    tl = _timeline(rel)
    segments, segment_ns, table_rows, steps = BEFORE[rel]
    seg = path.path_segments(tl)
    assert len(seg) == segments
    assert int((seg["end_ns"] - seg["start_ns"]).sum()) == segment_ns
    assert len(path.critical_path_table(tl)) == table_rows
    st = path.steps_table(tl)
    got = [[int(r["step"]), int(r["step_ns"]), int(r["path_ns"]), r["bound_by"],
            round(float(r["bound_pct"]), 6)] for r in st.to_dict("records")]  # fmt: skip
    assert got == steps


@pytest.mark.parametrize("rel", sorted(BEFORE))
def test_batches_walk_the_whole_graphs_paths(rel: str) -> None:
    tl = _timeline(rel)
    for steps in (walk.steps_of(tl), _made_up_steps(tl)):
        want = _whole(tl, steps)
        for budget in (None, 300 * batched.BYTES_PER_SLICE, 3000 * batched.BYTES_PER_SLICE):
            _assert_same(batched.step_links(tl, steps, budget), want)


def test_a_huge_traces_context_on_disk_walks_the_same_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A context over `SPILL_BYTES` lies in a read-only file map (`mapped_pages.on_disk`),
    its pages given back after each batch: the same paths as the context in memory."""
    tl = _timeline("kineto_gpu/hta_nccl_data.json.gz")
    steps = _made_up_steps(tl)
    want = batched.step_links(tl, steps, 3000 * batched.BYTES_PER_SLICE)
    monkeypatch.setattr(context_module, "SPILL_BYTES", 0)
    ctx = context(tl)
    for arr in (ctx.gpu, ctx.cpu, ctx.end, ctx.is_sync, ctx.loader, ctx.copy):
        assert not arr.flags.writeable
        assert isinstance(arr.base.obj, mmap.mmap)  # a memoryview of the map
    assert np.array_equal(ctx.end, tl.events["ts"].to_numpy() + tl.events["dur"].to_numpy())
    _assert_same(batched.step_links(tl, steps, 3000 * batched.BYTES_PER_SLICE), want)


def test_a_step_bigger_than_the_budget_is_walked_alone() -> None:
    tl = _timeline("kineto_gpu/hta_mi250_rocm6.2.json.gz")
    steps = walk.steps_of(tl)
    assert len(steps) == 2
    _assert_same(batched.step_links(tl, steps, 1), _whole(tl, steps))


def _via(graph: Graph, nodes: np.ndarray, via: np.ndarray) -> np.ndarray:
    """Each node's replayed binding edge, by what it is: its source's row and end (-1: the
    root), its type and its label."""
    e = via[nodes]
    src = graph.src[np.clip(e, 0, None)]
    root = src == graph.root
    row = np.where(root, -1, graph.rows[np.clip(src // 2, 0, len(graph.rows) - 1)])
    has = e >= 0
    etype, label = np.where(has, graph.etype[e], -2), np.where(has, graph.label[e], -2)
    return np.stack([np.where(has, row, -2), np.where(root, 0, src % 2), etype, label])


@pytest.mark.parametrize("rel", GPU)
def test_every_node_of_a_batch_keeps_its_binding_edge(rel: str) -> None:
    """Ranges cut every 97 slices: each node inside one is entered, in the batch's graph, by
    the same edge as in the whole graph (with the trace's typical launch latency)."""
    tl = _timeline(rel)
    whole = build_graph(tl)
    _t, whole_via = whole.replay()
    ctx = context(tl)
    rows = ctx.rows
    bounds = batched.bounds_of(ctx, 97)
    cuts = batched.batch_cuts(bounds, walk.steps_of(tl).iloc[:0], 97)
    assert len(cuts) > 40
    smaller = 0
    for a, z in itertools.pairwise(cuts):
        sub = batched.range_rows(ctx, bounds, a - 1, z - 1)
        smaller += len(sub) < len(rows) // 2
        graph = build(tl, ctx, sub, whole.typical)
        _t, via = graph.replay()
        inside = np.flatnonzero((graph.time[:-1] >= a) & (graph.time[:-1] < z))
        same = 2 * np.searchsorted(whole.rows, graph.rows[inside // 2]) + inside % 2
        assert np.array_equal(_via(graph, inside, via), _via(whole, same, whole_via)), (a, z)
    assert smaller > len(cuts) // 2  # the batches' graphs are parts of the trace


def test_a_batch_walked_with_another_median_is_walked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each batch walks first with its own typical launch latency; where that differs from the
    trace's for a launch its walk read, it walks again: here every first walk uses 1e18 ns."""
    tl = _timeline("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    steps = _made_up_steps(tl)
    real = batched._walk
    again = []

    def first_with_zero(tl: Timeline, ctx: object, rows: np.ndarray, steps: pd.DataFrame,
                        typical: float | None) -> object:  # fmt: skip
        again.append(typical is not None)
        return real(tl, ctx, rows, steps, 1e18 if typical is None else typical)  # type: ignore[arg-type]

    monkeypatch.setattr(batched, "_walk", first_with_zero)
    _assert_same(batched.step_links(tl, steps, 3000 * batched.BYTES_PER_SLICE), _whole(tl, steps))
    assert any(again)


@pytest.mark.parametrize("rel", GPU)
def test_the_bounds_read_the_time_column_and_keep_no_array_of_every_slice(rel: str) -> None:
    """`bounds_of` works lane by lane: a CPU thread's starts are the time column itself (the
    events are sorted by lane, then start), and what it keeps beside them (the ends, the GPU
    streams' arrays, the long slices, the sample where to cut) is ~8 bytes a CPU slice and 16
    a GPU activity (an array of every slice by start and each thread's points kept 32 a
    slice); its ranks and cuts are those of an array of every start."""
    tl = _timeline(rel)
    ctx = context(tl)
    rows = ctx.rows
    cap = 500
    bounds = batched.bounds_of(ctx, cap)
    assert any(np.shares_memory(starts, ctx.ts) for starts, _ends in bounds.cpu)
    kept = [ends for _s, ends in bounds.cpu] + [a for trio in bounds.gpu for a in trio[1:]]
    kept += [bounds.long, bounds.sample] + [s for s, _e in bounds.cpu if s.base is None]
    assert sum(a.nbytes for a in kept) < 12 * len(rows)
    starts = np.sort(ctx.ts[rows])
    assert bounds.count == len(rows)
    assert bounds.span == (int(starts[0]), int(starts[-1]))
    times = starts[:: max(1, len(starts) // 50)] + 1
    assert np.array_equal(bounds.rank(times), np.searchsorted(starts, times, side="left"))
    every = bounds.every(cap)
    ranks = np.searchsorted(starts, every, side="left")
    assert len(every) >= len(starts) // cap - 1
    assert (np.diff(ranks) <= cap + cap // 4 + 1).all()  # about `cap` slices apart


def test_each_gpu_activity_is_launched_by_the_first_call_with_its_correlation_id() -> None:
    """`context._launches` by sorting: the first runtime call (by row) with the activity's id,
    -1 for an id no call has or a negative one; the same as a pandas index lookup."""
    from perfview.core.analysis.torch.critical_path.context import _launches

    rng = np.random.default_rng(7)
    corr = rng.integers(-2, 400, 5000)
    runtime = np.sort(rng.choice(5000, 1500, replace=False))
    gpu_rows = np.setdiff1d(np.arange(5000), runtime)[::3]
    by_corr = pd.Series(runtime, index=corr[runtime])
    by_corr = by_corr[~by_corr.index.duplicated(keep="first")]
    want = by_corr.reindex(corr[gpu_rows]).fillna(-1).to_numpy(dtype=np.int64)
    want[corr[gpu_rows] < 0] = -1
    got = _launches(corr, runtime, gpu_rows)
    assert np.array_equal(got, want)
    assert (got >= 0).any()
    assert (got == -1).any()
    assert (_launches(corr, runtime[:0], gpu_rows) == -1).all()
