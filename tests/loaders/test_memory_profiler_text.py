"""memory_profiler line-by-line reports: both header generations, precision, appended reports."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from perfview import loaders
from perfview.core.model import schema
from perfview.core.model.errors import EmptyProfile
from perfview.loaders import memory_profiler_text as mpt
from tests.conftest import sample

MIB = 2.0**20
ROW = re.compile(r"^\s*\d+(\s|$)")


def count_rows(path: Path) -> tuple[int, int]:
    """(rows, executed rows) from the text: lines after a header that start with a number."""
    rows = executed = 0
    in_block = False
    for line in path.read_text().splitlines():
        if line.startswith("Line #"):
            in_block = True
        elif not line.strip():
            in_block = False
        elif in_block and ROW.match(line):
            rows += 1
            executed += " MiB " in line  # rows that never ran have no numbers
    return rows, executed


def test_axelrod_old_format_precision_5() -> None:
    path = sample("memprof_text/axelrod_memory_profiler.log")
    bundle = mpt.load(path)
    report = bundle.lines
    assert report is not None
    schema.validate(report.lines, schema.LINES)
    rows, _ = count_rows(path)
    assert bundle.counts == {"functions": 1, "lines": rows, "reports": 1}
    lines = report.lines
    assert lines["occurrences"].isna().all()  # the column did not exist yet
    first = lines.iloc[0]
    assert (first["line"], first["file"]) == (13, "profile.py")
    assert first["mem_bytes"] == 25.19141 * MIB
    assert lines.loc[lines["line"] == 17, "increment_bytes"].item() == 0.00781 * MIB
    assert lines["mem_bytes"].max() == 35.98438 * MIB
    assert first["content"] == "@profile(precision=precision, stream=fp)"
    assert lines.loc[lines["line"] == 14, "content"].item() == "def main():"
    assert (
        lines.loc[lines["line"] == 17, "content"].item() == '    filename = "data/demo_200_100.csv"'
    )
    assert math.isnan(lines.loc[lines["line"] == 14, "mem_bytes"].item())
    assert report.blocks[["function", "first_line", "n_lines"]].values.tolist() == [
        ["main", 13, rows]
    ]


def test_titanic_current_format() -> None:
    path = sample("memprof_text/titanic_memory_profile.txt")
    bundle = mpt.load(path)
    report = bundle.lines
    assert report is not None
    rows, executed = count_rows(path)
    assert bundle.counts["lines"] == rows == 151  # the file has 157 text lines
    lines = report.lines
    assert lines["occurrences"].notna().sum() == executed == 78
    assert lines.loc[lines["line"] == 20, "occurrences"].item() == 2
    assert lines.loc[lines["line"] == 20, "mem_bytes"].item() == 1399.0 * MIB
    assert lines["mem_bytes"].max() == 1399.0 * MIB
    assert report.blocks["function"].tolist() == ["train_and_log"]
    assert lines["line"].tolist() == list(range(18, 169))
    assert (
        lines.loc[lines["line"] == 21, "content"].item() == "        mlflow.set_tag('Dev', 'mrlz')"
    )


@pytest.mark.parametrize(
    "rel", ["memprof_text/axelrod_memory_profiler.log", "memprof_text/titanic_memory_profile.txt"]
)
def test_samples_load_under_neutral_name(rel: str, tmp_path: Path) -> None:
    neutral = tmp_path / "unknown"
    shutil.copy(sample(rel), neutral)
    assert loaders.detect(neutral) is mpt
    assert loaders.load(neutral).counts["lines"] == count_rows(neutral)[0]


def test_fixture_two_appended_reports(data_dir: Path) -> None:
    path = data_dir / "memprof_report.txt"
    bundle = loaders.load(path)
    assert bundle.format == "memprof_text"
    report = bundle.lines
    assert report is not None
    rows, executed = count_rows(path)
    assert bundle.counts == {"functions": 4, "lines": rows, "reports": 2}
    blocks = report.blocks
    assert blocks["function"].tolist() == ["build", "twice", "build", "twice"]
    assert blocks["report"].tolist() == [0, 0, 1, 1]
    assert blocks["first_line"].tolist() == [2, 12, 2, 12]
    assert blocks["n_lines"].tolist() == [8, 5, 8, 5]
    lines = report.lines
    assert lines["occurrences"].notna().sum() == executed
    build: Any = lines[lines["block"] == 0].set_index("line")
    assert build.loc[5, "occurrences"] == 300006  # the list comprehension's iterations
    assert build.loc[5, "increment_bytes"] < 0  # memory_profiler reports negative increments
    assert build.loc[4, "content"] == "    data = [0] * n"
    assert build.loc[6, "content"] == ""
    assert build.loc[7, "content"] == "    # a comment and a blank line above"
    assert math.isnan(build.loc[7, "mem_bytes"])


def test_repeated_block_starts_a_new_report(tmp_path: Path) -> None:
    block = (
        "Filename: a.py\n\n"
        "Line #    Mem usage    Increment  Occurrences   Line Contents\n"
        "=============================================================\n"
        "     1     10.0 MiB     10.0 MiB           1   @profile\n"
        "     2                                         def f():\n"
        "     3     12.5 MiB      2.5 MiB           1       x = [1] * 10**6\n\n\n"
    )
    path = tmp_path / "calls.txt"
    path.write_text(block * 3)
    bundle = mpt.load(path)
    assert bundle.counts == {"functions": 3, "lines": 9, "reports": 3}
    report = bundle.lines
    assert report is not None
    assert report.lines["report"].tolist() == [0] * 3 + [1] * 3 + [2] * 3
    assert report.lines["increment_bytes"].iat[2] == 2.5 * MIB


def test_wide_values_overflow_their_column(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_text(
        "Filename: b.py\n\n"
        "Line #    Mem usage    Increment   Line Contents\n"
        "================================================\n"
        "     7 123456.12345 MiB -2345.67891 MiB   @profile\n"
        "     8                             def g():\n"
    )
    lines = mpt.load(path).lines
    assert lines is not None
    assert lines.lines["mem_bytes"].iat[0] == 123456.12345 * MIB
    assert lines.lines["increment_bytes"].iat[0] == -2345.67891 * MIB
    assert lines.lines["content"].tolist() == ["@profile", "def g():"]
    assert lines.blocks["function"].tolist() == ["g"]


def test_no_blocks(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("Filename: a.py\n\nLine #    Mem usage    Increment   Line Contents\n")
    with pytest.raises(EmptyProfile):
        mpt.load(path)
