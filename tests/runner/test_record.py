"""The recorder on real little scripts (tests/data/scripts), each mode, in-process and as a child.

Outputs are checked in their raw format and, once perfview's loaders import, through `load()`.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pstats
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

import perfview
from perfview.runner import cli, record
from perfview.runner.spec import RunOptions, RunSpec, list_runs

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"
ROOT = str(Path(perfview.__file__).resolve().parent.parent)


def _load(path: Path) -> Any:
    """perfview's loader result, or None while the loaders package is still incomplete."""
    try:
        from perfview.loaders import load
    except ImportError:
        return None
    return load(path)


def _run(spec: RunSpec) -> tuple[int, str]:
    err = io.StringIO()
    code = record.execute(spec.resolved(), err=err)
    return code, err.getvalue()


def _functions(path: Path) -> set[str]:
    return {name for (_file, _line, name) in pstats.Stats(str(path)).stats}  # type: ignore[attr-defined]


def test_cprofile_runs_script_like_python(tmp_path: Path) -> None:
    out, report = tmp_path / "cpu.prof", tmp_path / "report.json"
    spec = RunSpec(
        "cprofile",
        str(SCRIPTS / "cpu_work.py"),
        ("--report", str(report)),
        cwd=str(tmp_path),
        output=str(out),
    )
    code, err = _run(spec)
    assert code == 0
    assert f"perfview: profile written to {out}" in err
    seen = json.loads(report.read_text())
    assert seen == {
        "argv": [str(SCRIPTS / "cpu_work.py"), "--report", str(report)],
        "cwd": str(tmp_path),
        "path0": str(SCRIPTS),
        "name": "__main__",
    }
    assert {"fib", "crunch"} <= _functions(out)
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    fib = next(v for k, v in stats.items() if k[2] == "fib")
    assert (fib[0], fib[1]) == (5, 5 * 1973)  # 5 primitive calls of fib(15), 1973 calls each
    bundle = _load(out)
    if bundle is not None:
        assert {"fib", "crunch"} <= set(bundle.profile.functions["function"])


def test_failing_script_keeps_partial_profile(tmp_path: Path) -> None:
    out = tmp_path / "raises.prof"
    code, err = _run(RunSpec("cprofile", str(SCRIPTS / "raises.py"), output=str(out)))
    assert code == 1
    assert "ValueError: boom from the script" in err
    assert 'raises.py", line 15, in <module>' in err
    assert "runpy" not in err
    assert "record.py" not in err
    assert err.rstrip().endswith(
        f"perfview: script exited with code 1; partial profile written to {out}"
    )
    assert {"doomed_work", "fail"} <= _functions(out)
    bundle = _load(out)
    if bundle is not None:
        assert "doomed_work" in set(bundle.profile.functions["function"])


def test_exit_code_is_the_scripts(tmp_path: Path) -> None:
    out = tmp_path / "exits.prof"
    code, err = _run(RunSpec("cprofile", str(SCRIPTS / "exits.py"), output=str(out)))
    assert code == 3
    assert "script exited with code 3; partial profile written" in err
    assert "some_work" in _functions(out)


def test_without_output_a_run_folder_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PERFVIEW_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    parser = cli.main.__globals__["argparse"].ArgumentParser()
    cli.add_parser(parser.add_subparsers())
    ns = parser.parse_args(["record", "--mode", "cprofile", "--", str(SCRIPTS / "exits.py")])
    assert ns.func(ns) == 3
    (run,) = list_runs(tmp_path / "runs")
    assert (run.mode, run.status, run.exit_code) == ("cprofile", "failed", 3)
    assert run.output == str(Path(run.folder) / "exits.prof")
    assert run.output_exists
    assert f"perfview: recording to {run.output}" in capsys.readouterr().err


def test_missing_script_is_a_usage_error(tmp_path: Path) -> None:
    code, err = _run(RunSpec("cprofile", str(tmp_path / "nope.py"), output=str(tmp_path / "o")))
    assert code == 2
    assert "script not found" in err


