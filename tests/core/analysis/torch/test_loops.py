"""The eager-PyTorch rules (Python loops, unfused chains, host syncs) on recorded demo traces.

tests/data/demos/ holds each bundled demo recorded slow and fixed
(scripts/fixtures/record_demo_fixtures.py); the slow form must trigger its rule and the fixed
form none. The sync rule is checked against a real A100 trace with the numbers recomputed from
its JSON.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from perfview.core.analysis.torch import loops, recommend
from perfview.core.analysis.torch.common import step_rows
from perfview.core.model import Timeline
from perfview.loaders import load
from tests.conftest import DATA
from tests.core.analysis.torch._raw import NCCL, events, ns, timeline
from tests.core.analysis.torch._synthetic import make

DEMOS = DATA / "demos"


@cache
def demo(name: str) -> Timeline:
    tl = load(Path(DEMOS / f"{name}.pt.trace.json.gz")).timeline
    assert tl is not None
    return tl


def _names(tl: Timeline, rows: Any) -> list[str]:
    return [str(tl.events["name"].iat[r]) for r in rows]


def test_pairwise_loop_fires_with_pattern_and_frame() -> None:
    tl = demo("pairwise-loop-slow")
    found = loops.python_loop(tl)
    assert found is not None
    # 20 x 25 pairs, 9 top-level operators each (+ the torch.empty before the loop)
    assert found.value == 20 * 25 * 9 + 1
    assert (
        "9-operator pattern aten::select → aten::select → aten::sub → aten::pow" in found.evidence
    )
    assert "about 500 repetitions" in found.evidence
    assert found.where == "Python function pairwise_loop.py(25): distances_loop"
    kinds = [str(tl.events["kind"].iat[r]) for r in found.rows[:2]]
    assert kinds == ["python", "cpu_op"]  # the frame first (zoom target), then the operators
    assert _names(tl, found.rows[1:3]) == ["aten::empty", "aten::select"]
    assert len(found.rows) == 1 + loops.MAX_ROWS


def test_broadcast_form_has_no_findings() -> None:
    assert loops.python_loop(demo("pairwise-loop-fixed")) is None
    assert recommend.recommendations(demo("pairwise-loop-fixed")) == []


def test_unfused_chain_fires_on_eager_gelu() -> None:
    tl = demo("elementwise-chain-slow")
    found = loops.unfused_chains(tl)
    assert found is not None
    assert len(found.rows) == 9 * 20  # 20 calls of a 9-operator chain, recorded in one step
    assert set(_names(tl, found.rows)) == {"aten::mul", "aten::add", "aten::tanh"}
    assert "on [256, 1024]" in found.evidence
    assert "(repeated 20× back to back)" in found.evidence
    dur = tl.events["dur"].to_numpy()
    step = step_rows(tl).iloc[0]
    assert found.value == pytest.approx(dur[list(found.rows)].sum() * 100 / step["dur_ns"])
    assert loops.python_loop(tl) is None  # 180 operators: not thousands


def test_compiled_form_has_no_findings() -> None:
    assert recommend.recommendations(demo("elementwise-chain-fixed")) == []


def test_dataloader_demo() -> None:
    slow = {f.title: f for f in recommend.recommendations(demo("slow-dataloader-slow"))}
    assert list(slow) == ["Steps are input (DataLoader) bound"]
    loader = slow["Steps are input (DataLoader) bound"]
    names = _names(demo("slow-dataloader-slow"), loader.rows)
    assert len(names) == 3
    assert all(n.startswith("enumerate(DataLoader)") for n in names)
    assert recommend.recommendations(demo("slow-dataloader-fixed")) == []


def test_host_syncs_on_a100_trace_match_the_json() -> None:
    found = loops.host_syncs(timeline(NCCL))
    assert found is not None
    raw = events(NCCL)
    steps = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in raw
             if str(e["name"]).startswith("ProfilerStep#")]  # fmt: skip
    gpu = sorted(ns(e["ts"]) for e in raw
                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))  # fmt: skip
    syncs = [e for e in raw if e.get("cat") == "cuda_runtime"
             and e["name"] in ("cudaEventSynchronize", "cudaStreamSynchronize",
                               "cudaDeviceSynchronize", "cudaMemcpy")
             and any(a <= ns(e["ts"]) < b for a, b in steps)]  # fmt: skip
    idle = 0
    for e in syncs:
        end = ns(e["ts"]) + ns(e["dur"])
        later = [t for t in gpu if t >= end]
        idle += later[0] - end if later else 0
    window = max(b for _, b in steps) - min(a for a, _ in steps)
    assert len(syncs) == 24
    assert f"{len(syncs)} host–device synchronisations" in found.evidence
    assert found.value == pytest.approx(idle * 100 / window, rel=1e-3)
    assert len(found.rows) == 24


def test_sync_with_busy_gpu_does_not_fire() -> None:
    rows = [
        (0, 1000, "ProfilerStep#1", "annotation", 0, -1, -1, 1),
        (10, 300, "aten::item", "cpu_op", 0, 0, -1, 2),
        (20, 280, "cudaStreamSynchronize", "runtime", 0, 1, -1, 2),
        (0, 300, "kernel_a", "kernel", 1, -1, -1, 2),
        (301, 690, "kernel_b", "kernel", 1, -1, -1, 2),
    ]
    assert loops.host_syncs(make(rows)) is None
    idle = [*rows[:3], (0, 300, "kernel_a", "kernel", 1, -1, -1, 2),
            (700, 290, "kernel_b", "kernel", 1, -1, -1, 2)]  # fmt: skip
    found = loops.host_syncs(make(idle))
    assert found is not None
    assert found.value == pytest.approx(40.0)
    assert "aten::item ×1" in found.evidence


def test_cpu_sample_has_no_loop_findings() -> None:
    from tests.core.analysis.torch._raw import CPU_MEM

    tl = timeline(CPU_MEM)
    assert loops.python_loop(tl) is None
    assert loops.unfused_chains(tl) is None


def test_dataloader_rule_without_steps_uses_the_recording() -> None:
    rows = [
        (0, 400, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "annotation",
         0, -1, -1, 1),
        (400, 500, "aten::mm", "cpu_op", 0, -1, -1, 2),
    ]  # fmt: skip
    found = recommend.dataloader_bound(make(rows))
    assert found is not None
    assert found.value == pytest.approx(400 * 100 / 900)  # the span 0-900 ns is the step
    assert found.rows == (0,)


def test_unfused_chain_on_gpu_counts_kernels_and_gaps() -> None:
    rows = [(0, 1000, "ProfilerStep#1", "annotation", 0, -1, -1, 1)]
    for i, op in enumerate(("aten::mul", "aten::add", "aten::tanh", "aten::mul")):
        t = 10 + 200 * i
        op_row = len(rows)
        rows += [
            (t, 150, op, "cpu_op", 0, 0, -1, 10 + i),
            (t + 10, 100, "cudaLaunchKernel", "runtime", 0, op_row, 100 + i, 10 + i),
            (t + 100, 60, f"elementwise_kernel_{i}", "kernel", 1, -1, 100 + i, 10 + i),
        ]
    found = loops.unfused_chains(make(rows))
    assert found is not None
    assert found.value == pytest.approx(4 * 150 * 100 / 1000)
    # kernels at 110-170, 310-370, 510-570, 710-770: three gaps of 140 ns
    assert "ran as 4 kernels (240 ns) with 420 ns of launch gaps" in found.evidence
    assert "mean 140 ns" in found.evidence
    assert _names(make(rows), found.rows) == ["aten::mul", "aten::add", "aten::tanh", "aten::mul"]


def test_per_parameter_updates_are_not_a_chain() -> None:
    tl = demo("slow-dataloader-fixed")  # SGD: aten::add_ once per parameter, back to back
    assert loops.unfused_chains(tl) is None
    rows = [(0, 1000, "Optimizer.step#SGD.step", "annotation", 0, -1, -1, 1)]
    ops = ["aten::mul", "aten::add", "aten::mul", "aten::add"]
    rows += [(10 + 100 * i, 90, op, "cpu_op", 0, 0, -1, 2 + i) for i, op in enumerate(ops)]
    assert loops.unfused_chains(make(rows)) is None  # inside torch's optimizer step


def test_loop_without_stack_or_steps_is_measured_against_its_thread() -> None:
    """No Python frames, no annotations: the loop's share is of the thread's first-to-last op
    span, so time spent importing before any operator does not hide it."""
    pattern = ["aten::select", "aten::select", "aten::sub", "aten::copy_"]
    rows = [(1_000_000 + 5 * i, 3, pattern[i % 4], "cpu_op", 0, -1, -1, i) for i in range(1200)]
    rows.append((1_006_100, 400, "aten::cdist", "cpu_op", 0, -1, -1, 5000))
    found = loops.python_loop(make(rows, duration=2_000_000))
    assert found is not None
    assert found.value == 1201  # every top-level op of the context counts, cdist too
    assert found.where.startswith("the recorded span")
    assert "about 300 repetitions of the 4-operator pattern" in found.evidence
    assert found.rows[0] == 0  # no context slice: the rows start with the first operator
    assert loops.python_loop(make(rows[:998] + rows[-1:], duration=2_000_000)) is None  # < 1000
