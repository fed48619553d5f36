"""Collective matching and bandwidth on hand-made reductions (no files, exact numbers)."""

from __future__ import annotations

import pandas as pd
import pytest

from perfview.core.analysis.torch import job_views
from perfview.core.analysis.torch.collectives import (
    COMM_COLUMNS,
    bus_factor,
    kernel_kind,
    normalize_kind,
)
from perfview.core.analysis.torch.job import STEP_COLUMNS, RankReduction, align_clocks, assemble

MS = 1_000_000
EPOCH = 1_700_000_000 * 10**9


def _reduction(rank: int, comms: list[tuple[int, int, str, int, int]], step0: int) -> RankReduction:
    """comms: (start_ns, dur_ns, kind, seq, bytes) on process group "0" of 4 ranks."""
    rows = [
        {"start_ns": s, "dur_ns": d, "kind": k, "process_group": "0", "pg_size": 4, "seq": q,
         "in_nelems": b // 4, "out_nelems": b // 4, "dtype": "Float", "bytes": b, "stream": 7}
        for s, d, k, q, b in comms
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(COMM_COLUMNS)).astype(COMM_COLUMNS)
    steps = pd.DataFrame(
        [[1, step0, 100 * MS, 0, 0, 0, 0.0], [2, step0 + 100 * MS, 100 * MS, 0, 0, 0, 0.0]],
        columns=STEP_COLUMNS,
    )
    return RankReduction(
        path=f"/x/rank{rank}.json", order=rank, meta_rank=rank, name_rank=rank, world_size=4,
        origin_ns=EPOCH, duration_ns=300 * MS, events=10, steps=steps, comms=frame,
        totals={"comm_ns": 10 * MS, "overlap_ns": 4 * MS, "window_ns": 200 * MS},
    )  # fmt: skip


def test_kind_names() -> None:
    assert normalize_kind("nccl:_all_gather_base") == "allgather"
    assert normalize_kind("reduce_scatter_tensor_coalesced") == "reducescatter"
    assert normalize_kind("nccl:all_to_all") == "alltoall"
    assert kernel_kind("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)") == "allreduce"
    assert kernel_kind("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)") == "sendrecv"


def test_nccl_tests_bus_factors() -> None:
    assert bus_factor("allreduce", 4) == pytest.approx(1.5)
    assert bus_factor("allgather", 4) == pytest.approx(0.75)
    assert bus_factor("broadcast", 4) == 1.0


def test_seq_matching_skew_wait_transfer_and_bandwidth() -> None:
    # seq 1 (all-reduce, 64 MB): ranks arrive at 10, 11, 12 and 15 ms, all end at 25 ms.
    # seq 0 is recorded in a different order on rank 3 (it must still match by seq).
    arrive = {0: 10, 1: 11, 2: 12, 3: 15}
    reds = []
    for rank, at in arrive.items():
        one = (EPOCH + at * MS, (25 - at) * MS, "allreduce", 1, 64 * MS)
        zero = (EPOCH + 2 * MS, 1 * MS, "broadcast", 0, 4096)
        reds.append(_reduction(rank, [one, zero] if rank == 3 else [zero, one], EPOCH))
    job = assemble(reds)
    assert job.clock.startswith("absolute clocks")
    table = job_views.collectives_table(job)
    assert list(table["seq"]) == [0, 1]
    row = table.iloc[1]
    assert row["matched_by"] == "seq"
    assert row["ranks"] == 4
    assert row["arrival_skew_ns"] == 5 * MS
    assert row["wait_ns"] == (5 + 4 + 3 + 0) * MS // 4
    assert row["transfer_ns"] == 10 * MS
    assert row["last_rank"] == 3
    assert row["first_rank"] == 0
    assert row["algbw_gbps"] == pytest.approx(64 * MS / (10 * MS))
    assert row["busbw_gbps"] == pytest.approx(6.4 * 1.5)
    stragglers = job_views.stragglers_table(job)
    assert int(stragglers["rank"].iloc[0]) == 3
    assert int(stragglers["times_last"].iloc[0]) == 1
    kinds = job_views.kinds_table(job)
    assert set(kinds["kind"]) == {"allreduce", "broadcast"}
    late = job_views.lateness_by_step(job)  # both collectives fall in step 1
    assert list(late.columns) == [1]
    assert late.loc[3, 1] == pytest.approx(2.5 * MS)  # 0 at seq 0, 5 ms at seq 1
    assert late.loc[0, 1] == 0
    overlap = job_views.overlap_table(job)
    assert list(overlap["overlap_pct"]) == [40.0] * 4


def test_order_matching_and_clock_alignment() -> None:
    # No seq, same kinds in the same order on both ranks; rank 1's clock is an hour off.
    hour = 3600 * 10**9
    a = _reduction(0, [(5 * MS, MS, "allreduce", -1, 8), (50 * MS, MS, "allgather", -1, 8)], 0)
    b = _reduction(1, [(6 * MS, MS, "allreduce", -1, 8), (52 * MS, MS, "allgather", -1, 8)], 0)
    for r, shift in ((a, 0), (b, hour)):
        r.rank = r.meta_rank or 0
        r.steps["start_ns"] += EPOCH + shift
        r.comms["start_ns"] += EPOCH + shift
    offsets, note = align_clocks([a, b])
    assert offsets == {0: 0, 1: -hour}
    assert "aligned at its ProfilerStep#1" in note
    table = job_views.collectives_table(assemble([a, b]))
    assert list(table["matched_by"]) == ["order", "order"]
    assert list(table["arrival_skew_ns"]) == [MS, 2 * MS]
    assert list(table["last_rank"]) == [1, 1]


def test_duplicate_rank_is_renumbered_and_reported() -> None:
    a = _reduction(0, [], EPOCH)
    b = _reduction(0, [], EPOCH)
    b.path, b.order = "/x/other.json", 1
    job = assemble([a, b])
    assert [r.rank for r in job.ranks] == [0, 1]
    assert any("also says rank 0" in w for w in job.warnings)
