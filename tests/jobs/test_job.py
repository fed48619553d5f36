"""Multi-rank jobs (issue 15): rank files, clocks, collectives matched across ranks, CLI views."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from perfview import cli, job_cli
from perfview.core import pages
from perfview.core.analysis.torch import job_views
from perfview.core.analysis.torch.job import Job, document
from perfview.core.pages import summary
from perfview.jobs import open_job
from tests.conftest import SAMPLES

NCCL = re.compile(r"(?i)\b(?:void )?[rn]ccl")


def job_tables(job: Job) -> dict[str, pd.DataFrame]:
    """Every view of the job, read as `perfview summary` and the Job tab read it: through the
    page registry's job pages."""
    doc = document(job, Path("job"))
    return {view: summary.summarize(doc, view) for view in summary.views_for("job")}


def rank_sets() -> list[Path]:
    folder = SAMPLES / "ranks"
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def needs_ranks() -> list[Path]:
    sets = rank_sets()
    if not sets:
        pytest.skip(f"no rank sets under {SAMPLES / 'ranks'}")
    return sets


def _events(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return list(doc["traceEvents"] if isinstance(doc, dict) else doc)


def nccl_kernel_count(path: Path) -> int:
    """Independent count: kernel events whose name says NCCL/RCCL, straight from the JSON."""
    return sum(
        1
        for e in _events(path)
        if e.get("ph") == "X" and e.get("cat") == "kernel" and NCCL.search(str(e.get("name", "")))
    )


def test_collective_counts_equal_nccl_kernels_per_rank() -> None:
    for folder in needs_ranks():
        job = open_job([folder], workers=1)
        assert not job.failures
        arr = job_views.match(job)
        for red in job.ranks:
            expected = nccl_kernel_count(Path(red.path))
            assert expected > 0
            assert len(red.comms) == expected
            assert int((arr["rank"] == red.rank).sum()) == expected
        table = job_views.collectives_table(job)
        assert int(table["ranks"].sum()) == len(arr)


def test_matched_instances_agree_on_kind_and_size() -> None:
    for folder in needs_ranks():
        job = open_job([folder], workers=1)
        arr = job_views.match(job)
        per = arr.groupby("instance")
        assert (per["kind"].nunique() == 1).all()
        assert (per["rank"].nunique() == per.size()).all()  # a rank appears once per instance
        multi = arr[per["rank"].transform("size") >= 2]
        assert len(multi) > 0, "some collective is matched across ranks"
        # all-to-all(v) legitimately sends a different amount from each rank
        fixed = multi[multi["kind"] != "alltoall"].groupby("instance")
        assert (fixed["bytes"].nunique() == 1).all()


def test_sampled_ranks_use_absolute_clocks_and_find_the_late_rank() -> None:
    folder = needs_ranks()[0]
    job = open_job([folder], workers=1)
    assert job.clock.startswith("absolute clocks")
    assert [r.rank for r in job.ranks] == [0, 1]
    assert [r.source for r in job.ranks] == ["distributedInfo"] * 2
    stragglers = job_views.stragglers_table(job)
    coll = job_views.collectives_table(job)
    multi = coll[coll["ranks"] >= 2]
    worst = int(stragglers["rank"].iloc[0])
    assert int(stragglers["times_last"].iloc[0]) == int((multi["last_rank"] == worst).sum())
    assert (coll["arrival_skew_ns"] >= 0).all()
    assert (coll["wait_ns"] <= coll["arrival_skew_ns"]).all()


def _shifted_copy(src: Path, dst: Path, shift_us: float, rank: int | None) -> None:
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        if isinstance(e.get("ts"), int | float):
            e["ts"] = e["ts"] + shift_us
    if rank is None:
        doc.pop("distributedInfo", None)
    with gzip.open(dst, "wt") as f:
        json.dump(doc, f)


def test_shifted_clock_is_aligned_at_the_first_step(tmp_path: Path) -> None:
    folder = needs_ranks()[0]
    files = sorted(folder.glob("*.json*"))
    shutil.copy(files[0], tmp_path / "a.json.gz")
    _shifted_copy(files[1], tmp_path / "b.json.gz", 3_600e6, rank=1)  # one hour off
    job = open_job([tmp_path], workers=1)
    assert "aligned at its ProfilerStep#" in job.clock
    assert job.offsets[1] == pytest.approx(-3_600e9, abs=1e9)
    reference = open_job([folder], workers=1)
    a = job_views.collectives_table(job)
    b = job_views.collectives_table(reference)
    assert list(a["kind"]) == list(b["kind"])
    assert list(a["ranks"]) == list(b["ranks"])


def test_corrupt_truncated_and_nameless_ranks_are_reported(tmp_path: Path) -> None:
    folder = needs_ranks()[0]
    files = sorted(folder.glob("*.json*"))
    shutil.copy(files[0], tmp_path / "rank-0.json.gz")
    raw = gzip.decompress(files[1].read_bytes())
    (tmp_path / "rank-1.json").write_bytes(raw[: len(raw) // 2])  # truncated
    (tmp_path / "rank-2.json").write_text("this is not a trace")
    _shifted_copy(files[1], tmp_path / "trace_7.json.gz", 0, rank=None)  # rank from its name
    job = open_job([tmp_path], workers=1)
    assert sorted(r.rank for r in job.ranks) == [0, 1, 7]  # a truncated file opens in part
    assert {r.rank: r.source for r in job.ranks}[7] == "file name"
    assert any(w.startswith("rank 1 (rank-1.json): the file is truncated") for w in job.warnings)
    assert [Path(f.path).name for f in job.failures] == ["rank-2.json"]
    assert any("cannot open rank-2.json" in w for w in job.warnings)
    assert any("missing" in w for w in job.warnings)


def test_parallel_workers_give_the_same_tables() -> None:
    folder = needs_ranks()[0]
    serial = open_job([folder], workers=1)
    parallel = open_job([folder], workers=2)
    left, right = job_tables(serial), job_tables(parallel)
    for view, table in left.items():
        pd.testing.assert_frame_equal(table, right[view])


def _summary(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code = cli.main(["summary", *argv, "--format", "json", "--top", "0", "--workers", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


COLUMNS = {
    "ranks": ["rank", "file", "steps", "step_mean_ns", "gpu_busy_pct", "comm_ns", "overlap_pct",
              "straggler_score"],
    "collectives": ["kind", "process_group", "seq", "ranks", "bytes", "arrival_skew_ns",
                    "wait_ns", "transfer_ns", "last_rank", "busbw_gbps"],
    "stragglers": ["rank", "times_last", "mean_lateness_ns", "step_mean_ns"],
    "overlap": ["rank", "comm_ns", "overlap_pct"],
    "collective-kinds": ["process_group", "kind", "instances"],
}  # fmt: skip


@pytest.mark.parametrize("view", list(COLUMNS))
def test_cli_job_views(capsys: pytest.CaptureFixture[str], view: str) -> None:
    folder = needs_ranks()[0]
    doc = _summary(capsys, str(folder), "--view", view)
    assert doc["view"] == view
    assert doc["counts"]["ranks"] == 2
    assert doc["clock"].startswith("absolute")
    assert doc["rows"]
    for col in COLUMNS[view]:
        assert col in doc["rows"][0], col
        if col.endswith("_ns"):
            assert all(isinstance(r[col], int) for r in doc["rows"])


def test_cli_accepts_a_glob_and_several_files(capsys: pytest.CaptureFixture[str]) -> None:
    folder = needs_ranks()[0]
    files = sorted(str(p) for p in folder.glob("*.json*"))
    by_glob = _summary(capsys, str(folder / "*.json.gz"), "--view", "collectives")
    by_files = _summary(capsys, *files, "--view", "collectives")
    assert by_glob["rows"] == by_files["rows"]


def test_cli_job_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = cli.main(["summary", str(tmp_path / "nothing-*.json"), "--view", "collectives"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1
    assert "cannot open" in err


def test_diff_two_jobs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = needs_ranks()[0]
    files = sorted(folder.glob("*.json*"))
    shutil.copy(files[0], tmp_path / files[0].name)  # job B lost its second rank
    code = cli.main(["diff", str(folder), str(folder), "--format", "json", "--top", "0"])
    same = json.loads(capsys.readouterr()[0])
    assert code == 0
    assert same["view"] == "job-ranks"
    assert {r["status"] for r in same["rows"]} == {"="}
    # B adds rank 1, whose steps are slower: the mean step over ranks grows ~0.3 %
    code = cli.main(["diff", str(tmp_path), str(folder), "--format", "json", "--fail-above", "0.1"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "mean step time over ranks grew" in err
    assert json.loads(out)["total_delta_pct"] > 0
    code = cli.main(["diff", str(folder), str(tmp_path), "--view", "job-collectives"])
    assert code == 0
    assert "allgather" in capsys.readouterr()[0]
    code = cli.main(["diff", str(folder), str(tmp_path), "--format", "json"])
    rows = json.loads(capsys.readouterr()[0])["rows"]
    assert {r["rank"]: r["status"] for r in rows}["1"] == "gone"


def test_a_job_is_a_kind_of_document_in_the_page_registry() -> None:
    """Its views, the CLI's cross-rank views and its tabs come from the registry alone."""
    assert summary.views_for("job") == [
        "ranks", "collectives", "collective-kinds", "overlap", "stragglers", "critical-path",
        "critical-path-steps", "what-if",
    ]  # fmt: skip
    assert set(job_cli.CROSS_RANK_VIEWS) == {"collectives", "collective-kinds", "overlap",
                                             "stragglers"}  # fmt: skip
    job = open_job([needs_ranks()[0]], workers=1)
    doc = document(job, needs_ranks()[0])
    assert doc.format == "job"
    assert doc.counts == {"ranks": 2, "failed": 0}
    kind = pages.kind_of(doc)
    assert kind is not None
    assert kind.name == "job"
    tabs = pages.tabs_for(doc)
    assert [(t.name, t.title, t.table) for t in tabs] == [
        ("ranks", "Ranks", "ranks"),
        ("collectives", "Collectives", "collectives"),
        ("collective-kinds", "Collective kinds", "collective-kinds"),
        ("stragglers", "Stragglers", "stragglers"),
        ("overlap", "Overlap", "overlap"),
        ("critical-path-steps", "Critical path", "critical-path-steps"),
        ("heatmap", "Heat map", None),
        ("job-timeline", "Timeline", None),
    ]
    assert summary.default_view(doc) == "ranks"
    pd.testing.assert_frame_equal(summary.summarize(doc, "overlap"), job_views.overlap_table(job))


def test_cli_help_lists_the_job_views(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for view in summary.views_for("job"):
        assert view in out
