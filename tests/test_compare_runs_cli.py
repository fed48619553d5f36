"""`perfview diff --baseline … --candidate …`: several runs per side from the command line.

Fixtures: tests/data/diff/runs (scripts/fixtures/make_runs_fixtures.py; see
tests/core/compare/test_runs.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from perfview.cli import main

DATA = Path(__file__).resolve().parent / "data" / "diff"
RUNS = DATA / "runs"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def side(variant: str, numbers: range) -> list[str]:
    return [str(RUNS / f"{variant}_{i}.prof") for i in numbers]


A = side("a", range(1, 6))


def test_gate_fails_on_the_one_slowed_function(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--baseline", *A, "--candidate", *side("b", range(1, 6)),
                         "--fail-above", "5")  # fmt: skip
    assert code == 1
    rows = [line for line in err.splitlines() if "tottime_ns" in line]
    assert len(rows) == 1
    assert rows[0].startswith("perfview: regression: parse pipeline.py 17: tottime_ns slower +")
    lines = out.splitlines()
    assert lines[0].startswith(f"A: 5 runs ({A[0]} … {A[-1]}) · pstats")
    assert "1 slower, 0 faster" in lines[3]
    # 6 rows tested (`disable`, 1 µs, is under 0.1 %: `small`); 5 runs a side reach α/6 = 0.0083
    # with a rank test (best p 2/252 = 0.0079)
    assert "1 slower, 0 faster, 0 unchanged, 5 noise, 1 small" in lines[3]
    assert lines[4].startswith(
        "change: Hodges-Lehmann shift, Mann-Whitney rank-test interval; Benjamini-Hochberg over "
        "6 rows (false discovery rate 5 %, asked 95 %): 1 selected, 99.21 % interval per row"
    )
    assert lines[6].split()[:5] == ["verdict", "function", "file", "line", "tottime"]
    assert lines[8].split()[:2] == ["slower", "parse"]
    assert all(not line.startswith(("slower", "faster")) for line in lines[9:])


def test_small_share_slowdown_fails_the_gate_alone(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "--baseline", *A, "--candidate", *side("c", range(1, 6)),
                          "--fail-above", "5")  # fmt: skip
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1  # the total grew ~1 %: not gated
    assert lines[0].startswith("perfview: regression: checksum pipeline.py 38: tottime_ns slower")


def test_a_against_a_passes_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--baseline", *A, "--candidate", *side("a", range(6, 11)),
                         "--fail-above", "5", "--format", "json", "--top", "0")  # fmt: skip
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["regressions"] == []
    assert {row["verdict"] for row in doc["rows"]} <= {"noise", "unchanged", "small"}
    assert doc["method"] == "Hodges-Lehmann shift, Mann-Whitney rank-test interval"
    assert doc["correction"] == {
        "method": "Benjamini-Hochberg",
        "rows_tested": 6,
        "rows_selected": 0,
        "row_level": pytest.approx(1 - 0.05 / 6),
    }
    assert len(doc["a"]["totals"]) == len(doc["b"]["totals"]) == 5


def test_three_runs_a_side_find_the_slowed_function(capsys: pytest.CaptureFixture[str]) -> None:
    # a rank test cannot go below p = 0.1 at 3 a side: the Welch t-test on logs, named
    code, out, err = run(capsys, "--baseline", *A[:3], "--candidate", *side("c", range(1, 4)),
                         "--fail-above", "5")  # fmt: skip
    assert code == 1
    assert "change: ratio of geometric means, Welch t-test on log values;" in out
    assert len(err.splitlines()) == 1
    assert err.startswith("perfview: regression: checksum pipeline.py 38: tottime_ns slower")
    code, out, err = run(capsys, "--baseline", *A[:3], "--candidate", *side("a", range(6, 9)),
                         "--fail-above", "5")  # fmt: skip
    assert (code, err) == (0, "")
    assert "0 slower, 0 faster" in out


def test_a_big_change_that_is_noise_does_not_fail(capsys: pytest.CaptureFixture[str]) -> None:
    # `pipeline` (466 µs) moves by -40 % from run to run: reported, not flagged
    code, out, err = run(capsys, "--baseline", *A, "--candidate", *side("a", range(6, 11)),
                         "--fail-above", "5", "--top", "0")  # fmt: skip
    assert (code, err) == (0, "")
    row = next(line for line in out.splitlines() if " pipeline " in line)
    assert row.startswith("noise")
    assert abs(float(row.split("%")[0].split()[-1])) > 30


def test_folders_and_globs_name_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "base"
    folder.mkdir()
    for path in A:
        shutil.copy(path, folder)
    code, out, _err = run(capsys, "--baseline", str(folder), "--candidate",
                          str(RUNS / "b_*.prof"), "--format", "csv")  # fmt: skip
    assert code == 0
    header = out.splitlines()[0].split(",")
    assert {"verdict", "change_pct", "ci_low_pct", "ci_high_pct", "p_value"} <= set(header)
    assert out.splitlines()[1].startswith("parse,")


def test_one_run_per_side_is_the_two_run_diff(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = str(DATA / "run_a.prof"), str(DATA / "run_b.prof")
    assert run(capsys, "--baseline", a, "--candidate", b, "--fail-above", "20") == run(
        capsys, a, b, "--fail-above", "20"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--baseline", A[0], A[1]], "--baseline and --candidate go together"),
        (["X", "--baseline", A[0], "--candidate", A[1]], "either two runs (A B) or"),
        ([A[0]], "diff needs two runs"),
        (["--baseline", A[0], A[1], "--candidate", "no-such-*.prof"], "no candidate runs in"),
        (["--baseline", *A[:2], "--candidate", str(DATA / "run_a.dat"), str(DATA / "run_b.dat")],
         "cannot compare the baseline with the candidate runs: cannot compare runs of different"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2
    assert len(err.splitlines()) == 1
    assert message in err


def test_bad_confidence_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "--baseline", *A, "--candidate", *A, "--confidence", "100")
    assert code == 2
    assert "above 50 and below 100" in err


# Torch traces (scripts/fixtures/make_torch_runs_fixtures.py): in `b_*` the input of aten::mm
# has twice the rows; op times are wall-clock times recorded on a busy machine, so only a large
# effect stands out of the noise, and the A/A runs only need to pass the gate.
TORCH = DATA / "torch_runs"


def torch_side(variant: str, numbers: range) -> list[str]:
    return [str(TORCH / f"{variant}_{i}.pt.trace.json.gz") for i in numbers]


def test_torch_runs_flag_the_op_whose_input_grew(capsys: pytest.CaptureFixture[str]) -> None:
    # 18 ops tested together: with 10 baseline runs the rank test reaches α/18
    code, out, err = run(capsys, "--baseline", *torch_side("a", range(1, 11)), "--candidate",
                         *torch_side("b", range(1, 6)), "--view", "ops", "--top", "0",
                         "--fail-above", "5")  # fmt: skip
    assert code == 1
    assert "Hodges-Lehmann shift, Mann-Whitney rank-test interval; Benjamini-Hochberg" in out
    gate = err.splitlines()  # the total grew with it (10 runs reach it too): true, and gated
    assert len(gate) == 2
    assert gate[0].startswith("perfview: regression: time in operators (sum of op self time)")
    assert gate[1].startswith("perfview: regression: aten::mm: self_ns slower")
    flagged = [
        line.split()[:2] for line in out.splitlines() if line.startswith(("slower", "faster"))
    ]
    assert flagged == [["slower", "aten::mm"]]


def test_torch_five_runs_a_side_test_only_the_ops_that_matter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """5 runs a side of wall-clock op times on a busy machine: aten::mm's Welch p is 0.0028
    (one baseline run at 42 ms against ~75). Among all 18 ops (the 0.05/18 = 0.0028 of the
    first row) it misses; the 11 ops under 0.1 % of the time are `small`, not tested, and
    among the 7 left (0.05/7) it is the one flag. `--min-share 0` tests all 18."""
    argv = ["--baseline", *torch_side("a", range(1, 6)), "--candidate",
            *torch_side("b", range(1, 6)), "--view", "ops", "--top", "0",
            "--fail-above", "5"]  # fmt: skip
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert "Welch t-test on log values; Benjamini-Hochberg over 7 rows" in out
    assert "1 slower, 0 faster, 0 unchanged, 6 noise, 11 small" in out
    assert len(err.splitlines()) == 1
    assert "aten::mm:" in err
    flagged = [
        line.split()[:2] for line in out.splitlines() if line.startswith(("slower", "faster"))
    ]
    assert flagged == [["slower", "aten::mm"]]
    code, out, err = run(capsys, *argv, "--min-share", "0")
    assert (code, err) == (0, "")
    assert "Benjamini-Hochberg over 18 rows" in out
    assert "0 slower, 0 faster" in out


def test_changes_of_ten_times_or_more_print_as_a_factor() -> None:
    """Tiny rows from few runs have intervals like +7,409,863 %: printed as ×74,100."""
    from perfview.compare_runs_cli import interval_text

    assert interval_text(-12.5, 35516.8) == "[-12.5 %, ×356]"
    assert interval_text(2.4, 7_409_863.0) == "[+2.4 %, ×74,100]"
    assert interval_text(-99.3, 899.0) == "[-99.3 %, +899.0 %]"
    assert interval_text(float("-inf"), float("inf")) == "unbounded"
