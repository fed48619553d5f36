"""The idle-gap causes read off batches of steps' graphs are the whole trace's, exactly.

Every real sample with GPU work: `idle_gaps` (each gap's cause and detail, read off the graph
of the batch its next activity starts in) equals the same gaps labelled on the whole trace's
graph, for the real steps and ~300 made-up ones, in batches of every size down to one slice;
and the Critical path page's chart (`cause_totals`) keeps the totals measured before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch.critical_path import batched, idle_gaps
from tests.core.analysis.torch.critical_path.test_batched import GPU, _made_up_steps, _timeline

SAMPLES = (
    *GPU,
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_gpu/tracelens_torch_compile_triton_mi300x.json.gz",
    "odd/hta_large_integer_rank-70.pt.trace.json.gz",
    "kineto_cpu/dtu_jc_resnet18_cpu_trace.json",
)
BUDGETS = (None, 1, 300 * batched.BYTES_PER_SLICE, 3000 * batched.BYTES_PER_SLICE)
# per sample, the chart's rows and its total ns per cause, measured on the whole trace's graph
BEFORE: dict[str, tuple[int, dict[str, int]]] = {
    "kineto_gpu/hta_nccl_data.json.gz": (
        6,
        {
            "cpu op": 987216151,
            "launch latency": 33698309,
            "sync drain": 0,
            "data loader": 0,
            "collective": 1487875,
            "another stream": 116212166,
            "unknown": 30410339,
        },
    ),
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz": (
        6,
        {
            "cpu op": 145191000,
            "launch latency": 29365000,
            "sync drain": 2371000,
            "data loader": 284407000,
            "collective": 0,
            "another stream": 0,
            "unknown": 0,
        },
    ),
    "kineto_gpu/hta_sampled_rank-0.json.gz": (
        10,
        {
            "cpu op": 1615081000,
            "launch latency": 450174000,
            "sync drain": 3000,
            "data loader": 0,
            "collective": 243162000,
            "another stream": 2500485000,
            "unknown": 734451000,
        },
    ),
    "kineto_gpu/hta_mi250_rocm6.2.json.gz": (
        2,
        {
            "cpu op": 1821596,
            "launch latency": 6759454,
            "sync drain": 448562,
            "data loader": 0,
            "collective": 0,
            "another stream": 0,
            "unknown": 158710,
        },
    ),
    "kineto_gpu/tracelens_torch_compile_triton_mi300x.json.gz": (
        1,
        {
            "cpu op": 220207,
            "launch latency": 26766,
            "sync drain": 0,
            "data loader": 0,
            "collective": 0,
            "another stream": 0,
            "unknown": 143999,
        },
    ),
    "odd/hta_large_integer_rank-70.pt.trace.json.gz": (
        1,
        {
            "cpu op": 0,
            "launch latency": 0,
            "sync drain": 0,
            "data loader": 0,
            "collective": 0,
            "another stream": 0,
            "unknown": 150000,
        },
    ),
}


@pytest.mark.parametrize("rel", SAMPLES)
@pytest.mark.parametrize("budget", BUDGETS)
def test_batched_gaps_are_the_whole_graphs(rel: str, budget: int | None) -> None:
    tl = _timeline(rel)
    want = idle_gaps.whole_idle_gaps(tl)
    pd.testing.assert_frame_equal(idle_gaps.idle_gaps(tl, budget), want)


@pytest.mark.parametrize("rel", GPU)
def test_made_up_steps_gaps_are_the_whole_graphs(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """~300 CPU slices and every blocking call as steps: windows everywhere in the trace."""
    tl = _timeline(rel)
    steps = _made_up_steps(tl)
    monkeypatch.setattr(idle_gaps, "steps_of", lambda _tl: steps)
    want = idle_gaps.whole_idle_gaps(tl)
    assert len(want) > 100
    for budget in (1, 300 * batched.BYTES_PER_SLICE, 3000 * batched.BYTES_PER_SLICE):
        pd.testing.assert_frame_equal(idle_gaps.idle_gaps(tl, budget), want)


@pytest.mark.parametrize("rel", sorted(BEFORE))
def test_chart_totals_are_the_ones_before(rel: str) -> None:
    tl = _timeline(rel)
    rows, totals = BEFORE[rel]
    got = idle_gaps.cause_totals(tl)
    assert len(got) == rows
    assert {c: int(got[c].sum()) for c in idle_gaps.CAUSES} == totals
    assert np.all(got[list(idle_gaps.CAUSES)].to_numpy() >= 0)
