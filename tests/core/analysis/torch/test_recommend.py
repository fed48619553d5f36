"""Recommendations: each rule against traces where its evidence can be checked by hand."""

from __future__ import annotations

import pytest

from perfview.core.analysis.torch import overview, recommend
from tests.core.analysis.torch._raw import CPU_MEM, NCCL, RANK0, RESNET_2021, events, timeline
from tests.core.analysis.torch._synthetic import make


def _titles(rel: str) -> dict[str, recommend.Finding]:
    return {f.title: f for f in recommend.recommendations(timeline(rel))}


def test_resnet50_2021_findings() -> None:
    found = _titles(RESNET_2021)
    loader = found["Steps are input (DataLoader) bound"]
    steps = overview.steps_table(timeline(RESNET_2021))
    assert loader.value == pytest.approx(steps["dataloader_ns"].sum() * 100 / steps["dur_ns"].sum())
    assert loader.value > recommend.DATALOADER_PCT
    pageable = found["Pageable host-to-device copies"]
    copies = [
        e for e in events(RESNET_2021, "memcpy") if e["name"].startswith("Memcpy HtoD (Pageable")
    ]
    assert pageable.value == len(copies) == 12
    assert "12 Memcpy HtoD" in pageable.evidence
    fp32 = found["FP32 matmuls where fp16 autocast would use tensor cores"]  # V100 (7.0), sgemm
    assert fp32.value > recommend.FP32_GEMM_PCT
    assert "sgemm" in fp32.evidence
    tiny = found["Many tiny kernels / launch overhead"]
    assert tiny.value < recommend.TINY_KERNEL_NS


def test_nccl_trace_findings() -> None:
    found = _titles(NCCL)
    low = found["Low GPU utilization"]
    util = overview.utilization_table(timeline(NCCL))
    assert low.value == pytest.approx(
        float(util[util["stream"] == "all"]["utilization_pct"].iat[0])
    )
    assert low.value < 50
    gaps = found["CPU operators between kernels leave the GPU idle"]
    assert gaps.value > recommend.IDLE_GAP_PCT
    assert "FP32 matmuls where TF32/bf16 would do" not in found  # A100 tf32 tensor-core kernels
    assert "Steps are input (DataLoader) bound" not in found


def test_findings_are_sorted_and_tabular() -> None:
    table = recommend.recommendations_table(timeline(RANK0))
    assert list(table.columns) == [
        "severity", "title", "evidence", "metric", "value", "threshold", "where", "slices"
    ]  # fmt: skip
    assert table["slices"].dtype == "int64"
    order = [recommend.SEVERITIES.index(s) for s in table["severity"]]
    assert order == sorted(order)
    assert len(table) >= 2


def test_cpu_only_trace_has_no_gpu_findings() -> None:
    assert recommend.recommendations(timeline(CPU_MEM)) == []


def test_busy_gpu_gives_no_findings() -> None:
    tl = make(
        [
            (0, 1000, "ProfilerStep#1", "annotation", 0, -1, -1, 1),
            (0, 900, "aten::mm", "cpu_op", 0, 0, -1, 2),
            (10, 5, "cudaLaunchKernel", "runtime", 0, 1, 1, 2),
            (20, 970, "ampere_bf16_s16816gemm_bf16_128x64", "kernel", 1, -1, 1, 2),
        ]
    )
    assert recommend.recommendations(tl) == []


def test_idle_gap_evidence_is_the_cpu_ops_in_the_gaps() -> None:
    found = _titles(NCCL)["CPU operators between kernels leave the GPU idle"]
    ev = timeline(NCCL).events
    names = [str(ev["name"].iat[r]) for r in found.rows]
    assert names[0] in found.evidence  # the single op with the most time in the gaps
    assert all(str(ev["kind"].iat[r]) == "cpu_op" for r in found.rows)
