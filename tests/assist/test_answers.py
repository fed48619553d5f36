"""The assistant's answers in-process (no SDK): the rows are `perfview summary`'s, a query is
one read-only SELECT with a row cap, refusals are one sentence, recommendations carry their
evidence slices, a diff is `perfview diff`'s."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.assist import Assistant, AssistError
from perfview.assist.answers import MAX_ROWS
from perfview.core.pages import summary
from tests.conftest import sample

pytest.importorskip("duckdb", reason="queries need the 'query' extra (duckdb)")

PSTATS = "pstats/hypothesis_csv_combined.prof"
PSTATS_B = "pstats/gprof2dot_memtrail.pstats"
RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


@pytest.fixture
def assistant() -> Iterator[Assistant]:
    """An Assistant whose documents (and DuckDB sessions) are closed after the test."""
    made = Assistant()
    yield made
    made.handles.close_all()


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def test_rows_are_the_summary_json(
    capsys: pytest.CaptureFixture[str], assistant: Assistant
) -> None:
    path = str(sample(PSTATS))
    a = assistant
    opened = a.open(path)
    assert opened["format"] == "pstats"
    assert [v["name"] for v in opened["views"]][:2] == ["functions", "callers"]
    for view, top in (("functions", 7), ("callers", 5), ("icicle", 9)):
        got = a.rows(opened["handle"], view, top)
        expected = cli_json(
            capsys, "summary", path, "--view", view, "--top", str(top), "--format", "json"
        )
        produced = got.pop("produced_by")
        assert got == expected
        assert produced["view"] == view
        assert produced["command"].startswith(f"perfview summary {path} --view {view}")


def test_filters_and_row_cap(assistant: Assistant) -> None:
    a = assistant
    handle = a.open(str(sample(PSTATS)))["handle"]
    every = a.rows(handle, "functions", 0)
    assert len(every["rows"]) == min(every["total_rows"], MAX_ROWS)
    hits = a.rows(handle, "functions", 0, contains="CSV", sort_by="ncalls")
    expected = [
        r
        for r in every["rows"]
        if any("csv" in str(v).lower() for v in r.values() if isinstance(v, str))
    ]
    assert hits["total_rows"] == len(expected) > 0
    calls = [r["ncalls"] for r in hits["rows"]]
    assert calls == sorted(calls, reverse=True)
    with pytest.raises(AssistError, match="has no column 'nope'"):
        a.rows(handle, "functions", sort_by="nope")


def test_query_is_capped_and_names_itself(assistant: Assistant) -> None:
    a = assistant
    path = str(sample(PSTATS))
    handle = a.open(path)["handle"]
    doc = a.query(
        handle, "SELECT function, ncalls FROM functions ORDER BY ncalls DESC, function", limit=3
    )
    assert len(doc["rows"]) == 3
    assert doc["truncated"] is True
    count = a.query(handle, "SELECT count(*) AS n FROM functions")
    assert count["rows"] == [{"n": a.rows(handle, "functions")["total_rows"]}]
    assert count["truncated"] is False
    assert count["produced_by"]["query"] == "SELECT count(*) AS n FROM functions"


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("COPY functions TO 'out.csv'", "not a COPY statement"),
        ("CREATE TABLE t AS SELECT 1", "not a CREATE statement"),
        ("SELECT 1; DROP TABLE functions", "one statement per query"),
        ("SET enable_external_access = true", "not a SET statement"),
        ("ATTACH 'other.db'", "not a ATTACH statement"),
        ("SELECT * FROM read_csv('{other}')", "it reads a file"),
    ],
)
def test_writing_or_reading_other_files_is_refused(
    sql: str, why: str, tmp_path: Path, assistant: Assistant
) -> None:
    other = tmp_path / "other.csv"
    other.write_text("a\n1\n")
    a = assistant
    handle = a.open(str(sample(PSTATS)))["handle"]
    with pytest.raises(AssistError) as info:
        a.query(handle, sql.format(other=other))
    message = str(info.value)
    assert message.startswith("query refused: ")
    assert why in message
    assert "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.csv"]


def test_a_slow_query_is_stopped(assistant: Assistant) -> None:
    a = assistant
    a.query_timeout_s = 0.2
    handle = a.open(str(sample(PSTATS)))["handle"]
    slow = "SELECT count(*) FROM range(1000000000000) a"
    with pytest.raises(AssistError, match=r"query stopped after 0.2 s"):
        a.query(handle, slow)


def test_recommendations_carry_their_evidence(
    capsys: pytest.CaptureFixture[str], assistant: Assistant
) -> None:
    path = str(sample(RESNET))
    a = assistant
    handle = a.open(path)["handle"]
    doc = a.recommendations(handle)
    expected = cli_json(
        capsys, "summary", path, "--view", "recommendations", "--top", "0", "--format", "json"
    )
    assert [r["title"] for r in doc["rows"]] == [r["title"] for r in expected["rows"]]
    first = doc["rows"][0]
    assert first["slices"] >= len(first["evidence_slices"]) > 0
    evidence = a.query(handle, first["evidence_query"])
    assert sorted(r["id"] for r in evidence["rows"]) == sorted(first["evidence_slices"])
    other = a.open(str(sample(PSTATS)))["handle"]
    with pytest.raises(AssistError, match="has no recommendations"):
        a.recommendations(other)


def test_diff_is_the_diff_json(capsys: pytest.CaptureFixture[str], assistant: Assistant) -> None:
    pa, pb = str(sample(PSTATS_B)), str(sample(PSTATS))
    a = assistant
    ha, hb = a.open(pa)["handle"], a.open(pb)["handle"]
    got = a.diff(ha, hb, top=5)
    expected = cli_json(capsys, "diff", pa, pb, "--top", "5", "--format", "json")
    assert got.pop("produced_by")["view"] == "functions"
    assert got == expected


def test_errors_are_one_sentence(tmp_path: Path, assistant: Assistant) -> None:
    a = assistant
    with pytest.raises(AssistError, match="no such file"):
        a.open(str(tmp_path / "absent.json"))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{ not json")
    with pytest.raises(AssistError, match=f"cannot open {garbage}"):
        a.open(str(garbage))
    with pytest.raises(AssistError, match="there is no open document 'd9'"):
        a.rows("d9")
    handle = a.open(str(sample(PSTATS)))["handle"]
    with pytest.raises(AssistError, match="view 'ops' needs a trace"):
        a.rows(handle, "ops")


def test_a_folder_of_rank_traces_is_a_job(
    capsys: pytest.CaptureFixture[str], assistant: Assistant
) -> None:
    folder = str(sample("ranks/hta_sampled_2of128"))
    opened = assistant.open(folder)
    assert opened["format"] == "job"
    assert opened["counts"] == {"ranks": 2, "failed": 0}
    assert [v["name"] for v in opened["views"]] == summary.views_for("job")
    got = assistant.rows(opened["handle"], "ranks", 5)
    expected = cli_json(
        capsys, "summary", folder, "--view", "ranks", "--top", "5", "--format", "json"
    )
    assert got.pop("produced_by")["view"] == "ranks"
    assert got == expected
    with pytest.raises(AssistError, match="has no tables to query"):
        assistant.query(opened["handle"], "SELECT 1")


def test_every_registry_view_is_there_what_if_included(
    capsys: pytest.CaptureFixture[str], assistant: Assistant
) -> None:
    """No per-view code: the critical path and the what-if come through the generic rows,
    with the what-if's edits as `perfview summary --edit` takes them."""
    path = str(sample(RESNET))
    opened = assistant.open(path)
    names = [v["name"] for v in opened["views"]]
    assert {"critical-path", "what-if", "recommendations"} <= set(names)
    got = assistant.rows(opened["handle"], "what-if", 4, edits=["data=0"])
    args = ["summary", path, "--view", "what-if", "--top", "4", "--edit", "data=0"]
    expected = cli_json(capsys, *args, "--format", "json")
    assert got.pop("produced_by")["command"] == "perfview " + " ".join([*args, "--format", "json"])
    assert got == expected
