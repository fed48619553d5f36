"""Record a real torch.profiler trace, load it, and compare with torch's own key_averages().

torch computes per-op call counts and self CPU time itself; perfview recomputes them from the
exported trace's slices (nesting + nearest-op self time). Equal counts and self times within 5%
show the loader's nesting and `aggregate.ops_table` agree with the profiler that wrote the file.
torch runs only in a child process: the viewer never imports it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.torch,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed"),
]

# A few convolution/linear/ReLU ops, forward and backward, two profiled steps after a warm-up
# step (the first mkldnn convolution is slow); one record_function annotation around each step.
RECORDER = """
import json, sys
import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

out = sys.argv[1]
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
    torch.nn.Linear(8 * 16 * 16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10),
)
x = torch.randn(4, 3, 16, 16)

def ready(prof):
    prof.export_chrome_trace(out + "/trace.json")
    averages = {e.key: [e.count, e.self_cpu_time_total] for e in prof.key_averages()}
    with open(out + "/key_averages.json", "w") as fh:
        json.dump(averages, fh)

with profile(
    activities=[ProfilerActivity.CPU],
    record_shapes=True,
    schedule=schedule(wait=0, warmup=1, active=2),
    on_trace_ready=ready,
) as prof:
    for _ in range(3):
        with record_function("train_step"):
            model(x).sum().backward()
        prof.step()
"""

ANNOTATIONS = {"ProfilerStep*", "train_step"}  # key_averages rows that are not operators
MIN_SELF_US = 20.0  # below this, scheduler noise and ns rounding dominate a 5% comparison


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("torch_roundtrip")
    script = out / "record.py"
    script.write_text(RECORDER)
    proc = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_op_counts_and_self_times_match_key_averages(recorded: Path) -> None:
    from perfview.core.analysis.aggregate import ops_table
    from perfview.loaders import load

    expected = json.loads((recorded / "key_averages.json").read_text())
    bundle = load(recorded / "trace.json")
    assert bundle.format == "trace"
    assert bundle.timeline is not None
    assert bundle.timeline.is_torch
    table = ops_table(bundle.timeline).set_index("name")

    ops = {name: value for name, value in expected.items() if name not in ANNOTATIONS}
    assert len(ops) > 20
    assert set(table.index) == set(ops)
    for name, (count, self_us) in ops.items():
        assert table.at[name, "calls"] == count, name
        if self_us >= MIN_SELF_US:
            assert table.at[name, "self_ns"] / 1000 == pytest.approx(self_us, rel=0.05), name
    total_self_us = sum(self_us for _, self_us in ops.values())
    assert table["self_ns"].sum() / 1000 == pytest.approx(total_self_us, rel=0.02)


def test_shapes_and_annotations_survive(recorded: Path) -> None:
    from perfview.core.analysis.aggregate import ops_table
    from perfview.loaders import load

    timeline = load(recorded / "trace.json").timeline
    assert timeline is not None
    by_shape = ops_table(timeline, by_shape=True)
    addmm = by_shape[by_shape["name"] == "aten::addmm"]
    assert len(addmm) == 2  # two Linear layers → two distinct input shapes
    assert all(shape.startswith("[[") for shape in addmm["shape"])
    annotations = timeline.events[timeline.events["kind"] == "annotation"]
    names = set(annotations["name"].astype(str))
    assert "train_step" in names
    assert {"ProfilerStep#1", "ProfilerStep#2"} <= names
