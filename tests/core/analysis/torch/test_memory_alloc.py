"""Memory page: curves, allocation/free pairing by Addr, peaks and the range filter."""

from __future__ import annotations

import pytest

from perfview.core.analysis.torch import memory_alloc
from tests.core.analysis.torch._raw import CPU_MEM, NCCL, RESNET_2021, ns, raw, timeline


def _memory_events(rel: str) -> list[dict]:
    return [e for e in raw(rel)["traceEvents"] if e.get("name") == "[memory]"]


def test_allocations_pair_with_the_next_free_of_their_address() -> None:
    mem = _memory_events(CPU_MEM)
    base = min(float(e["ts"]) for e in raw(CPU_MEM)["traceEvents"] if "ts" in e)
    expected = []
    for i, e in enumerate(mem):
        a = e["args"]
        if a["Bytes"] <= 0:
            continue
        free = next(
            (f for f in mem[i + 1 :] if f["args"]["Addr"] == a["Addr"] and f["args"]["Bytes"] < 0),
            None,
        )
        expected.append(
            (
                ns(float(e["ts"]) - base),
                a["Bytes"],
                -1 if free is None else ns(float(free["ts"]) - base),
            )
        )
    table = memory_alloc.allocations_table(timeline(CPU_MEM))
    got = sorted(zip(table["alloc_ts_ns"], table["size_bytes"], table["free_ts_ns"], strict=True))
    assert len(got) == len(expected) == 248
    assert got == sorted(expected)
    assert table["freed"].all()
    assert (table["lifetime_ns"] == table["free_ts_ns"] - table["alloc_ts_ns"]).all()
    assert (table["op"] != "").mean() > 0.9
    assert table["op"].str.startswith("aten::").mean() > 0.9


def test_peaks_equal_the_json_totals() -> None:
    mem = _memory_events(CPU_MEM)
    peaks = memory_alloc.memory_peaks(timeline(CPU_MEM))
    assert peaks["device"].tolist() == ["cpu"]
    assert peaks["peak_allocated_bytes"].iat[0] == max(e["args"]["Total Allocated"] for e in mem)
    curves = memory_alloc.memory_curves(timeline(CPU_MEM))
    assert len(curves) == len(mem)
    assert curves["allocated_bytes"].tolist() == [e["args"]["Total Allocated"] for e in mem]


def test_2021_file_without_addr_rebuilds_the_curve() -> None:
    tl = timeline(RESNET_2021)
    mem = _memory_events(RESNET_2021)
    allocs = memory_alloc.allocations_table(tl)
    assert len(allocs) == sum(1 for e in mem if e["args"]["Bytes"] > 0)
    assert not allocs["freed"].any()  # no Addr: nothing can be paired
    summary = memory_alloc.memory_summary(tl).set_index("device")
    assert set(summary.index) == {"cpu", "cuda:0"}
    cuda = [e["args"]["Bytes"] for e in mem if e["args"]["Device Type"] == 1]
    running, peak = 0, 0
    for b in cuda:
        running += b
        peak = max(peak, running)
    assert summary.at["cuda:0", "peak_allocated_bytes"] == peak
    assert summary.at["cuda:0", "allocs"] == sum(1 for b in cuda if b > 0)


def test_filter_by_range() -> None:
    allocs = memory_alloc.allocations_table(timeline(CPU_MEM))
    lo, hi = 10_000_000, 20_000_000
    part = memory_alloc.filter_allocations(allocs, lo, hi)
    inside = allocs["alloc_ts_ns"].between(lo, hi) | allocs["free_ts_ns"].between(lo, hi)
    assert len(part) == int(inside.sum())
    assert 0 < len(part) < len(allocs)
    assert memory_alloc.filter_allocations(allocs, 0, 10**15).shape == allocs.shape


def test_no_memory_events() -> None:
    tl = timeline(NCCL)
    assert memory_alloc.allocations_table(tl).empty
    assert memory_alloc.memory_peaks(tl).empty
    assert memory_alloc.memory_summary(tl).empty


@pytest.mark.parametrize(("t", "i", "label"), [(0, -1, "cpu"), (1, 0, "cuda:0"), (1, 3, "cuda:3")])
def test_device_labels(t: int, i: int, label: str) -> None:
    assert memory_alloc.device_labels([t], [i]).tolist() == [label]  # type: ignore[arg-type]
