"""`perfview record --mode memray` and `--mode cuda-memory`, end to end through the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perfview.loaders import load

ROOT = Path(__file__).resolve().parent.parent.parent
MIB = 1 << 20
ALLOC = """\
import builtins

MIB = 1 << 20
builtins._perfview_leak = bytearray(48 * MIB)  # outlives the script: never freed while tracked
tmp = bytearray(96 * MIB)
del tmp
"""
CUDA = """\
import torch

keep = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
for _ in range(3):
    tmp = torch.empty(32 * 2**20, dtype=torch.uint8, device="cuda")
    del tmp
try:
    torch.empty(2**50, dtype=torch.uint8, device="cuda")  # 1 PiB: out of memory
except torch.cuda.OutOfMemoryError:
    pass
"""


def _record(tmp_path: Path, *args: str, script: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.py"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, "-m", "perfview", "record", *args, "--", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_memray_mode(tmp_path: Path) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    out = tmp_path / "capture.bin"
    done = _record(tmp_path, "--mode", "memray", "-o", str(out), script=ALLOC)
    assert done.returncode == 0, done.stderr
    bundle = load(out)
    assert bundle.format == "memray"
    assert abs(bundle.counts["peak_bytes"] - 144 * MIB) < 0.01 * 144 * MIB
    assert abs(bundle.counts["leaked_bytes"] - 48 * MIB) < 0.01 * 48 * MIB


def test_memray_mode_native(tmp_path: Path) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    out = tmp_path / "native.bin"
    done = _record(tmp_path, "--mode", "memray", "--native", "-o", str(out), script=ALLOC)
    assert done.returncode == 0, done.stderr
    bundle = load(out)
    cap = bundle.memray
    assert cap is not None
    assert cap.meta["native_traces"]
    assert abs(bundle.counts["peak_bytes"] - 144 * MIB) < 0.01 * 144 * MIB


def _has_cuda() -> bool:
    torch = pytest.importorskip("torch")
    return bool(torch.cuda.is_available())


def test_cuda_memory_refuses_without_cuda(tmp_path: Path) -> None:
    if _has_cuda():
        pytest.skip("this machine has CUDA; the refusal is for machines without it")
    out = tmp_path / "snap.pickle"
    done = _record(tmp_path, "--mode", "cuda-memory", "-o", str(out), script=CUDA)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "torch.cuda.is_available() is False" in done.stderr
    assert not out.exists()


def test_cuda_memory_records_snapshot_with_oom(tmp_path: Path) -> None:
    if not _has_cuda():
        pytest.skip("needs a CUDA device")
    out = tmp_path / "snap.pickle"
    done = _record(tmp_path, "--mode", "cuda-memory", "-o", str(out), script=CUDA)
    assert done.returncode == 0, done.stderr
    bundle = load(out)
    assert bundle.format == "cuda_snapshot"
    assert bundle.counts["active_bytes"] >= 64 * MIB
    snap = bundle.cuda_snapshot
    assert snap is not None
    actions = set(snap.trace["action"].astype(str))
    assert {"alloc", "free_completed", "oom"} <= actions
    from perfview.core.pages import summary

    oom = summary.summarize(bundle, "oom")
    assert oom["action"].iloc[-1] == "oom"
