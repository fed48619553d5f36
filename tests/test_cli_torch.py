"""`perfview summary` for the torch pages: same numbers as the core functions and the JSON."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from perfview import cli
from perfview.core.analysis.torch import overview
from tests.conftest import sample
from tests.core.analysis.torch._raw import NCCL, RANK0, RANK1, RESNET_2021, events, ns, timeline

KERNEL_COLUMNS = ["name", "calls", "total_ns", "mean_ns", "min_ns", "max_ns"]
LAUNCH_COLUMNS = ["grid", "block", "registers_per_thread", "shared_memory_bytes", "occupancy_pct",
                  "tensor_cores", "op"]  # fmt: skip


def summary(capsys: pytest.CaptureFixture[str], path: Path, view: str, *args: str) -> dict:
    code = cli.main(["summary", str(path), "--view", view, "--format", "json", "--top", "0", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("rel", [NCCL, RESNET_2021])
def test_kernels_view(capsys: pytest.CaptureFixture[str], rel: str) -> None:
    doc = summary(capsys, sample(rel), "kernels")
    rows = doc["rows"]
    assert list(rows[0])[:6] == KERNEL_COLUMNS
    assert set(LAUNCH_COLUMNS) <= set(rows[0])
    raw = events(rel, "kernel")
    assert {r["name"]: r["calls"] for r in rows} == dict(Counter(e["name"] for e in raw))
    total = sum(ns(e["dur"]) for e in raw)
    assert abs(sum(r["total_ns"] for r in rows) - total) <= len(raw)


def test_overview_view(capsys: pytest.CaptureFixture[str]) -> None:
    doc = summary(capsys, sample(NCCL), "overview")
    values = {(r["section"], r["key"]): r for r in doc["rows"]}
    stats = overview.step_stats(timeline(NCCL))
    assert values[("steps", "count")]["number"] == stats.count == 3
    assert values[("steps", "step_mean_ns")]["number"] == pytest.approx(stats.mean_ns)
    assert values[("gpu:0", "name")]["value"] == "NVIDIA A100-PG509-200"


def test_steps_view(capsys: pytest.CaptureFixture[str]) -> None:
    doc = summary(capsys, sample(RESNET_2021), "steps")
    raw = {
        int(e["name"].split("#")[1]): ns(e["dur"])
        for e in events(RESNET_2021, "Operator")
        if e["name"].startswith("ProfilerStep#")
    }
    assert {r["step"]: r["dur_ns"] for r in doc["rows"]} == raw


@pytest.mark.parametrize(
    ("rel", "view", "column"),
    [
        (RESNET_2021, "memory", "peak_allocated_bytes"),
        (RESNET_2021, "allocations", "size_bytes"),
        (RESNET_2021, "operators", "device_total_ns"),
        (RESNET_2021, "op-kernels", "kernel"),
        (RANK0, "utilization", "utilization_pct"),
        (RANK0, "ranks", "step_mean_ns"),
        (RANK0, "recommendations", "evidence"),
    ],
)
def test_torch_views_have_rows(
    capsys: pytest.CaptureFixture[str], rel: str, view: str, column: str
) -> None:
    doc = summary(capsys, sample(rel), view)
    assert doc["rows"], f"{view} is empty"
    assert all(column in r for r in doc["rows"])


def test_table_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", str(sample(RESNET_2021)), "--view", "overview"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Tesla V100-DGXS-32GB" in out
    assert "dataloader_pct" in out


def test_ranks_view_on_a_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copy(sample(RANK0), tmp_path / "first.json.gz")
    shutil.copy(sample(RANK1), tmp_path / "second.json.gz")
    doc = summary(capsys, tmp_path, "ranks")
    assert [r["rank"] for r in doc["rows"]] == [0, 1]
    assert sum(r["slowest"] for r in doc["rows"]) == 1


def test_folder_needs_the_ranks_view(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = cli.main(["summary", str(tmp_path), "--view", "kernels"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "only --view ranks" in err
    code = cli.main(["summary", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "no .json" in err
