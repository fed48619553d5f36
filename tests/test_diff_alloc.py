"""`perfview diff` on two CUDA snapshots and on two memray captures: delta by bytes."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from perfview.core.compare.diff import diff_profiles
from perfview.loaders import load

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20


def _diff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfview", "diff", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_cuda_snapshots_delta_by_bytes(data_dir: Path, tmp_path: Path) -> None:
    a = data_dir / "cuda_snapshot_new.pickle"
    data = pickle.loads(a.read_bytes())  # our own fixture: trusted, plain pickle is fine here
    data["segments"][0]["blocks"][0]["size"] = 9 * MIB  # forward (model.py:10) grows by 4 MiB
    b = tmp_path / "b.pickle"
    b.write_bytes(pickle.dumps(data, protocol=4))
    comparison = diff_profiles(load(a), load(b))
    assert comparison.view == "live-bytes"
    assert comparison.total_b - comparison.total_a == 4 * MIB
    row = comparison.table.set_index("site").loc["forward (model.py:10)"]
    assert row["size_bytes_delta"] == 4 * MIB
    assert row["status"] == "+"
    done = _diff(str(a), str(b), "--format", "json", "--fail-above", "10")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    assert doc["rows"][0]["site"] == "forward (model.py:10)"
    assert "regression" in done.stderr


def _capture(folder: Path, mib: int) -> Path:
    folder.mkdir()
    script = folder / "job.py"  # same name in both runs: rows match by file name and line
    script.write_text(f"keep = bytearray({mib} * 2**20)\ndel keep\n")
    out = folder / "out.bin"
    subprocess.run(
        [sys.executable, "-m", "memray", "run", "-q", "-o", str(out), str(script)],
        check=True,
        timeout=120,
        cwd=folder,
    )
    return out


def test_memray_captures_delta_by_bytes(tmp_path: Path) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    a = _capture(tmp_path / "a", 32)
    b = _capture(tmp_path / "b", 48)
    comparison = diff_profiles(load(a), load(b))
    assert comparison.view == "peak"
    row = comparison.table.set_index("location").loc["<module> (job.py:1)"]
    assert row["size_bytes_delta"] == 16 * MIB
    assert abs((comparison.total_b - comparison.total_a) - 16 * MIB) < 0.01 * 16 * MIB
    done = _diff(str(a), str(b), "--view", "leaks", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total_label"] == "leaked bytes"
