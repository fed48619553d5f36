"""Kernels page against the JSON: calls, total time and launch columns per kernel name."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from perfview.core.analysis.torch import kernels
from tests.core.analysis.torch._raw import NCCL, RANK0, RESNET_2021, ROCM, events, ns, timeline


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0, ROCM])
def test_kernel_calls_and_time_equal_the_json(rel: str) -> None:
    raw = events(rel, "kernel")
    table = kernels.kernels_table(timeline(rel)).set_index("name")
    calls = Counter(e["name"] for e in raw)
    total: defaultdict[str, int] = defaultdict(int)
    for e in raw:
        total[e["name"]] += ns(e["dur"])
    assert table["calls"].to_dict() == dict(calls)
    for name, expected in total.items():  # each event rounds once: ≤ 1 ns per call apart
        assert abs(int(table.at[name, "total_ns"]) - expected) <= calls[name]
    assert table["total_pct"].sum() == pytest.approx(100.0)
    longest = max(raw, key=lambda e: float(e["dur"]))
    assert table.at[longest["name"], "max_ns"] == ns(longest["dur"])


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021])
def test_launch_columns_come_from_the_longest_launch(rel: str) -> None:
    raw = events(rel, "kernel")
    table = kernels.kernels_table(timeline(rel)).set_index("name")
    by_name: dict[str, dict[str, object]] = {}
    for e in raw:
        best = by_name.get(e["name"])
        if best is None or float(e["dur"]) > float(best["dur"]):  # type: ignore[arg-type]
            by_name[e["name"]] = e
    for name, e in list(by_name.items())[:50]:
        args = e["args"]
        assert isinstance(args, dict)
        row = table.loc[name]
        assert row["grid"] == "×".join(str(v) for v in args["grid"])
        assert row["block"] == "×".join(str(v) for v in args["block"])
        assert row["registers_per_thread"] == args["registers per thread"]
        assert row["shared_memory_bytes"] == args["shared memory"]


def test_occupancy_is_duration_weighted() -> None:
    raw = events(RESNET_2021, "kernel")
    name = Counter(e["name"] for e in raw).most_common(1)[0][0]
    mine = [e for e in raw if e["name"] == name]
    weight = sum(float(e["dur"]) for e in mine)
    expected = sum(e["args"]["est. achieved occupancy %"] * float(e["dur"]) for e in mine) / weight
    table = kernels.kernels_table(timeline(RESNET_2021)).set_index("name")
    assert table.at[name, "occupancy_pct"] == pytest.approx(expected, rel=1e-3)


def test_every_kernel_names_its_launching_op() -> None:
    table = kernels.kernels_table(timeline(RANK0))
    nccl = table[table["name"].str.startswith("ncclKernel_SendRecv")]
    assert nccl["op"].tolist() == ["record_param_comms"]
    assert (table["op"] != "").mean() > 0.95


@pytest.mark.parametrize(
    ("name", "tensor_cores"),
    [
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(…)", True),
        ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128", True),
        ("volta_h884gemm_64x64_ldg8_nn", True),
        ("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", True),
        ("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", True),
        ("Cijk_Alik_Bljk_SB_Bias_MT64x16x32_MI16x16x1_SN_LDSB0", True),
        ("volta_sgemm_64x64_nt", False),
        ("void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false>", False),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
            False,
        ),
    ],
)
def test_tensor_core_detection_from_names(name: str, tensor_cores: bool) -> None:
    import re

    assert bool(re.search(kernels.TENSOR_CORE_RE, name)) is tensor_cores


def test_tensor_core_share() -> None:
    assert kernels.tensor_core_share(timeline(RESNET_2021)) == 0.0  # V100, fp32
    assert 0 < kernels.tensor_core_share(timeline(NCCL)) < 100  # A100, tf32
