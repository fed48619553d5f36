"""Profile log directories (issue 36): runs, workers and spans as TensorBoard's plugin read them.

The log directory under tests/data/tb_logdir was written by the real
`torch.profiler.tensorboard_trace_handler` with `schedule(wait=1, warmup=1, active=2, repeat=2)`
(`scripts/fixtures/make_tb_logdir.py`): two runs, each two schedule cycles of one process,
so two files `host_PID.TIMESTAMP.pt.trace.json.gz` per run. Expected values are read from the
JSON here, independently of the loaders.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview import cli
from perfview.jobs.logdir import find_runs, open_logdir, stamp_ns, worker_of
from tests.conftest import sample

DATA = Path(__file__).resolve().parents[1] / "data"
LOGDIR = DATA / "tb_logdir"
RANKS = "ranks/hta_sampled_2of128"


def step_durations_ns(path: Path) -> list[float]:
    """ProfilerStep#N durations straight from the JSON (µs → ns)."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    return [
        e["dur"] * 1000.0
        for e in events
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
    ]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = cli.main([*argv, "--format", "json", "--top", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def _summary(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    return _json(capsys, "summary", *argv, "--workers", "1")


def test_handler_file_names_name_the_worker_and_the_time() -> None:
    assert worker_of("my.host_4080.1795828098154.pt.trace.json.gz") == (
        "my.host_4080",
        1795828098154 * 10**6,
    )
    assert worker_of("vm_4080.1795828098154439072.pt.trace.json")[1] == 1795828098154439072
    assert worker_of("rank-0.json.gz") == ("rank-0.json.gz", None)  # off the convention
    assert stamp_ns("1795828098") == 1795828098 * 10**9


def test_runs_workers_and_spans_of_a_tensorboard_log_directory() -> None:
    runs = find_runs(LOGDIR)
    assert [r.name for r in runs] == ["run1", "run2"]
    for run in runs:
        files = sorted((LOGDIR / run.name).glob("*.pt.trace.json.gz"))
        assert len(files) == 2
        (worker,) = run.workers  # two cycles of ONE process: one worker, two spans
        assert worker.name == files[0].name.split(".")[0]
        assert [s.path for s in worker.spans] == files  # the timestamps sort like the names
        assert not run.is_job


def test_runs_view_rows_match_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _summary(capsys, str(LOGDIR), "--view", "runs")
    rows = doc["rows"]
    assert [(r["run"], r["span"]) for r in rows] == [
        ("run1", 1),
        ("run1", 2),
        ("run2", 1),
        ("run2", 2),
    ]
    assert {r["rank"] for r in rows} == {None}  # a lone process states no rank
    for row in rows:
        durs = step_durations_ns(LOGDIR / row["run"] / row["file"])
        assert row["steps"] == len(durs) == 2  # active=2 per cycle
        assert row["step_mean_ns"] == pytest.approx(np.mean(durs), abs=2)
    assert rows[0]["started"] < rows[1]["started"]
    assert _summary(capsys, str(LOGDIR))["view"] == "runs"  # a log directory opens on its runs


def test_two_spans_of_one_process_are_never_two_ranks(capsys: pytest.CaptureFixture[str]) -> None:
    run1 = LOGDIR / "run1"
    doc = _summary(capsys, str(run1), "--view", "ranks")
    (row,) = doc["rows"]  # one worker → one rank, its spans pooled
    durs = [d for f in sorted(run1.iterdir()) for d in step_durations_ns(f)]
    assert row["steps"] == len(durs) == 4
    assert row["step_mean_ns"] == pytest.approx(np.mean(durs), abs=2)
    assert not any("slower" in w for w in doc.get("warnings", []))
    assert _summary(capsys, str(run1))["view"] == "runs"


def test_unrelated_files_do_not_make_a_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copy(DATA / "torch_cpu_small.pt.trace.json.gz", tmp_path / "old.pt.trace.json.gz")
    shutil.copy(next((LOGDIR / "run1").iterdir()), tmp_path / "new.pt.trace.json.gz")
    doc = _summary(capsys, str(tmp_path))
    assert doc["view"] == "runs"
    assert sorted(r["worker"] for r in doc["rows"]) == [
        "new.pt.trace.json.gz",
        "old.pt.trace.json.gz",
    ]
    code = cli.main(["summary", str(tmp_path), "--view", "stragglers", "--workers", "1"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "is not a multi-rank job" in err
    assert "\n" not in err.strip()


def test_a_multi_rank_folder_still_opens_as_a_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ranks = sample(RANKS)
    doc = _summary(capsys, str(ranks))
    assert doc["view"] == "ranks"
    assert [r["rank"] for r in doc["rows"]] == [0, 1]
    assert {r["rank_source"] for r in doc["rows"]} == {"distributedInfo"}
    # Inside a log directory beside a single-process run, each run keeps its own reading.
    shutil.copytree(ranks, tmp_path / "log" / "ddp")
    shutil.copytree(LOGDIR / "run1", tmp_path / "log" / "run1")
    logdir = open_logdir(tmp_path / "log", workers=1)
    assert [(r.name, r.is_job) for r in logdir.runs] == [("ddp", True), ("run1", False)]
    assert list(logdir.table["rank"].dropna()) == [0, 1]


def test_a_job_run_pools_each_ranks_spans(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two schedule cycles of a two-rank job: still two ranks, each with both cycles' steps."""
    ranks = sample(RANKS)
    for rank in (0, 1):
        src = ranks / f"rank-{rank}.json.gz"
        for stamp in (1700000000000, 1700000060000):
            shutil.copy(src, tmp_path / f"rank-{rank}.{stamp}.pt.trace.json.gz")
    doc = _summary(capsys, str(tmp_path), "--view", "ranks")
    assert [r["rank"] for r in doc["rows"]] == [0, 1]
    for row in doc["rows"]:
        durs = step_durations_ns(ranks / f"rank-{row['rank']}.json.gz")
        assert row["steps"] == 2 * len(durs)


def test_diff_two_runs_pools_the_workers_spans(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, "diff", str(LOGDIR / "run1"), str(LOGDIR / "run2"))
    (row,) = doc["rows"]  # one worker on each side, matched
    mean = {
        run: np.mean([d for f in sorted((LOGDIR / run).iterdir()) for d in step_durations_ns(f)])
        for run in ("run1", "run2")
    }
    assert row["step_mean_ns_a"] == pytest.approx(mean["run1"], abs=2)
    assert row["step_mean_ns_b"] == pytest.approx(mean["run2"], abs=2)


def test_a_log_directory_of_several_runs_is_no_side_of_a_diff(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["diff", str(LOGDIR), str(LOGDIR / "run1")])
    _, err = capsys.readouterr()
    assert code == 2
    assert "log directory of 2 runs" in err


def test_diff_spans_follows_the_process_over_spans_and_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = _json(capsys, "diff", str(LOGDIR), "--spans")
    rows = doc["rows"]
    files = sorted(LOGDIR.glob("*/*.pt.trace.json.gz"))  # the stamps order them like their names
    assert [r["file"] for r in rows] == [f.name for f in files]
    assert {r["worker"] for r in rows} == {"the process"}  # one process per run: one series
    means = [float(np.mean(step_durations_ns(f))) for f in files]
    assert [r["step_mean_ns"] for r in rows] == pytest.approx(means, abs=2)
    assert rows[0]["vs_previous_pct"] is None
    for i in range(1, len(rows)):
        want = (means[i] - means[i - 1]) * 100 / means[i - 1]
        assert rows[i]["vs_previous_pct"] == pytest.approx(want, rel=1e-6)
        assert rows[i]["vs_first_pct"] == pytest.approx(
            (means[i] - means[0]) * 100 / means[0], rel=1e-6
        )


def test_diff_needs_two_runs_or_spans(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["diff", str(LOGDIR)]) == 2
    assert "diff needs two runs" in capsys.readouterr().err


def test_a_file_being_written_is_not_whole(tmp_path: Path) -> None:
    from perfview.jobs.logdir import is_whole

    whole = next((LOGDIR / "run1").iterdir())
    data = whole.read_bytes()
    assert is_whole(whole)
    half = tmp_path / "run" / "vm_1.1795828099000.pt.trace.json.gz"
    half.parent.mkdir()
    half.write_bytes(data[: len(data) // 2])
    assert not is_whole(half)
    plain = tmp_path / "run" / "vm_1.1795828099001.pt.trace.json"
    text = gzip.decompress(data)
    plain.write_bytes(text[: len(text) - 40])
    assert not is_whole(plain)
    shutil.copy(whole, tmp_path / "run" / whole.name)
    pending: list[Path] = []
    (run,) = find_runs(tmp_path, pending)
    assert sorted(pending) == sorted([half, plain])  # left for later, not read early
    assert [s.path.name for w in run.workers for s in w.spans] == [whole.name]
    plain.write_bytes(text)
    assert is_whole(plain)
