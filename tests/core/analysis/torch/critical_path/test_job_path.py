"""A two-rank job whose collective waits for the rank that did 40 µs more CPU work first: that
rank bounds the step, by exactly that much, in the core table and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview import cli
from perfview.core.analysis.torch import job_views
from perfview.jobs import open_job
from tests.core.analysis.torch.critical_path._tiny import US, Ev, launch, op, write

ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float"


def _job(tmp_path: Path) -> Path:
    folder = tmp_path / "job"
    folder.mkdir()
    early: list[Ev] = [launch(5, 5, 1), (ALLREDUCE, "kernel", 12, 68, 1, 7)]
    late: list[Ev] = [op("aten::mm", 5, 40), launch(45, 5, 1), (ALLREDUCE, "kernel", 52, 28, 1, 7)]
    for rank, events in ((0, early), (1, late)):
        info = {"distributedInfo": {"rank": rank, "world_size": 2, "backend": "nccl"}}
        write(folder / f"rank-{rank}.json", events, meta=info)
    return folder


def test_the_late_rank_bounds_the_step(tmp_path: Path) -> None:
    job = open_job([_job(tmp_path)], workers=1)
    rows = job_views.critical_steps_table(job).to_dict("records")
    assert len(rows) == 1
    assert rows[0]["rank"] == 1
    assert rows[0]["late_ns"] == 40 * US  # its collective kernel started 52 - 12 µs later
    assert rows[0]["path_ns"] == rows[0]["step_ns"] == 100 * US
    # rank 1's own path: the step's CPU time after its launch (50 µs), aten::mm, the launch call
    assert rows[0]["top_op"] == "cpu_op: ProfilerStep#1"
    path = job_views.critical_path_table(job)
    assert set(path["rank"]) == {1}
    assert dict(zip(path["name"], path["ns"], strict=True)) == {
        "ProfilerStep#1": 55 * US, "aten::mm": 40 * US, "cudaLaunchKernel": 5 * US,
    }  # fmt: skip


def test_the_job_cli_has_a_rank_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", str(_job(tmp_path)), "--view", "critical-path-steps",
                     "--format", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert (row["step"], row["rank"], row["late_ns"]) == (1, 1, 40 * US)


def test_edits_apply_to_a_jobs_what_if_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = str(_job(tmp_path))
    code = cli.main(["summary", job, "--view", "critical-path-steps", "--edit", "all=0.5"])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "--edit applies to --view what-if only, not 'critical-path-steps'" in err
    code = cli.main(["summary", job, "--view", "what-if", "--edit", "all=0.5", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert row["predicted_ns"] * 2 == pytest.approx(row["measured_ns"], abs=2)
