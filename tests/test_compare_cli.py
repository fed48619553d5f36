"""`perfview diff A B`: output formats, the regression gate's exit codes, and bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from perfview.cli import main

DIFF = Path(__file__).resolve().parent / "data" / "diff"
A, B = str(DIFF / "run_a.prof"), str(DIFF / "run_b.prof")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_puts_the_slowed_function_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, A, B)
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"A: {A} · pstats")
    assert lines[1].startswith(f"B: {B} · pstats")
    assert lines[2].startswith("total: +")
    assert "view functions, metric tottime_ns, match basename" in lines[3]
    header = lines[5].split()
    assert header[:4] == ["status", "function", "file", "line"]
    first = lines[7].split()
    assert first[:4] == ["+", "hot", "diffwork.py", "18"]
    assert first[-2].startswith("+")
    assert first[-1] == "%"


def test_fail_above_exits_1_and_names_the_regression(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, A, B, "--fail-above", "20")
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith("perfview: regression: total time (pstats total_tt) grew +")
    assert lines[1].startswith("perfview: regression: hot diffwork.py 18: tottime_ns grew +")
    # `hot` grew about 185 %: a gate above that passes.
    assert run(capsys, A, B, "--fail-above", "1000")[0] == 0


def test_same_file_exits_0_with_every_row_equal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, A, A, "--fail-above", "0", "--format", "json", "--top", "0")
    assert code == 0
    doc = json.loads(out)
    assert doc["total_delta_pct"] == 0.0
    assert doc["regressions"] == []
    assert doc["total_rows"] == len(doc["rows"]) > 5
    assert {row["status"] for row in doc["rows"]} == {"="}


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, A, B, "--format", "json", "--top", "3", "--metric", "cumtime_ns")
    assert code == 0
    doc = json.loads(out)
    assert doc["view"] == "functions"
    assert doc["metric"] == "cumtime_ns"
    assert doc["a"]["path"] == A
    assert doc["a"]["format"] == "pstats"
    assert doc["b"]["total"] > doc["a"]["total"] > 0
    expected = (doc["b"]["total"] - doc["a"]["total"]) * 100 / doc["a"]["total"]
    assert doc["total_delta_pct"] == pytest.approx(expected)
    assert len(doc["rows"]) == 3
    assert doc["fail_above"] is None
    deltas = [row["cumtime_ns_delta"] for row in doc["rows"]]
    assert deltas == sorted(deltas, reverse=True)


def test_csv_has_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, A, B, "--format", "csv", "--match", "name")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["function"] == "hot"
    assert rows[0]["status"] == "+"
    for m in ("tottime_ns", "cumtime_ns", "ncalls"):
        assert {f"{m}_a", f"{m}_b", f"{m}_delta", f"{m}_pct"} <= set(rows[0])


def test_unloadable_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "nope.prof")
    code, out, err = run(capsys, A, missing)
    assert code == 2
    assert out == ""
    assert err.startswith(f"perfview: cannot open {missing}: ")
    assert err.count("\n") == 1
    junk = tmp_path / "junk.prof"
    junk.write_bytes(b"\x00\x01 not a profile")
    code, _out, err = run(capsys, str(junk), B)
    assert code == 2
    assert err.startswith(f"perfview: cannot open {junk}: ")
    assert "Traceback" not in err


def test_mismatched_formats_and_bad_metric_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, A, str(DIFF / "run_b.dat"))
    assert code == 2
    assert "cannot compare" in err
    assert err.count("\n") == 1
    code, _out, err = run(capsys, A, B, "--metric", "peak_bytes")
    assert code == 2
    assert "no metric 'peak_bytes'" in err


def test_mprof_pair(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(DIFF / "run_a.dat"), str(DIFF / "run_b.dat"))
    assert code == 0, err
    assert "view memory, metric peak_bytes" in out
    assert "MiB" in out
    gate = run(capsys, str(DIFF / "run_a.dat"), str(DIFF / "run_b.dat"), "--fail-above", "10")
    assert gate[0] == 1
    assert "peak memory grew" in gate[2]


def test_hta_rank_pair_views(capsys: pytest.CaptureFixture[str], samples_dir: Path) -> None:
    a = str(samples_dir / "kineto_gpu" / "hta_sampled_rank-0.json.gz")
    b = str(samples_dir / "kineto_gpu" / "hta_sampled_rank-1.json.gz")
    for view in ("ops", "kernels", "steps"):
        code, out, err = run(capsys, a, b, "--view", view)
        assert code == 0, err
        assert f"view {view}," in out
