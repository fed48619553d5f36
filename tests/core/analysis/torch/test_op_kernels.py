"""Operators with device time: op → kernel links checked against correlation ids in the JSON."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.analysis import aggregate
from perfview.core.analysis.torch import op_kernels
from tests.core.analysis.torch._raw import NCCL, RANK0, RESNET_2021, ROCM, events, ns, timeline
from tests.core.analysis.torch._synthetic import make

RUNTIME = ("cuda_runtime", "runtime")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")


def _innermost_op(ops: list[dict], rt: dict) -> str:
    """The JSON's own answer: the latest-starting cpu_op on the runtime's thread enclosing it."""
    start, end = ns(rt["ts"]), ns(rt["ts"]) + ns(rt["dur"])
    best = None
    for op in ops:
        if str(op["tid"]) != str(rt["tid"]) or op["pid"] != rt["pid"]:
            continue
        s = ns(op["ts"])
        if s <= start and s + ns(op["dur"]) >= end and (best is None or s >= ns(best["ts"])):
            best = op
    return "" if best is None else str(best["name"])


@pytest.mark.parametrize("rel", [RANK0, ROCM])
def test_launching_op_follows_the_correlation_id(rel: str) -> None:
    tl = timeline(rel)
    ev = tl.events
    links = op_kernels.launches(tl)
    runtimes = {}
    for e in events(rel):
        if str(e.get("cat", "")).lower() in RUNTIME:
            runtimes[e["args"]["correlation"]] = e
    ops = [e for e in events(rel) if str(e.get("cat", "")).lower() in ("cpu_op", "operator")]
    checked = 0
    for gpu_row, rt_row, op_row in links[["gpu_row", "runtime_row", "op_row"]].to_numpy()[:300]:
        corr = int(ev["corr"].iat[gpu_row])
        assert corr in runtimes, "every linked activity has its runtime call in the file"
        assert int(ev["corr"].iat[rt_row]) == corr
        expected = _innermost_op(ops, runtimes[corr])
        got = "" if op_row < 0 else str(ev["name"].iat[op_row])
        assert got == expected
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021])
def test_op_external_id_equals_kernel_external_id(rel: str) -> None:
    """Where kineto wrote the op's External id on the kernel, both links agree."""
    tl = timeline(rel)
    links = op_kernels.launches(tl)
    linked = links[links["op_row"] >= 0]
    ext = tl.events["ext_id"].to_numpy()
    assert len(linked) > 0.95 * len(links)
    assert (ext[linked["gpu_row"]] == ext[linked["op_row"]]).all()
    n_gpu = sum(1 for e in events(rel) if str(e.get("cat", "")).lower() in GPU_CATS)
    assert len(links) == n_gpu


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0, ROCM])
def test_device_time_adds_up(rel: str) -> None:
    tl = timeline(rel)
    table = op_kernels.ops_table(tl)
    links = op_kernels.launches(tl)
    dur = tl.events["dur"].to_numpy()
    linked = int(dur[links.loc[links["op_row"] >= 0, "gpu_row"]].sum())
    assert int(table["device_self_ns"].sum()) == linked
    assert (table["device_total_ns"] >= table["device_self_ns"]).all()
    host = aggregate.ops_table(tl).set_index("name")
    mine = table.set_index("name")
    assert (mine["host_self_ns"] == host.loc[mine.index, "self_ns"]).all()
    assert (mine["calls"] == host.loc[mine.index, "calls"]).all()


def test_device_total_includes_nested_ops() -> None:
    table = op_kernels.ops_table(timeline(RESNET_2021)).set_index("name")
    conv = table.loc["aten::cudnn_convolution"]
    assert conv["device_self_ns"] > 0
    # conv2d → convolution → _convolution → cudnn_convolution: device time flows up unchanged.
    assert table.at["aten::conv2d", "device_self_ns"] == 0
    assert table.at["aten::conv2d", "device_total_ns"] >= conv["device_self_ns"]


def test_op_kernels_table_for_one_op() -> None:
    tl = timeline(ROCM)
    table = op_kernels.op_kernels_table(tl, op="aten::copy_")
    assert table["kind"].tolist() == ["memcpy"]
    raw = [e for e in events(ROCM, "gpu_memcpy")]
    assert int(table["calls"].iat[0]) == len(raw)
    assert int(table["total_ns"].iat[0]) == pytest.approx(sum(ns(e["dur"]) for e in raw), abs=2)
    everything = op_kernels.op_kernels_table(tl)
    assert int(everything["calls"].sum()) == len(op_kernels.launches(tl))


def test_by_shape_splits_names() -> None:
    tl = timeline(RESNET_2021)
    by_name = op_kernels.ops_table(tl)
    by_shape = op_kernels.ops_table(tl, by_shape=True)
    assert len(by_shape) > len(by_name)
    assert by_shape["device_self_ns"].sum() == by_name["device_self_ns"].sum()
    assert by_shape["calls"].sum() == by_name["calls"].sum()


def test_call_stack_from_the_call_stack_arg() -> None:
    tl = timeline(RESNET_2021)
    ev = tl.events
    row = int(np.flatnonzero(ev["name"] == "aten::cudnn_convolution")[0])
    stack = op_kernels.call_stack(tl, row)
    raw = tl.args.get(row)["Call stack"].split(";")
    assert stack == list(reversed(raw))
    assert stack[0].startswith("resnet50_profiler_api.py")


def test_call_stack_falls_back_to_enclosing_slices() -> None:
    tl = timeline(RANK0)
    ev = tl.events
    row = int(np.flatnonzero(ev["name"] == "aten::addmm")[0])
    stack = op_kernels.call_stack(tl, row)
    assert stack[0].startswith("ProfilerStep#")
    parent = int(ev["parent"].iat[row])
    assert stack[-1] == str(ev["name"].iat[parent])


def test_call_stack_walks_python_function_slices() -> None:
    tl = make(
        [
            (0, 100, "train.py(10): <module>", "python", 0, -1, -1, -1),
            (5, 90, "torch/nn/modules/module.py(1501): _call_impl", "python", 0, 0, -1, -1),
            (10, 50, "aten::linear", "cpu_op", 0, 1, -1, 1),
            (12, 40, "aten::addmm", "cpu_op", 0, 2, -1, 2),
        ]
    )
    assert op_kernels.call_stack(tl, 3) == [
        "train.py(10): <module>",
        "torch/nn/modules/module.py(1501): _call_impl",
    ]
