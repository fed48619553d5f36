"""`perfview summary FILE --view icicle` (alias `tree`): the merged call tree in pre-order."""

from __future__ import annotations

import itertools

import pytest

from tests.conftest import DATA, SAMPLES, sample
from tests.test_cli import run, summary_json

PSTATS = sorted(p.name for p in (SAMPLES / "pstats").glob("*")) if SAMPLES.is_dir() else []
NCCL = "kineto_gpu/hta_nccl_data.json.gz"


@pytest.mark.parametrize("name", PSTATS or ["(no samples)"])
def test_depth_one_rows_add_up_to_the_duration(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    doc = summary_json(capsys, sample(f"pstats/{name}"), "--view", "icicle", "--top", "0")
    assert doc["view"] == "icicle"
    rows = doc["rows"]
    assert list(rows[0]) == ["depth", "name", "file", "total_ns", "self_ns", "calls"]
    assert len(rows) == doc["total_rows"]
    top = sum(r["total_ns"] for r in rows if r["depth"] == 1)
    assert 0.99 <= top / doc["duration_ns"] <= 1.01
    depths = [r["depth"] for r in rows]
    assert depths[0] == 1
    assert all(b <= a + 1 for a, b in itertools.pairwise(depths))  # pre-order


def test_unplaced_time_note_is_a_json_warning(capsys: pytest.CaptureFixture[str]) -> None:
    doc = summary_json(capsys, sample("pstats/hypothesis_csv_combined.prof"), "--view", "tree")
    assert doc["view"] == "tree"
    assert any("could not be placed" in w for w in doc["warnings"])
    assert len(doc["rows"]) == 20  # the default --top
    names = {r["name"] for r in doc["rows"] if r["depth"] == 1}
    assert {"test", "wrapped_test"} <= names


def test_colliding_keys_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    doc = summary_json(capsys, DATA / "module_eval_collision.prof", "--view", "icicle")
    assert any(w.startswith("colliding pstats keys") for w in doc["warnings"])
    top = sum(r["total_ns"] for r in doc["rows"] if r["depth"] == 1)
    assert 0.99 <= top / doc["duration_ns"] <= 1.01


def test_top_keeps_the_heaviest_connected_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(NCCL)
    whole = summary_json(capsys, path, "--view", "icicle", "--top", "0")["rows"]
    cut = summary_json(capsys, path, "--view", "icicle", "--top", "6")["rows"]
    assert len(cut) == 6
    assert cut[0]["depth"] == 1
    assert all(b["depth"] <= a["depth"] + 1 for a, b in itertools.pairwise(cut))
    heaviest = sorted((r["total_ns"] for r in whole), reverse=True)[:6]
    assert sorted((r["total_ns"] for r in cut), reverse=True) == heaviest


def test_trace_lanes(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(NCCL)
    cpu = summary_json(capsys, path, "--view", "icicle", "--top", "0")
    threads = [r["name"] for r in cpu["rows"] if r["depth"] == 1]
    assert threads[:2] == ["pt_main_thread", "pt_autograd_0"]
    assert "PyTorch Profiler (0)" not in {r["name"] for r in cpu["rows"]}
    gpu = summary_json(capsys, path, "--view", "icicle", "--lanes", "gpu", "--top", "0")
    streams = [r["name"] for r in gpu["rows"] if r["depth"] == 1]
    assert streams == ["GPU 0 · stream 7", "GPU 0 · stream 40"]
    one = summary_json(capsys, path, "--view", "icicle", "--lanes", "1", "--top", "0")
    assert one["rows"][0]["name"] != threads[0]
    code, out, err = run(capsys, "summary", str(path), "--view", "icicle", "--lanes", "nope")
    assert code == 2
    assert out == ""
    assert "matches no lane" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "summary", str(path), "--view", "ops", "--lanes", "gpu")
    assert code == 2
    assert "--lanes applies to --view icicle" in err
    pstats = sample("pstats/gprof2dot_print1.pstats")
    code, _, err = run(capsys, "summary", str(pstats), "--view", "icicle", "--lanes", "cpu")
    assert code == 2
    assert "traces only" in err