def test_torch_mode_without_torch_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # find_spec then reports it missing
    out = tmp_path / "t.json"
    code, err = _run(RunSpec("torch", str(SCRIPTS / "torch_mm.py"), output=str(out)))
    assert code == 2
    assert "mode 'torch' needs the 'torch' package" in err
    assert not out.exists()


def test_memory_mode_writes_mprof_dat(tmp_path: Path) -> None:
    out = tmp_path / "mem.dat"
    code, err = _run(RunSpec("memory", str(SCRIPTS / "memory_alloc.py"), output=str(out)))
    assert code == 0, err
    lines = out.read_text().splitlines()
    assert lines[0] == f"CMDLINE {sys.executable} {SCRIPTS / 'memory_alloc.py'}"
    mem = [float(line.split()[1]) for line in lines if line.startswith("MEM ")]
    chld = [line.split() for line in lines if line.startswith("CHLD ")]
    assert len(mem) >= 4  # ~0.6 s at 0.1 s
    assert max(mem) > 60  # 30 MiB in the script + 40 MiB in its child, children summed in
    assert chld
    assert {c[1] for c in chld} == {"0"}
    assert max(float(c[2]) for c in chld) > 40
    bundle = _load(out)
    if bundle is not None:
        assert len(bundle.memory.samples) == len(mem)
        assert bundle.memory.samples["rss_bytes"].max() > 60 * 2**20


def test_memory_lines_report(tmp_path: Path) -> None:
    out = tmp_path / "lines.txt"
    spec = RunSpec(
        "memory-lines",
        str(SCRIPTS / "lines_alloc.py"),
        output=str(out),
        options=RunOptions(functions=("named_alloc",)),
    )
    # A fresh process, as the GUI runs it: in-process, memory_profiler would measure the test
    # runner's own RSS, where a 16 MiB list can reuse heap freed by earlier tests.
    spec = spec.resolved()
    child = subprocess.run(spec.argv(), env=spec.child_env(), capture_output=True, text=True)
    assert child.returncode == 0, child.stderr
    text = out.read_text()
    assert text.count(f"Filename: {SCRIPTS / 'lines_alloc.py'}") == 2
    rows = {int(line[:6]): line for line in text.splitlines() if line[:6].strip().isdigit()}
    assert "big = [0] * (2 * 1024 * 1024)" in rows[6]
    assert float(rows[6].split("MiB")[1]) > 10  # 16 MiB list
    # `del big` frees the list, but whether RSS drops is the allocator's choice (glibc may keep
    # the block after raising its mmap threshold), so only require that the line adds nothing.
    assert "del big" in rows[8]
    assert float(rows[8].split("MiB")[1]) <= 0
    assert float(rows[13].split("MiB")[1]) > 5  # named_alloc's 8 MiB bytearray
    assert 17 not in rows  # the unprofiled __main__ block
    bundle = _load(out)
    if bundle is not None:
        contents = set(bundle.lines.lines["content"].str.strip())
        assert "data = bytearray(8 * 1024 * 1024)" in contents


