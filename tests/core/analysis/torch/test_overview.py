"""Overview page: devices, ProfilerStep times, the step breakdown and GPU utilisation."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.analysis.torch import overview
from perfview.core.analysis.torch.common import (
    OUTERMOST_CHUNK,
    kind_mask,
    outermost,
)
from perfview.core.analysis.torch.overview_table import overview_table
from perfview.core.analysis.torch.unions import merge_intervals, partition
from tests.core.analysis.torch._raw import NCCL, RANK0, RESNET_2021, ROCM, events, ns, raw, timeline
from tests.core.analysis.torch._synthetic import make


def _json_steps(rel: str) -> dict[int, int]:
    """ProfilerStep#N durations from the JSON, CPU side only (not gpu_user_annotation)."""
    return {
        int(e["name"].split("#")[1]): ns(e["dur"])
        for e in events(rel)
        if str(e["name"]).startswith("ProfilerStep#")
        and str(e.get("cat", "")).lower() in ("user_annotation", "cpu_op", "operator")
    }


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0, ROCM])
def test_step_durations_equal_the_profilerstep_slices(rel: str) -> None:
    tl = timeline(rel)
    steps = overview.steps_table(tl)
    assert dict(zip(steps["step"], steps["dur_ns"], strict=True)) == _json_steps(rel)
    parts = steps[[f"{c}_ns" for c in overview.BREAKDOWN]].sum(axis=1)
    assert (parts == steps["dur_ns"]).all(), "the breakdown partitions every step"
    stats = overview.step_stats(tl)
    durs = list(_json_steps(rel).values())
    assert stats.count == len(durs)
    assert stats.mean_ns == pytest.approx(np.mean(durs))
    assert stats.median_ns == pytest.approx(np.median(durs))
    assert (stats.min_ns, stats.max_ns) == (min(durs), max(durs))


def test_devices_from_device_properties() -> None:
    devices = overview.devices_table(timeline(NCCL))
    props = raw(NCCL)["deviceProperties"]
    assert devices["name"].tolist() == [p["name"] for p in props]
    assert devices["memory_bytes"].tolist() == [p["totalGlobalMem"] for p in props]
    assert devices["sms"].tolist() == [108] * len(props)
    assert devices["compute_capability"].iat[0] == "8.0"
    assert devices["used"].tolist() == [True] + [False] * (len(props) - 1)
    # no deviceProperties in the file: the device the lanes show work on still gets a row
    bare = overview.devices_table(timeline(RANK0))
    assert bare[["id", "name", "used", "backend"]].values.tolist() == [[0, "GPU 0", True, "CUDA"]]


def test_utilization_partitions_the_window() -> None:
    util = overview.utilization_table(timeline(RANK0))
    parts = util[["compute_ns", "comm_ns", "memory_ns", "idle_ns"]].sum(axis=1)
    assert (parts == util["window_ns"]).all()
    assert (util["busy_ns"] == util["window_ns"] - util["idle_ns"]).all()
    device = util[util["stream"] == "all"].iloc[0]
    streams = util[util["stream"] != "all"]
    assert set(streams["stream"]) == {
        "stream 7",
        "stream 23",
        "stream 25",
        "stream 84",
        "stream 203",
    }
    assert device["busy_ns"] <= streams["busy_ns"].sum()
    nccl_streams = streams[streams["comm_ns"] > 0]["stream"].tolist()
    assert nccl_streams == ["stream 84", "stream 203"]  # NCCL kernels run on their own streams


def test_breakdown_priorities_on_a_hand_made_trace() -> None:
    # CPU: step 0..1000 with a DataLoader slice 0..200, an op 200..600 that launches at 300.
    # GPU: kernel 350..500 on stream 7, NCCL kernel 450..700 on stream 9, memcpy 800..850.
    tl = make(
        [
            (0, 1000, "ProfilerStep#3", "annotation", 0, -1, -1, 1),
            (0, 200, "enumerate(DataLoader)#_Iter.__next__", "cpu_op", 0, 0, -1, 2),
            (200, 400, "aten::mm", "cpu_op", 0, 0, -1, 3),
            (300, 20, "cudaLaunchKernel", "runtime", 0, 2, 11, 3),
            (350, 150, "volta_sgemm_64x64_nn", "kernel", 1, -1, 11, 3),
            (450, 250, "ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", 2, -1, -1, -1),
            (800, 50, "Memcpy HtoD (Pageable -> Device)", "memcpy", 1, -1, -1, -1),
        ]
    )
    steps = overview.steps_table(tl)
    row = steps.iloc[0]
    assert row["step"] == 3
    # runtime 300..320 (GPU idle); cpu_exec = 200..300 + 320..350; other = 700..800 + 850..1000.
    expected = {"comm": 250, "kernel": 100, "memcpy": 50, "memset": 0, "runtime": 20,
                "dataloader": 200, "cpu_exec": 130, "other": 250}  # fmt: skip
    assert {c: int(row[f"{c}_ns"]) for c in overview.BREAKDOWN} == expected
    assert row["gpu_busy_pct"] == pytest.approx(40.0)
    util = overview.utilization_table(tl).set_index("stream")
    assert util.at["all", "busy_ns"] == 400
    assert util.at["all", "comm_ns"] == 250
    assert util.at["all", "compute_ns"] == 100
    assert util.at["stream 7", "compute_ns"] == 150


