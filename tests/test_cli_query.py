"""`perfview query FILE SQL`: DuckDB over real samples, checked against the summary command.

Slice counts must equal `perfview summary`'s counts on every trace sample; the kernels ↔ ops
join must reproduce the op → kernel view; a bad query exits 2 with one line, no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from perfview import cli
from perfview.core.analysis import query
from perfview.core.analysis.query_examples import EXAMPLES, Example, examples_for
from perfview.core.analysis.torch import op_kernels
from perfview.loaders import load
from tests.conftest import ROOT, SAMPLES, sample

pytest.importorskip("duckdb", reason="the query extra (duckdb) is not installed")

TRACE_GPU = "kineto_gpu/hta_nccl_data.json.gz"
ROCM = "kineto_gpu/hta_mi250_rocm6.2.json.gz"
PSTATS = "pstats/hypothesis_csv_combined.prof"
TRACE_DIRS = ("kineto_gpu", "kineto_cpu", "chrome_trace")


def _trace_samples() -> list[Path]:
    if not SAMPLES.is_dir():
        return []
    return sorted(p for d in TRACE_DIRS for p in (SAMPLES / d).glob("*") if p.is_file())


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def query_rows(capsys: pytest.CaptureFixture[str], path: Path, sql: str) -> list[dict]:
    code, out, err = run(capsys, "query", str(path), sql, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["total_rows"] == len(doc["rows"])
    return list(doc["rows"])


@pytest.mark.parametrize("path", _trace_samples(), ids=lambda p: p.name)
def test_slice_count_equals_summary_counts(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, err = run(capsys, "summary", str(path), "--format", "json", "--top", "1")
    assert code == 0, err
    counts = json.loads(out)["counts"]
    rows = query_rows(
        capsys,
        path,
        "SELECT (SELECT count(*) FROM slices) AS n, "
        "(SELECT count(*) FROM slices WHERE kind = 'async') AS n_async, "
        "(SELECT count(*) FROM instants) AS n_instants, (SELECT count(*) FROM flows) AS n_flows",
    )
    assert rows[0]["n"] == counts["slices"] + counts["async"]
    assert rows[0]["n_instants"] == counts["instants"]
    assert rows[0]["n_flows"] == counts["flows"]


@pytest.mark.parametrize(
    ("rel", "table", "count"),
    [
        ("pstats/hypothesis_csv_combined.prof", "functions", "functions"),
        ("pstats/hypothesis_csv_combined.prof", "edges", "edges"),
        ("mprof_dat/seqsharp_mprof_children.dat", "samples", "samples"),
        ("memprof_text/titanic_memory_profile.txt", "lines", "lines"),
    ],
)
def test_other_formats_have_their_tables(
    capsys: pytest.CaptureFixture[str], rel: str, table: str, count: str
) -> None:
    path = sample(rel)
    _, out, _ = run(capsys, "summary", str(path), "--format", "json", "--top", "1")
    rows = query_rows(capsys, path, f"SELECT count(*) AS n FROM {table}")
    assert rows[0]["n"] == json.loads(out)["counts"][count]


def test_kernels_joined_to_ops_equal_the_op_kernel_view(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(TRACE_GPU)
    sql = """
        SELECT coalesce(o.name, '(no op)') AS op, k.name AS kernel, k.kind AS kind,
               count(*) AS calls, sum(k.dur) AS total_ns, min(k.dur) AS min_ns,
               max(k.dur) AS max_ns
        FROM kernels k LEFT JOIN ops o ON o.id = k.op
        GROUP BY ALL"""
    got = pd.DataFrame(query_rows(capsys, path, sql))
    want = op_kernels.op_kernels_table(load(path).timeline)  # type: ignore[arg-type]
    assert len(want) > 50
    key = ["op", "kernel", "kind"]
    cols = [*key, "calls", "total_ns", "min_ns", "max_ns"]
    text = {"op": object, "kernel": object, "kind": object}
    got = got[cols].astype(text).sort_values(key).reset_index(drop=True)
    want = want[cols].astype(text).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)


def test_kernel_links_follow_the_correlation_id(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(TRACE_GPU)
    rows = query_rows(
        capsys,
        path,
        "SELECT count(*) AS linked, count(*) FILTER (WHERE r.corr <> k.corr) AS wrong, "
        "count(*) FILTER (WHERE r.kind <> 'runtime') AS not_runtime "
        "FROM kernels k JOIN slices r ON r.id = k.runtime",
    )
    links = op_kernels.launches(load(path).timeline)  # type: ignore[arg-type]
    assert rows[0] == {
        "linked": int((links["runtime_row"] >= 0).sum()),
        "wrong": 0,
        "not_runtime": 0,
    }
    assert rows[0]["linked"] > 1000


def test_args_are_json_text(capsys: pytest.CaptureFixture[str]) -> None:
    rows = query_rows(
        capsys,
        sample(ROCM),
        "SELECT s.name, a.args->>'correlation' AS corr FROM args a JOIN slices s "
        "ON s.id = a.slice WHERE s.kind = 'kernel' ORDER BY s.ts LIMIT 1",
    )
    assert rows == [{"name": rows[0]["name"], "corr": "118"}]


def test_bad_query_is_one_line_and_exit_2() -> None:
    """The real process: exit 2, DuckDB's message on one line, no traceback."""
    for sql in ("SELEC name FROM slices", "SELECT nope FROM slices", "SELECT * FROM nothing"):
        proc = subprocess.run(
            [sys.executable, "-m", "perfview", "query", str(sample(ROCM)), sql],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert proc.returncode == 2
        assert proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("perfview: query failed: ")
        assert "Traceback" not in proc.stderr


def test_queries_cannot_read_other_files(capsys: pytest.CaptureFixture[str]) -> None:
    sql = f"SELECT * FROM read_csv('{__file__}')"
    code, out, err = run(capsys, "query", str(sample(ROCM)), sql)
    assert code == 2
    assert out == ""
    assert "disabled by configuration" in err


def test_missing_duckdb_says_how_to_get_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query, "available", lambda: False)
    code, _, err = run(capsys, "query", str(sample(ROCM)), "SELECT 1")
    assert code == 2
    assert err.strip() == f"perfview: {query.INSTALL_HINT}"


