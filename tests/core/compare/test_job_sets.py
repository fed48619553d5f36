"""Several runs of a multi-rank job per side, one sample per run (core.compare.job_sets).

Three recordings by scripts/fixtures/make_job_runs_fixtures.py (tests/data/diff/jobs, jobs_r2,
jobs_r3), each of four jobs of four gloo ranks recorded at the same moment: `a` and `a2` the
same program, `op` with `aten::mm` on three times the rows on every rank, `rank` with rank 2's
`aten::mm` on forty times the rows. The recordings were made on a machine whose load changed a
lot between them (the first under heavy load), which is what runs as samples must absorb.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfview import cli
from perfview.core.compare.job_runs import rank_steps
from perfview.core.compare.job_sets import diff_job_sets, run_summary
from perfview.core.compare.runs import RunsComparison
from perfview.core.model.job import Job
from perfview.jobs import open_job

DATA = Path(__file__).resolve().parents[2] / "data" / "diff"
RECORDINGS = [DATA / "jobs", DATA / "jobs_r2", DATA / "jobs_r3"]


@pytest.fixture(scope="module")
def runs() -> dict[str, list[Job]]:
    return {name: [open_job([r / name], workers=1) for r in RECORDINGS]
            for name in ("a", "a2", "op", "rank")}  # fmt: skip


def _flagged(c: RunsComparison, key: str) -> list[tuple[str, str]]:
    t = c.table[c.table["verdict"].isin(["slower", "faster"])]
    return list(zip(t[key].astype(str), t["verdict"], strict=True))


@pytest.mark.parametrize(
    ("view", "metric"),
    [("ranks", "compute_ns"), ("ranks", "step_ns"), ("collectives", "dur_ns"),
     ("collectives", "transfer_ns"), ("collectives", "wait_ns"), ("ops", "self_ns")],
)  # fmt: skip
def test_a_a_over_three_runs_flags_nothing(
    runs: dict[str, list[Job]], view: str, metric: str
) -> None:
    c = diff_job_sets(runs["a"], runs["a2"], view, metric)
    assert c.samples == "runs"
    assert _flagged(c, c.key[0]) == []
    assert c.total.verdict not in ("slower", "faster")


def test_the_slow_rank_is_the_one_flag(runs: dict[str, list[Job]]) -> None:
    """One run alone (jobs_r2) flagged ranks 0, 1 and 3 too (rank 2 took their CPU on a quiet
    machine); over three runs only rank 2 stands out of the runs' spread."""
    c = diff_job_sets(runs["a"], runs["rank"], "ranks")
    assert c.table["rank"].tolist() == ["0", "1", "2", "3"]  # rank order
    assert _flagged(c, "rank") == [("2", "slower")]
    assert (c.table["runs_a"] == 3).all()


def test_the_others_wait_for_the_slow_rank_but_transfer_the_same(
    runs: dict[str, list[Job]],
) -> None:
    dur = diff_job_sets(runs["a"], runs["rank"], "collectives")
    assert _flagged(dur, "kind") == [("allreduce", "slower")]
    transfer = diff_job_sets(runs["a"], runs["rank"], "collectives", "transfer_ns")
    assert _flagged(transfer, "kind") == []


def test_the_slow_op_is_the_one_flag(runs: dict[str, list[Job]]) -> None:
    c = diff_job_sets(runs["a"], runs["op"], "ops")
    assert _flagged(c, "name") == [("aten::mm", "slower")]
    assert c.table.iloc[0]["name"] == "aten::mm"


def test_a_run_summary_is_the_median_over_its_samples(runs: dict[str, list[Job]]) -> None:
    job = runs["a"][0]
    ranks = run_summary(job, "ranks").set_index("rank")
    for red in job.ranks:
        steps = rank_steps(red)
        assert ranks.loc[str(red.rank), "compute_ns"] == pytest.approx(
            float(steps["compute_ns"].median())
        )
    ops = run_summary(job, "ops").set_index("name")
    per_rank = [r.ops.loc[r.ops["name"] == "aten::mm", "self_ns"].sum() for r in job.ranks]
    assert ops.loc["aten::mm", "self_ns"] == pytest.approx(float(np.median(per_rank)))


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["diff", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _sides(a: str, b: str) -> list[str]:
    return ["--baseline", *(str(r / a) for r in RECORDINGS),
            "--candidate", *(str(r / b) for r in RECORDINGS)]  # fmt: skip


def test_cli_gate_names_the_slow_rank(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _diff(capsys, *_sides("a", "rank"), "--view", "ranks", "--fail-above", "50")
    assert code == 1
    assert out.startswith("A: 3 runs (")
    assert "change: ratio of geometric means, Welch t-test on log values;" in out
    lines = [line for line in err.splitlines() if line.startswith("perfview: regression")]
    assert len(lines) == 1
    assert lines[0].startswith("perfview: regression: 2: compute_ns slower")


def test_cli_jobs_flag_for_ops_and_a_a_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _diff(capsys, *_sides("a", "op"), "--jobs", "--view", "ops",
                            "--fail-above", "50")  # fmt: skip
    assert code == 1
    assert err.startswith("perfview: regression: aten::mm: self_ns slower")
    for view in ("ranks", "collectives"):
        code, _out, err = _diff(capsys, *_sides("a", "a2"), "--view", view, "--fail-above", "5")
        assert (code, err) == (0, "")


def test_cli_bad_job_runs_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _diff(capsys, *_sides("a", "a2"), "--jobs")
    assert code == 2
    assert "give --view" in err
    trace = str(RECORDINGS[0] / "a" / "rank-0.pt.trace.json.gz")
    code, _out, err = _diff(capsys, "--baseline", trace, trace, "--candidate", trace, trace,
                            "--view", "ranks")  # fmt: skip
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "a folder of rank traces" in err