def test_partition_and_merge() -> None:
    s, e = merge_intervals(np.array([5, 0, 2, 20]), np.array([8, 3, 4, 30]))
    assert s.tolist() == [0, 5, 20]
    assert e.tolist() == [4, 8, 30]
    parts = partition([(np.array([0]), np.array([10]))], np.array([5, 20]), np.array([15, 25]))
    assert parts.tolist() == [[5, 5], [0, 5]]


def test_overview_rows_for_2021_and_new_schemas() -> None:
    for rel in (NCCL, RESNET_2021):
        table = overview_table(timeline(rel))
        keys = set(zip(table["section"], table["key"], strict=True))
        assert ("steps", "count") in keys
        assert ("gpu:0", "utilization_pct") in keys
        assert ("gpu:0", "name") in keys
        assert ("step breakdown", "kernel_pct") in keys
        share = table[table["section"] == "step breakdown"]["number"].sum()
        assert share == pytest.approx(100.0)


def test_steps_are_remembered_per_events_table_and_handed_out_as_copies() -> None:
    """`steps_table` runs once per events table (the overview and its recommendations share
    it); editing a returned table changes nothing for the next caller."""
    tl = timeline(NCCL)
    first = overview.steps_table(tl)
    first["dur_ns"] = -1
    again = overview.steps_table(tl)
    assert (again["dur_ns"] > 0).all()
    assert dict(zip(again["step"], again["dur_ns"], strict=True)) == _json_steps(NCCL)


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021])
def test_kind_mask_equals_isin(rel: str) -> None:
    ev = timeline(rel).events
    for kinds in (("kernel",), ("memcpy", "memset"), ("cpu_op", "annotation"), ("no such",)):
        assert (kind_mask(ev, kinds) == ev["kind"].isin(kinds).to_numpy()).all(), kinds


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0, ROCM])
@pytest.mark.parametrize("chunk", [OUTERMOST_CHUNK, 997])
def test_the_outermost_slices_cover_what_all_of_a_kind_do(
    rel: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`outermost` drops the rows whose parent is of the mask too (read a chunk of parents at
    a time, here also across many chunk edges): the union of the intervals, which the steps'
    breakdown and the CPU-gap finding measure, is the same from far fewer rows."""
    import perfview.core.analysis.torch.common as common

    monkeypatch.setattr(common, "OUTERMOST_CHUNK", chunk)
    tl = timeline(rel)
    ev = tl.events
    ts = ev["ts"].to_numpy(dtype=np.int64)
    end = ts + ev["dur"].to_numpy(dtype=np.int64)
    op = kind_mask(ev, ("cpu_op",))
    top = outermost(ev, op)
    assert not (top & ~op).any()
    assert top.sum() < op.sum()
    every, outer = merge_intervals(ts[op], end[op]), merge_intervals(ts[top], end[top])
    assert np.array_equal(every[0], outer[0])
    assert np.array_equal(every[1], outer[1])
    parent = ev["parent"].to_numpy(dtype=np.int64)[top]
    assert not op[parent[parent >= 0]].any()


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, ROCM])
def test_the_split_is_the_same_a_time_range_at_a_time(
    rel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`partition` over ranges of ~16 intervals (windows split across their edges, steps and
    a window of the whole trace) gives each window the same times as in one pass."""
    from perfview.core.analysis.torch import unions

    tl = timeline(rel)
    cats = overview.category_intervals(tl)
    steps = overview.step_rows(tl)
    windows = [
        (steps["start_ns"].to_numpy(dtype=np.int64), steps["end_ns"].to_numpy(dtype=np.int64)),
        (np.array([0], dtype=np.int64), np.array([tl.duration_ns], dtype=np.int64)),
    ]
    whole = [partition(cats, s, e) for s, e in windows]
    monkeypatch.setattr(unions, "PARTITION_CHUNK", 16)
    monkeypatch.setattr(unions, "_SAMPLE", 2)
    assert len(unions._ranges([merge_intervals(s, e) for s, e in cats], 0, tl.duration_ns)) > 3
    for (s, e), want in zip(windows, whole, strict=True):
        got = partition(cats, s, e)
        assert np.array_equal(got, want)
        assert np.array_equal(got.sum(axis=1), e - s)
