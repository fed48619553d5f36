"""Every accelerator backend kineto knows shows its device work: lanes, Overview, kernels,
utilisation and op → device time (fixtures: scripts/fixtures/make_accelerator_fixtures.py)."""

from __future__ import annotations

import pytest

from perfview.core.analysis.aggregate import lanes_table
from perfview.core.analysis.torch import backends, kernels, op_kernels, overview
from perfview.core.analysis.torch.overview_table import overview_table
from perfview.core.pages import summary
from perfview.loaders import load
from tests.conftest import DATA, sample

# fixture → (backend, lane label prefix, device rows' name)
CASES = {
    "cuda": ("CUDA", "GPU 0", "NVIDIA H100"),
    "rocm": ("ROCm", "GPU 0", "AMD Instinct MI300X"),
    "xpu": ("XPU", "XPU 0", "Intel(R) Data Center GPU Max 1550"),
    "mtia": ("MTIA", "MTIA 0", "MTIA 0"),
    "hpu": ("HPU", "HPU 0", "HPU 0"),
    "privateuse1": ("PrivateUse1", "PrivateUse1 0", "PrivateUse1 0"),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_backend_device_work_is_recognised(kind: str) -> None:
    name, lane_label, device_name = CASES[kind]
    bundle = load(DATA / "accelerators" / f"{kind}.json")
    timeline = bundle.timeline
    assert timeline is not None
    assert timeline.is_torch
    assert backends.backend(timeline) == name
    lanes = lanes_table(timeline)
    device_lanes = lanes[lanes["device"] == "gpu:0"]
    assert len(device_lanes) == 1
    assert device_lanes["label"].iat[0].startswith(lane_label)
    devices = overview.devices_table(timeline)
    used = devices[devices["used"]]
    assert used["name"].tolist() == [device_name]
    assert used["backend"].tolist() == [name]
    table = overview_table(timeline)
    rows = set(zip(table["section"], table["key"], table["value"], strict=True))
    assert ("gpu:0", "backend", name) in rows
    ks = kernels.kernels_table(timeline)
    assert "gemm_kernel" in set(ks["name"])
    assert "kernels" in summary.available_views(bundle)
    assert "utilization" in summary.available_views(bundle)
    util = overview.utilization_table(timeline)
    whole = util[(util["device"] == "gpu:0") & (util["stream"] == "all")]
    assert whole["compute_ns"].iat[0] == 500_000
    ops = op_kernels.ops_table(timeline).set_index("name")
    assert ops.loc["aten::mm", "device_self_ns"] == 500_000  # linked to the op that launched it


def test_cpu_only_trace_has_no_backend() -> None:
    timeline = load(sample("kineto_cpu/dtu_jc_resnet18_cpu_trace.json")).timeline
    assert timeline is not None
    assert backends.backend(timeline) is None
    assert overview.devices_table(timeline).empty


@pytest.mark.parametrize(
    ("rel", "name"),
    [
        ("kineto_gpu/hta_nccl_data.json.gz", "CUDA"),
        ("kineto_gpu/hta_mi250_rocm6.2.json.gz", "ROCm"),
        ("kineto_gpu/tracelens_torch_compile_triton_mi300x.json.gz", "ROCm"),
    ],
)
def test_real_traces(rel: str, name: str) -> None:
    timeline = load(sample(rel)).timeline
    assert timeline is not None
    assert backends.backend(timeline) == name


@pytest.mark.parametrize("kind", list(CASES))
def test_tf32_advice_only_for_nvidia(kind: str) -> None:
    from perfview.core.analysis.torch import recommend

    timeline = load(DATA / "accelerators" / f"{kind}.json").timeline
    assert timeline is not None
    finding = recommend.fp32_matmuls(timeline)
    assert (finding is not None) == (kind == "cuda")