def _trace(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as fh:
        return list(json.load(fh)["traceEvents"])


@pytest.mark.torch
def test_torch_mode_whole_run(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "t.json"
    code, err = _run(
        RunSpec(
            "torch",
            str(SCRIPTS / "torch_mm.py"),
            output=str(out),
            options=RunOptions(record_shapes=True),
        )
    )
    assert code == 0, err
    names = [e["name"] for e in _trace(out) if e.get("cat") == "cpu_op"]
    assert names.count("aten::mm") == 4
    assert "aten::relu" in names
    bundle = _load(out)
    if bundle is not None:
        assert (bundle.timeline.events["name"] == "aten::mm").sum() == 4


@pytest.mark.torch
def test_torch_schedule_stepped_by_script(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "s.pt.trace.json.gz"
    spec = RunSpec(
        "torch",
        str(SCRIPTS / "torch_mm.py"),
        output=str(out),
        options=RunOptions(schedule=(1, 1, 2, 1), profile_memory=True),
    )
    code, err = _run(spec)
    assert code == 0, err
    events = _trace(out)
    steps = sorted(e["name"] for e in events if e["name"].startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"]  # wait 1, warmup 1, then 2 active
    assert sum(e["name"] == "aten::mm" for e in events) == 2


def _venv_python(tmp_path: Path) -> str:
    """A bare interpreter with no site-packages: no torch, no perfview installed."""
    venv.create(tmp_path / "venv", with_pip=False, system_site_packages=False)
    return str(tmp_path / "venv" / "bin" / "python")


def test_child_runs_in_another_interpreter(tmp_path: Path) -> None:
    python = _venv_python(tmp_path)
    report = tmp_path / "r.json"
    spec = RunSpec(
        "cprofile",
        str(SCRIPTS / "cpu_work.py"),
        ("--report", str(report)),
        cwd=str(tmp_path),
        python=python,
        output=str(tmp_path / "o.prof"),
    )
    done = subprocess.run(
        spec.argv(), env=spec.child_env(), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "crunch = 3050" in done.stdout
    assert "fib" in _functions(tmp_path / "o.prof")
    torch_spec = RunSpec(
        "torch", str(SCRIPTS / "torch_mm.py"), python=python, output=str(tmp_path / "t.json")
    )
    done = subprocess.run(
        torch_spec.argv(), env=torch_spec.child_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert f"needs the 'torch' package, which {python} cannot import" in done.stderr


def test_bootstrap_path_is_hidden_from_the_script(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, os, sys\n"
        "print(json.dumps({'path': sys.path, 'pp': os.environ.get('PYTHONPATH'),"
        " 'boot': os.environ.get('PERFVIEW_BOOTSTRAP_PATH')}))\n"
    )
    spec = RunSpec("cprofile", str(probe), cwd=str(tmp_path), output=str(tmp_path / "p.prof"))
    env = spec.child_env({"PATH": "/usr/bin:/bin", "PYTHONPATH": "/elsewhere"})
    done = subprocess.run(
        spec.argv(), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[0])
    assert seen["path"][0] == str(tmp_path)
    assert ROOT not in seen["path"]
    assert "/elsewhere" in seen["path"]
    assert seen["pp"] == "/elsewhere"
    assert seen["boot"] is None


def test_cprofile_first_frames_are_the_scripts(tmp_path: Path) -> None:
    """Like `python -m cProfile -o`: exec → the script's <module>, no recorder or runpy frames."""
    out = tmp_path / "cpu.prof"
    script = str(SCRIPTS / "cpu_work.py")
    code, err = _run(RunSpec("cprofile", script, cwd=str(tmp_path), output=str(out)))
    assert code == 0, err
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    files = {file for (file, _line, _name) in stats}
    # Compared against the package's own folder and runpy's file, never a bare "perfview": the
    # clone itself may live in a folder of that name (the default of `git clone`).
    package = str(Path(perfview.__file__).resolve().parent) + os.sep
    assert not [f for f in files if str(Path(f).resolve()).startswith(package)]
    assert not [f for f in files if Path(f).name == "runpy.py"]
    assert not [name for (_f, _l, name) in stats if name == "<lambda>"]
    module = stats[(script, 1, "<module>")]
    assert set(module[4]) == {("~", 0, "<built-in method builtins.exec>")}  # its only caller
    bundle = _load(out)
    if bundle is not None:
        tree = bundle.tree
        top = [tree.name(int(k)) for k in tree.children(0)]
        assert top[0] == "<built-in method builtins.exec>"
        first = int(tree.children(0)[0])
        assert [tree.name(int(k)) for k in tree.children(first)] == ["<module>"]
        child = int(tree.children(first)[0])
        assert tree.frames["file"].iat[int(tree.frame[child])] == script
