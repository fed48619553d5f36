"""The what-if replayed batch by batch (`replay_batched`) is the whole trace's graph's, exactly.

Every real sample with steps, its real steps and ~300 made-up ones (`test_batched`'s), every
kind of edit, batches of the default size, of 300 slices and (on the small samples) of one
slice: each step's predicted time and path (times, lengths, categories, names' rows) equal a
replay of the whole trace's graph (`build_graph`, `edited_weights`, `replay`), and so does
every node's replayed time. Skips cleanly where the samples are absent."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch import remembered
from perfview.core.analysis.torch.critical_path import batched, replay_batched, walk, what_if
from perfview.core.analysis.torch.critical_path.context import context
from perfview.core.analysis.torch.critical_path.graph import build_graph
from perfview.core.model import Timeline
from tests.core.analysis.torch.critical_path.test_batched import (
    BEFORE,
    _assert_same,
    _made_up_steps,
    _timeline,
)

EDITS: tuple[list[str], ...] = (
    ["kernel:*=0.5"], ["kernel:nccl*=0"], ["memcpy:*=0"], ["cpu:aten::*=0.5"],
    ["category:cpu_op=0.3"], ["comm=0.5"], ["data=0"], ["launch=2"], ["idle=0"], ["all=0.5"],
    ["sync:remove"], ["sync:cudaStreamSynchronize=remove"], ["overlap:comm"],
    ["sync:remove", "cpu:*=0.2", "overlap:comm"], [],
)  # fmt: skip
FEW = (["kernel:*=0.5"], ["sync:remove", "cpu:*=0.2"], ["all=0.5"], ["overlap:comm"])
SMALL = (
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_gpu/tracelens_torch_compile_triton_mi300x.json.gz",
    "odd/hta_large_integer_rank-70.pt.trace.json.gz",
)
SLICES = batched.BYTES_PER_SLICE


def _whole(
    tl: Timeline, steps: pd.DataFrame, edits: list[what_if.Edit]
) -> tuple[np.ndarray, list[walk.StepLinks]]:
    """The reference: the whole trace's graph replayed under `edits`."""
    graph = build_graph(tl)
    nodes = walk.StepNodes.of(tl, graph, steps)
    t, via = graph.replay(what_if.edited_weights(tl, graph, edits))
    return t, walk.links_of(graph, walk.step_paths(graph, nodes, t, via))


def _check(tl: Timeline, steps: pd.DataFrame, texts: list[str], budget: int | None) -> None:
    edits = what_if.parse_edits(texts)
    want_t, want = _whole(tl, steps, edits)
    hits = what_if.edit_hits(tl, edits)
    carried, _steps, got = replay_batched.replayed(
        tl, lambda g: what_if.edited_weights(tl, g, edits, hits), budget, steps
    )
    _assert_same(got, want)
    if len(steps):  # without steps nothing is replayed (nothing is asked)
        assert np.array_equal(carried.t, want_t), texts


@pytest.mark.parametrize("rel", sorted(BEFORE))
def test_every_edit_replays_as_the_whole_graph(rel: str) -> None:
    tl = _timeline(rel)
    for texts in EDITS:
        _check(tl, walk.steps_of(tl), texts, None)
        _check(tl, walk.steps_of(tl), texts, 300 * SLICES)


@pytest.mark.parametrize("rel", sorted(BEFORE))
def test_made_up_steps_replay_as_the_whole_graph(rel: str) -> None:
    tl = _timeline(rel)
    steps = _made_up_steps(tl)
    for texts in FEW:
        for budget in (None, 300 * SLICES, 3000 * SLICES):
            _check(tl, steps, texts, budget)


@pytest.mark.parametrize("rel", SMALL)
def test_batches_of_one_slice(rel: str) -> None:
    tl = _timeline(rel)
    for steps in (walk.steps_of(tl), _made_up_steps(tl)):
        for texts in EDITS:
            _check(tl, steps, texts, 1)


def test_only_what_a_later_step_may_walk_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The binding edges carried between batches are those of nodes replayed after a lower
    bound on the later steps' starts: about one step's nodes (6 steps here), not the trace's."""
    tl = _timeline("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    edits = what_if.parse_edits(["sync:remove"])
    sizes: list[int] = []
    original = replay_batched.Carried.replay

    def replay(self: replay_batched.Carried, *args: object) -> None:
        original(self, *args)  # type: ignore[arg-type]
        sizes.append(len(self.nodes))

    monkeypatch.setattr(replay_batched.Carried, "replay", replay)
    carried, _s, links = replay_batched.replayed(
        tl, lambda g: what_if.edited_weights(tl, g, edits), 3000 * SLICES
    )
    assert len(links) == 6
    assert len(sizes) > 10
    assert max(sizes) < 0.25 * len(carried.t)


def test_the_table_and_timeline_are_the_whole_graphs() -> None:
    """`predict` (what the CLI and the page call) against the whole graph's replay."""
    tl = _timeline("kineto_gpu/hta_nccl_data.json.gz")
    edits = what_if.parse_edits(["sync:remove", "kernel:*=0.5"])
    pred = what_if.predict(tl, edits, 300 * SLICES)
    t, want = _whole(tl, walk.steps_of(tl), edits)
    table = pred.table()
    assert table["predicted_ns"].tolist() == [round(p.end - p.start) for p in want]
    measured = _whole(tl, walk.steps_of(tl), [])[1]
    assert table["measured_ns"].tolist() == [round(p.end - p.start) for p in measured]
    graph = build_graph(tl)
    step = int(table["step"].to_numpy()[1])
    frame = pred.timeline(tl, step)
    assert np.array_equal(
        frame["row"].to_numpy(), graph.rows[np.searchsorted(graph.rows, frame["row"])]
    )
    pos = np.searchsorted(graph.rows, frame["row"].to_numpy())
    assert np.array_equal(
        frame["predicted_start_ns"].to_numpy(), np.rint(t[2 * pos]).astype(np.int64)
    )
    assert np.array_equal(
        frame["predicted_end_ns"].to_numpy(), np.rint(t[2 * pos + 1]).astype(np.int64)
    )
    assert len(frame) > 100


def test_the_whole_graph_where_it_fits_what_the_pages_remember(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """By default a trace whose graph fits `remembered.BUDGET` is replayed on its whole graph
    (kept: the next edit costs a replay); one that does not, batch by batch, alike."""
    tl = _timeline("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    slices = len(context(tl).rows)
    assert replay_batched.fits_whole(slices)
    built: list[int] = []
    original = replay_batched.Carried.replay

    def replay(self: replay_batched.Carried, *args: object) -> None:
        built.append(1)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(replay_batched.Carried, "replay", replay)
    monkeypatch.setattr(batched, "BATCH_BYTES", 3000 * SLICES)  # many batches, were it batched
    _check(tl, walk.steps_of(tl), ["sync:remove"], None)
    assert built == [1]  # one replay: the whole graph
    monkeypatch.setattr(remembered, "BUDGET", slices * SLICES - 1)
    assert not replay_batched.fits_whole(slices)
    built.clear()
    _check(tl, walk.steps_of(tl), ["sync:remove"], None)
    assert len(built) > 10  # batch by batch, the same times and paths
