"""Advice that depends on the GPU checks the GPU's compute capability.

TF32 and bf16 tensor cores need compute capability 8.0 (Ampere); a V100 (7.0) has fp16 tensor
cores only; torch.compile's GPU backend (Triton) needs 7.0. The ResNet50 trace was recorded on
V100s; the same bytes with `computeMajor` rewritten stand in for older and newer GPUs.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from perfview.core.analysis.torch import recommend
from perfview.loaders import load
from tests.conftest import sample

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


def _findings(path: Path) -> dict[str, recommend.Finding]:
    timeline = load(path).timeline
    assert timeline is not None
    return {f.metric: f for f in recommend.recommendations(timeline)}


def _as_capability(tmp_path: Path, major: int) -> Path:
    text = gzip.decompress(sample(RESNET).read_bytes())
    assert text.count(b'"computeMajor": 7') == 4  # the machine's four V100s
    out = tmp_path / f"resnet50_sm{major}0.json"
    out.write_bytes(text.replace(b'"computeMajor": 7', f'"computeMajor": {major}'.encode()))
    return out


def test_v100_is_told_fp16_autocast_not_tf32_or_bf16() -> None:
    fp32 = _findings(sample(RESNET))["fp32_gemm_pct"]
    assert "TF32" not in fp32.title
    assert "bf16" not in fp32.title
    assert "fp16" in fp32.title
    assert "compute capability 7.0" in fp32.evidence
    assert "allow_tf32" not in fp32.evidence
    assert "float16" in fp32.evidence


def test_ampere_is_told_tf32_or_bf16(tmp_path: Path) -> None:
    fp32 = _findings(_as_capability(tmp_path, 8))["fp32_gemm_pct"]
    assert fp32.title == "FP32 matmuls where TF32/bf16 would do"
    assert "allow_tf32" in fp32.evidence


def test_pascal_is_not_told_to_use_torch_compile(tmp_path: Path) -> None:
    found = _findings(_as_capability(tmp_path, 6))
    assert "fp32_gemm_pct" not in found  # no tensor cores at all
    tiny = found["median_kernel_ns"]
    assert "torch.compile" not in tiny.evidence.replace("torch.compile's", "")
    assert "7.0" in tiny.evidence
    assert "CUDA graphs" in tiny.evidence


@pytest.mark.parametrize("major", [7, 8])
def test_volta_and_newer_keep_torch_compile_advice(tmp_path: Path, major: int) -> None:
    path = sample(RESNET) if major == 7 else _as_capability(tmp_path, major)
    assert "torch.compile" in _findings(path)["median_kernel_ns"].evidence