def test_table_and_csv_output(capsys: pytest.CaptureFixture[str]) -> None:
    sql = "SELECT name, sum(dur) AS total_ns FROM slices GROUP BY 1 ORDER BY 2 DESC LIMIT 3"
    code, out, _ = run(capsys, "query", str(sample(ROCM)), sql)
    assert code == 0
    assert out.splitlines()[0].split() == ["name", "total_ns"]
    assert "ms" in out.splitlines()[2]
    assert out.rstrip().endswith("(3 rows)")
    code, out, _ = run(capsys, "query", str(sample(ROCM)), sql, "--format", "csv")
    assert out.splitlines()[1] == "ProfilerStep#1,10319659"


def test_interrupt_stops_a_running_query() -> None:
    session = query.QuerySession(load(sample(ROCM)))
    errors: list[Exception] = []

    def work() -> None:
        try:
            session.run("SELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3")
        except query.QueryError as exc:
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 30
    while thread.is_alive() and time.monotonic() < deadline:
        session.interrupt()
        thread.join(0.05)
    assert not thread.is_alive()
    assert errors
    assert "nterrupt" in str(errors[0])
    session.close()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.title)
def test_examples_run_on_a_real_trace(example: Example) -> None:
    bundle = load(sample(TRACE_GPU) if "functions" not in example.needs else sample(PSTATS))
    session = query.QuerySession(bundle)
    assert example in examples_for(session.tables)
    frame = session.run(example.sql)
    session.close()
    assert len(frame) > 0


def test_the_query_docs_document_every_table() -> None:
    reference = (ROOT / "docs" / "query.md").read_text(encoding="utf-8")
    for name, doc in query.TABLES.items():
        assert f"| `{name}` | {doc.description} |" in reference, name


def test_sql_alone_links_kernels_to_ops_by_correlation_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """From the raw columns only: kernel → runtime call with its correlation id → nearest
    enclosing cpu_op. Equals the link the kernels table (core.analysis.torch.op_kernels) gives."""
    sql = """
        WITH RECURSIVE rt AS (
            SELECT corr, min(id) AS id FROM slices
            WHERE kind = 'runtime' AND corr >= 0 GROUP BY corr
        ), up(kernel, slice) AS (
            SELECT k.id, s.parent FROM kernels k
            JOIN rt ON rt.corr = k.corr JOIN slices s ON s.id = rt.id
            UNION ALL
            SELECT up.kernel, s.parent FROM up JOIN slices s ON s.id = up.slice
            WHERE s.kind <> 'cpu_op' AND s.parent >= 0
        )
        SELECT up.kernel, up.slice AS op FROM up JOIN slices s ON s.id = up.slice
        WHERE s.kind = 'cpu_op' ORDER BY 1"""
    by_sql = {(r["kernel"], r["op"]) for r in query_rows(capsys, sample(TRACE_GPU), sql)}
    linked = query_rows(
        capsys, sample(TRACE_GPU), "SELECT id, op FROM kernels WHERE via = 'correlation'"
    )
    assert by_sql == {(r["id"], r["op"]) for r in linked}
    assert len(by_sql) > 1000
