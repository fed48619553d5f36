"""`perfview summary` on real samples of every format, every view and every output format.

Most tests call `cli.main([...])` in-process (fast); a few run `python -m perfview` to check
the real process: exit codes, one-line errors, no traceback.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import marshal
import pstats
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from perfview import __version__, cli
from tests.conftest import ROOT, sample

PSTATS = "pstats/hypothesis_csv_combined.prof"
TRACE_CPU = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"  # record_shapes + [memory]
TRACE_GPU = "kineto_gpu/hta_sampled_rank-0.json.gz"
CHROME = "chrome_trace/catapult_flow.json"
MPROF = "mprof_dat/seqsharp_mprof_children.dat"
MEMPROF = "memprof_text/titanic_memory_profile.txt"
PY2_PSTATS = "odd/gprof2dot_py2_cProfile.pstats"

# (sample, view, a column every row of that view has)
VIEW_CASES = [
    (PSTATS, "functions", "cumtime_ns"),
    (PSTATS, "callers", "callee"),
    (TRACE_CPU, "ops", "self_ns"),
    (TRACE_CPU, "ops-by-shape", "shape"),
    (TRACE_GPU, "kernels", "total_ns"),
    (TRACE_GPU, "lanes", "busy_ns"),
    (TRACE_CPU, "memory", "peak_allocated_bytes"),
    (MPROF, "memory", "peak_bytes"),
    (MPROF, "samples", "rss_bytes"),
    (MEMPROF, "lines", "increment_bytes"),
    (MEMPROF, "functions", "peak_mem_bytes"),
    (CHROME, "ops", "total_ns"),
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def summary_json(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict:
    code, out, err = run(capsys, "summary", str(path), "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
@pytest.mark.parametrize(("rel", "view", "column"), VIEW_CASES)
def test_every_view_in_every_format(
    capsys: pytest.CaptureFixture[str], rel: str, view: str, column: str, fmt: str
) -> None:
    path = sample(rel)
    code, out, err = run(capsys, "summary", str(path), "--view", view, "--format", fmt)
    assert code == 0, err
    assert err == ""
    if fmt == "json":
        doc = json.loads(out)
        assert set(doc) >= {"format", "counts", "duration_ns", "warnings", "view", "rows"}
        assert doc["view"] == view
        assert 0 < len(doc["rows"]) <= 20
        assert all(column in row for row in doc["rows"])
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert 0 < len(rows) <= 20
        assert column in rows[0]
    else:
        first = out.splitlines()[0]
        assert str(path) in first
        assert f"view {view}:" in out
        assert column in out


def test_pstats_counts_match_pstats_module(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(PSTATS)
    stats = pstats.Stats(str(path))
    doc = summary_json(capsys, path, "--top", "0")
    assert doc["format"] == "pstats"
    assert doc["view"] == "functions"  # the default view for cProfile
    assert doc["counts"]["calls"] == stats.total_calls  # type: ignore[attr-defined]
    assert doc["counts"]["primitive_calls"] == stats.prim_calls  # type: ignore[attr-defined]
    assert doc["duration_ns"] == pytest.approx(stats.total_tt * 1e9, abs=1000)  # type: ignore[attr-defined]
    rows = doc["rows"]
    assert len(rows) == len(stats.stats) == doc["counts"]["functions"]  # type: ignore[attr-defined]
    assert sum(r["ncalls"] for r in rows) == stats.total_calls  # type: ignore[attr-defined]
    top_ct = max(v[3] for v in stats.stats.values())  # type: ignore[attr-defined]
    assert rows[0]["cumtime_ns"] == pytest.approx(top_ct * 1e9, abs=1000)
    cumtimes = [r["cumtime_ns"] for r in rows]
    assert cumtimes == sorted(cumtimes, reverse=True)
    assert all(isinstance(r["tottime_ns"], int) for r in rows)


def test_callers_rows_are_every_pstats_edge(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample("pstats/gprof2dot_print1.pstats")
    raw = marshal.loads(path.read_bytes())
    n_edges = sum(len(value[4]) for value in raw.values())
    doc = summary_json(capsys, path, "--view", "callers", "--top", "0")
    assert len(doc["rows"]) == n_edges
    assert all(":" in r["caller"] or r["caller"].startswith("{") for r in doc["rows"])


def _trace_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:  # type: ignore[operator]
        data = json.load(fh)
    return data["traceEvents"] if isinstance(data, dict) else data


def _folded_duplicates(ops: list[dict]) -> int:
    """Ops nested in a same-name op that has no other child, by a plain stack walk per thread."""
    parent: dict[int, int] = {}
    order = sorted(
        range(len(ops)), key=lambda i: (str(ops[i]["tid"]), ops[i]["ts"], -ops[i]["dur"])
    )
    stack: list[int] = []
    for i in order:
        while stack and (
            ops[stack[-1]]["tid"] != ops[i]["tid"]
            or ops[stack[-1]]["ts"] + ops[stack[-1]]["dur"] <= ops[i]["ts"]
        ):
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        stack.append(i)
    children: dict[int, int] = {}
    for p in parent.values():
        children[p] = children.get(p, 0) + 1
    return sum(
        1 for i, p in parent.items() if ops[p]["name"] == ops[i]["name"] and children[p] == 1
    )


def test_trace_ops_default_view_counts_every_cpu_op(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(TRACE_CPU)
    events = _trace_events(path)
    doc = summary_json(capsys, path, "--top", "0")
    assert doc["format"] == "trace"
    assert doc["view"] == "ops"
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    # torch (and perfview) fold an op into a same-name parent op that has no other child.
    assert sum(r["calls"] for r in doc["rows"]) == len(ops) - _folded_duplicates(ops) == 485
    assert {r["name"] for r in doc["rows"]} == {
        e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"
    }
    assert sum(r["self_pct"] for r in doc["rows"]) == pytest.approx(100.0)


def test_trace_memory_view_counts_memory_events(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(TRACE_CPU)
    mem = [e for e in _trace_events(path) if e.get("name") == "[memory]"]
    doc = summary_json(capsys, path, "--view", "memory")
    (row,) = doc["rows"]  # CPU only
    assert row["device"] == "cpu"
    assert row["allocs"] == sum(1 for e in mem if e["args"]["Bytes"] > 0)
    assert row["frees"] == sum(1 for e in mem if e["args"]["Bytes"] < 0)
    assert row["peak_allocated_bytes"] == max(e["args"]["Total Allocated"] for e in mem)


def test_kernels_view_on_gpu_trace(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(TRACE_GPU)
    kernels = [e for e in _trace_events(path) if e.get("cat") == "kernel" and e.get("ph") == "X"]
    doc = summary_json(capsys, path, "--view", "kernels", "--top", "0")
    assert sum(r["calls"] for r in doc["rows"]) == len(kernels)
    doc = summary_json(capsys, path, "--view", "lanes", "--top", "0")
    assert len(doc["rows"]) == doc["counts"]["lanes"]


def test_mprof_views_match_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(MPROF)
    lines = path.read_text().splitlines()
    mem = [float(line.split()[1]) for line in lines if line.startswith("MEM ")]
    doc = summary_json(capsys, path, "--top", "0")
    assert doc["view"] == "memory"
    assert len(doc["rows"]) == sum(1 for line in lines if line.startswith("CMDLINE")) == 5
    assert sum(r["samples"] for r in doc["rows"]) == len(mem) == 159
    assert max(r["peak_bytes"] for r in doc["rows"]) == pytest.approx(max(mem) * 2**20, abs=2)
    doc = summary_json(capsys, path, "--view", "samples", "--top", "0")
    assert len(doc["rows"]) == len(mem)


def test_memprof_lines_view(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(MEMPROF)
    rows = [line for line in path.read_text().splitlines() if re.match(r"\s*\d+ ", line)]
    doc = summary_json(capsys, path, "--top", "0")
    assert doc["view"] == "lines"
    assert len(doc["rows"]) == len(rows) == 151
    # Growth rows by increment; the @profile line (its increment is the baseline at entry,
    # 779.3 MiB) comes after them.
    growth = [r for r in doc["rows"] if r["increment_bytes"] is not None and r["line"] != 18]
    increments = [r["increment_bytes"] for r in growth]
    assert increments == sorted(increments, reverse=True)
    assert [r["line"] for r in doc["rows"]].index(18) == len(growth)
    assert any(r["mem_bytes"] is None for r in doc["rows"])  # NaN → null for lines never run
    assert doc["rows"][0]["function"] != ""


def test_top_limits_rows(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(PSTATS)
    assert len(summary_json(capsys, path)["rows"]) == 20
    assert len(summary_json(capsys, path, "--top", "3")["rows"]) == 3
    code, out, _ = run(capsys, "summary", str(path), "--top", "5")
    assert code == 0
    assert "top 5 of 475 rows" in out
    warnings = sum(line.startswith("warning: ") for line in out.splitlines())
    # header, warnings (this file's call cycle note), view line, blank, head, rule, 5 rows
    assert len(out.strip().splitlines()) == 3 + warnings + 2 + 5


def test_table_output_uses_units(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "summary", str(sample(MPROF)))
    assert code == 0
    assert "GiB" in out or "MiB" in out
    assert " s" in out  # durations in seconds
    code, out, _ = run(capsys, "summary", str(sample(TRACE_CPU)))
    assert "ms" in out or "µs" in out


def test_warnings_reach_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    path = sample(CHROME)  # 3 B events left open → a warning
    doc = summary_json(capsys, path)
    assert doc["warnings"]
    code, out, _ = run(capsys, "summary", str(path))
    assert code == 0
    assert "warning: " in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["summary", "/nonexistent/file.prof"], "cannot open /nonexistent/file.prof: "),
        (["summary", "@py2"], "cannot open "),
        (["summary", "@pstats", "--view", "kernels"], "needs a trace"),
        (["summary", "@mprof", "--view", "ops"], "mprof"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    subst = {"@py2": str(sample(PY2_PSTATS)), "@pstats": str(sample(PSTATS))}
    subst["@mprof"] = str(sample(MPROF))
    code, out, err = run(capsys, *[subst.get(a, a) for a in args])
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("perfview: ")
    assert needle in err
    assert "Traceback" not in err


def test_refused_python2_file_says_what_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "summary", str(sample(PY2_PSTATS)))
    assert code == 2
    assert "Python 2" in err


@pytest.mark.parametrize(
    "args",
    [["summary"], ["summary", "x", "--top", "-1"], ["summary", "x", "--view", "nope"]],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert "usage:" in err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert (code, out.strip()) == (0, f"perfview {__version__}")
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "summary" in out


def test_other_invocations_go_to_the_gui(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    fake = types.ModuleType("perfview.qt.app")
    fake.main = lambda argv, **_: calls.append(argv) or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "perfview.qt.app", fake)
    assert cli.main(["a.prof", "b.json"]) == 0
    assert cli.main(["--screenshot", "out.png", "--view", "ops", "t.json"]) == 0
    assert cli.main([]) == 0
    assert calls == [
        ["a.prof", "b.json"],
        ["--screenshot", "out.png", "--view", "ops", "t.json"],
        [],
    ]


def _python_m(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfview", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_python_m_perfview_summary_json() -> None:
    path = sample("pstats/gprof2dot_print1.pstats")
    proc = _python_m("summary", str(path), "--format", "json", "--top", "0")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["counts"]["functions"] == len(doc["rows"]) == 11
    assert doc["counts"]["calls"] == 52


def test_python_m_perfview_missing_file() -> None:
    proc = _python_m("summary", "/nonexistent/trace.json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "perfview: cannot open /nonexistent/trace.json: the file does not exist"
    ]


def test_python_m_perfview_refused_file() -> None:
    proc = _python_m("summary", str(sample(PY2_PSTATS)), "--format", "json")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_the_command_ends_quickly_yet_runs_exit_handlers(tmp_path: Path) -> None:
    """`perfview` (cli.run) ends the process right after a headless command, but only after
    the exit handlers ran and the output was flushed, whole, into a pipe."""
    prof = ROOT / "tests" / "data" / "recursion.prof"
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "from perfview.__main__ import run\n"
        f"sys.argv = ['perfview', 'summary', {str(prof)!r}, '--top', '0']\n"
        "run()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "handler ran" in done.stderr
    assert done.stdout.startswith(str(prof))
    assert done.stdout.rstrip().count("\n") >= 5
    missing = subprocess.run(
        [sys.executable, "-m", "perfview", "summary", str(tmp_path / "absent.prof")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1


def test_the_command_ends_after_a_script_left_a_thread_pool_idle(tmp_path: Path) -> None:
    """A recorded script whose thread pool is never shut down (torch.compile's, on a cold
    compile cache) leaves an idle non-daemon worker: the command still ends, as Python would,
    because its quick end runs threading's shutdown (which stops such workers) first."""
    script = tmp_path / "pool.py"
    script.write_text(
        "from concurrent.futures import ThreadPoolExecutor\n"
        "import logging\n"
        "logging.kept_pool = pool = ThreadPoolExecutor(1)  # as a library's module-level pool\n"
        "print('sum', pool.submit(sum, [1, 2]).result())\n"
    )
    out = tmp_path / "out.prof"
    done = subprocess.run(
        [sys.executable, "-m", "perfview", "record", "--mode", "cprofile", "-o", str(out),
         "--", str(script)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sum 3" in done.stdout
    assert out.stat().st_size > 0
