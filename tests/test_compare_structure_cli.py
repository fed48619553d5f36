"""`perfview diff A B --view structure` on two torch recordings.

Fixtures and expectations: tests/core/compare/test_structure.py.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from perfview.cli import main

DATA = Path(__file__).resolve().parent / "data" / "diff"
A = str(DATA / "structure" / "a.pt.trace.json.gz")
B = str(DATA / "structure" / "b.pt.trace.json.gz")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_names_the_first_divergence(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, A, B, "--view", "structure")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2] == "structure: 67 same, 2 changed, 2 inserted, 0 removed, 0 moved"
    assert lines[3].startswith("first divergence: ")
    assert lines[3].endswith("/forward/aten::tanh (inserted)")
    assert lines[6].split() == ["status", "path", "A", "B", "Δ"]
    assert [line.split()[0] for line in lines[8:]] == ["changed", "inserted", "changed", "inserted"]


def test_csv_and_json_carry_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, A, B, "--view", "structure", "--format", "csv", "--top", "0")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["path", "status", "a_ns", "b_ns", "delta_ns"]
    assert len(rows) == 71
    code, out, _err = run(capsys, A, B, "--view", "structure", "--format", "json")
    doc = json.loads(out)
    assert doc["counts"] == {"same": 67, "changed": 2, "inserted": 2, "removed": 0, "moved": 0}
    assert doc["first_divergence"]["status"] == "inserted"
    assert doc["first_divergence"]["a_ns"] is None


def test_structure_needs_two_traces(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, str(DATA / "run_a.prof"), B, "--view", "structure")
    assert code == 2
    assert err.strip().endswith(
        "compares two traces; " + str(DATA / "run_a.prof") + " is a pstats file"
    )
    code, _out, err = run(capsys, A, B, "--view", "structure", "--fail-above", "5")
    assert code == 2
    assert "does not apply" in err
