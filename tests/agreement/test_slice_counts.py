"""The summary header's slice count is the SQL `slices` table's count(*).

The trace loader counts complete and B/E slices apart from async ones (`counts.slices`,
`counts.async`, both kept in the JSON output), while the SQL `slices` table holds all of them.
The header printed "slices 2,690, async 36" where `SELECT count(*) FROM slices` gives 2,726:
it now prints the table's number and how many of them are async.
"""

from __future__ import annotations

import re

import pytest

from perfview.cli import main
from tests.conftest import sample

DEVTOOLS = [
    "chrome_trace/devtools_trace_chrome116.json",
    "chrome_trace/devtools_timeline_chrome65_array.json",
]


@pytest.mark.parametrize("rel", DEVTOOLS)
def test_header_slices_equal_sql_count(rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(sample(rel))
    assert main(["query", "--format", "csv", path, "SELECT count(*) AS n FROM slices"]) == 0
    sql = int(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["summary", path, "--top", "1"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    found = re.search(r"slices ([\d,]+) \(([\d,]+) async\)", header)
    assert found is not None, header
    assert int(found.group(1).replace(",", "")) == sql
    only_async = "SELECT count(*) FROM slices WHERE kind = 'async'"
    assert main(["query", "--format", "csv", path, only_async]) == 0
    n_async = int(capsys.readouterr().out.strip().splitlines()[-1])
    assert int(found.group(2).replace(",", "")) == n_async
