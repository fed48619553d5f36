"""The trace icicle: one top node per lane, no synthetic spans, root = busy time of the choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.analysis import bundle_tree, trace_tree
from perfview.core.analysis.aggregate import lanes_table
from perfview.core.model import CallTree, Timeline
from perfview.loaders import load
from tests.conftest import sample


def _x(name: str, ts: int, dur: int, tid: int, pid: int = 1, cat: str = "cpu_op") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


def _kineto(tmp_path: Path) -> Timeline:
    """Two threads, one GPU stream, and kineto's window span (cat Trace) around everything."""
    events = [
        _x("PyTorch Profiler (0)", 0, 1000, tid=9, pid=9, cat="Trace"),
        _x("main", 0, 600, tid=1),
        _x("aten::mm", 100, 200, tid=1),
        _x("aten::mm", 400, 100, tid=1),
        _x("backward", 50, 300, tid=2),
        _x("aten::mm", 60, 100, tid=2),
        _x("gemm", 120, 150, tid=7, pid=0, cat="kernel"),
        _x("gemm", 500, 150, tid=7, pid=0, cat="kernel"),
    ]
    meta = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "autograd"}},
    ]
    path = tmp_path / "k.json"
    gpu = [{"id": 0, "name": "Fake GPU"}]
    path.write_text(
        json.dumps({"schemaVersion": 1, "deviceProperties": gpu, "traceEvents": events + meta})
    )
    timeline = load(path).timeline
    assert timeline is not None
    return timeline


def tops(tree: CallTree) -> dict[str, float]:
    return {tree.name(int(k)): float(tree.metrics["total_ns"][k]) for k in tree.children(0)}


def test_default_is_all_cpu_threads_one_node_each(tmp_path: Path) -> None:
    timeline = _kineto(tmp_path)
    keys = [c.key for c in trace_tree.lane_choices(timeline)]
    assert keys[:3] == ["cpu", "gpu", "all"]
    assert "pid:1" in keys
    tree = trace_tree.trace_tree(timeline)
    names = tops(tree)
    assert names == {"main": 600_000.0, "autograd": 300_000.0}  # no lane for the window span
    assert tree.metrics["total_ns"][0] == 900_000  # busy time of the two threads
    assert "PyTorch Profiler (0)" not in set(tree.frames["name"])
    assert bundle_tree.tree_for(load(tmp_path / "k.json")).metrics["total_ns"][0] == 900_000


def test_gpu_and_single_lane_choices(tmp_path: Path) -> None:
    timeline = _kineto(tmp_path)
    gpu = trace_tree.trace_tree(timeline, trace_tree.resolve_choice(timeline, "gpu"))
    assert tops(gpu) == {"gemm": 300_000.0}  # one stream: the root is the stream itself
    assert gpu.metrics["total_ns"][0] == 300_000
    everything = trace_tree.trace_tree(timeline, trace_tree.resolve_choice(timeline, "all"))
    assert everything.metrics["total_ns"][0] == 1_200_000
    assert len(everything.children(0)) == 3
    autograd = trace_tree.resolve_choice(timeline, "autograd")  # a label fragment
    one = trace_tree.trace_tree(timeline, autograd)
    assert tops(one) == {"backward": 300_000.0}
    with pytest.raises(ValueError, match="matches no lane"):
        trace_tree.resolve_choice(timeline, "nope")


def test_nccl_sample_root_is_busy_time_not_the_sum_of_everything() -> None:
    # Before: every lane merged under one root of 1.6 s for a 729 ms trace.
    bundle = load(sample("kineto_gpu/hta_nccl_data.json.gz"))
    timeline = bundle.timeline
    assert timeline is not None
    tree = bundle_tree.tree_for(bundle)
    assert tree is not None
    lanes = lanes_table(timeline)
    choice = trace_tree.default_choice(timeline)
    assert choice is not None
    assert choice.key == "cpu"
    busy = lanes.set_index("lane").loc[list(choice.lanes), "busy_ns"].sum()
    assert tree.metrics["total_ns"][0] == pytest.approx(busy, rel=1e-6)
    names = [tree.name(int(k)) for k in tree.children(0)]
    assert names[:2] == ["pt_main_thread", "pt_autograd_0"]  # no thread ids: runs compare
    assert "PyTorch Profiler (0)" not in set(tree.frames["name"])
    gpu = trace_tree.trace_tree(timeline, trace_tree.resolve_choice(timeline, "gpu"))
    gpu_lanes = lanes[lanes["device"].str.startswith("gpu")]
    assert gpu.metrics["total_ns"][0] == pytest.approx(gpu_lanes["busy_ns"].sum(), rel=1e-6)
    assert np.all(gpu.metrics["total_ns"][gpu.children(0)] <= timeline.duration_ns)
