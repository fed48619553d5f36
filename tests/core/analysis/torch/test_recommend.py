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


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0])
def test_time_by_name_through_the_codes_is_the_grouped_series(rel: str) -> None:
    """The CPU-gap finding's time by operator name, summed through the categorical codes,
    equals the per-row Series grouped by name (the path of a column that is not
    categorical), for every name with time."""
    import numpy as np
    import pandas as pd

    from perfview.core.analysis.torch.common import kind_mask, names_at, text

    ev = timeline(rel).events
    assert isinstance(ev["name"].dtype, pd.CategoricalDtype)
    rows = np.flatnonzero(kind_mask(ev, ("cpu_op",)))
    weight = (np.arange(len(rows)) % 7).astype(np.float64)
    got = recommend._time_by_name(ev, rows, weight)
    want = pd.Series(weight, index=text(names_at(ev, rows))).groupby(level=0).sum()
    assert got[got > 0].sort_index().to_dict() == want[want > 0].sort_index().to_dict()
    assert list(got.to_numpy()[:5]) == sorted(want.to_numpy(), reverse=True)[:5]
