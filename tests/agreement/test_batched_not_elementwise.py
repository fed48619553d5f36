"""A batched program is not an element-wise Python loop.

The false finding: a 200-iteration benchmark loop calling broadcast operators on 40×50×10
tensors (~2,000 small top-level operators repeating a 10-operator pattern), recorded without
stacks, was called "Element-wise Python loop over tensors". Small is not element-wise: the
pattern reshapes (unsqueeze, squeeze, view) but never reads or writes single elements, and
with shapes recorded its arithmetic runs on 20,000-element tensors.

The trace is recorded here with torch.profiler. On this shared VM each operator takes ~1 ms;
a workstation runs them in ~10 µs, so the recorded times are scaled to a 10 µs mean, which is
what the user's trace looked like (the rule's "tiny" threshold is 50 µs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview.core.analysis.torch import loops, recommend
from perfview.loaders import load

TINY_MEAN_US = 10.0


def _record(out: Path, *, shapes: bool) -> Path:
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    a, b, c = torch.randn(40, 50, 10), torch.randn(50, 10), torch.randn(40, 1, 10)

    def step() -> None:
        x = a * b[None] + c
        y = torch.tanh(x[:, :, None]).squeeze(2)
        (y - a).abs().sum(-1).view(-1)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=shapes) as prof:
        for _ in range(200):
            step()
    raw = out.with_suffix(".raw.json")
    prof.export_chrome_trace(str(raw))
    doc = json.loads(raw.read_text())
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    t0 = min(float(e["ts"]) for e in ops)
    cpu = [e for e in ops if e.get("cat") == "cpu_op"]
    scale = TINY_MEAN_US / (sum(float(e["dur"]) for e in cpu) / len(cpu))
    for e in ops:
        e["ts"] = t0 + (float(e["ts"]) - t0) * min(scale, 1.0)
        e["dur"] = float(e["dur"]) * min(scale, 1.0)
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("shapes", [True, False], ids=["with-shapes", "no-shapes"])
def test_batched_broadcast_loop_is_not_an_elementwise_loop(tmp_path: Path, shapes: bool) -> None:
    timeline = load(_record(tmp_path / "batched.json", shapes=shapes)).timeline
    assert timeline is not None
    top = loops._top_ops(timeline)
    assert len(top) >= loops.MANY_TINY_OPS  # enough tiny ops that the old rule fired
    assert timeline.events["dur"].to_numpy()[top].mean() < loops.TINY_OP_NS
    assert loops.python_loop(timeline) is None
    titles = [f.title for f in recommend.recommendations(timeline)]
    assert "Element-wise Python loop over tensors" not in titles


def test_a_real_element_loop_with_shapes_still_fires(tmp_path: Path) -> None:
    """The pairwise-distance double loop (the bundled demo), recorded with shapes: its
    arithmetic runs on 3-element rows and 0-d tensors, so it is element-wise."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    a, b = torch.randn(20, 3), torch.randn(25, 3)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        out = torch.empty(20, 25)
        for i in range(20):
            for j in range(25):
                out[i, j] = ((a[i] - b[j]) ** 2).sum().sqrt()
    raw = tmp_path / "pairwise.json"
    prof.export_chrome_trace(str(raw))
    timeline = load(raw).timeline
    assert timeline is not None
    if timeline.events["dur"].to_numpy()[loops._top_ops(timeline)].mean() > loops.TINY_OP_NS:
        pytest.skip("this machine ran the operators slower than the rule's 'tiny' threshold")
    found = loops.python_loop(timeline)
    assert found is not None
    assert "aten::select" in found.evidence
