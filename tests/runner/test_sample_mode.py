"""`perfview record --mode sample`: py-spy over a real CPU-bound script, and attaching by pid."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfview.core.pages import summary
from perfview.loaders import load
from perfview.runner import record, sample_mode
from perfview.runner.spec import RunOptions, RunSpec

SCRIPT = Path(__file__).resolve().parent.parent / "data" / "scripts" / "cpu_hot.py"

needs_pyspy = pytest.mark.skipif(
    sample_mode.binary() is None, reason="py-spy is not installed (pip install perfview[sampling])"
)


def _run(spec: RunSpec) -> tuple[int, str]:
    err = io.StringIO()
    code = record.execute(spec.resolved(), err=err)
    return code, err.getvalue()


def _hottest(path: Path) -> str:
    table = summary.summarize(load(path), "functions")
    return str(table.sort_values("self_ns", ascending=False)["name"].iat[0])


@needs_pyspy
def test_hottest_function_is_where_the_script_spends_its_time(tmp_path: Path) -> None:
    out = tmp_path / "cpu.speedscope.json"
    spec = RunSpec(
        "sample", str(SCRIPT), args=("1.5",), output=str(out), options=RunOptions(rate=250)
    )
    code, err = _run(spec)
    assert code == 0, err
    assert "profile written" in err
    bundle = load(out)
    assert bundle.format == "sampled"
    assert bundle.counts["samples"] > 100
    assert _hottest(out) == "crunch"
    # the shim that keeps the exit code leaves no frame behind: stacks start at the script
    tree = bundle.tree
    assert tree is not None
    roots = tree.children(0)
    assert "<module>" in {tree.name(int(k)) for k in roots}
    root_files = {str(tree.frames["file"].iat[int(tree.frame[k])]) for k in roots}
    assert not {f for f in root_files if f == "<string>" or "runpy" in f}


@needs_pyspy
def test_exit_code_is_the_scripts(tmp_path: Path) -> None:
    out = tmp_path / "exit.speedscope.json"
    spec = RunSpec("sample", str(SCRIPT), args=("0.3", "3"), output=str(out))
    code, err = _run(spec)
    assert code == 3, err
    assert out.is_file()


def _ptrace_refusal(err: str) -> bool:
    return "ptrace permission" in err


@needs_pyspy
def test_attach_by_pid(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, str(SCRIPT), "20"])
    try:
        time.sleep(0.5)  # let the interpreter start; py-spy needs it initialised
        out = tmp_path / "attached.speedscope.json"
        spec = RunSpec(
            "sample", "", output=str(out), options=RunOptions(pid=child.pid, duration=2, rate=200)
        )
        code, err = _run(spec)
        if code != 0 and _ptrace_refusal(err):
            pytest.skip(f"ptrace is not permitted here: {err.strip()}")
        assert code == 0, err
        assert _hottest(out) == "crunch"
    finally:
        child.kill()
        child.wait(timeout=10)


@needs_pyspy
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run py-spy as an unprivileged user",
)
def test_ptrace_refusal_is_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """py-spy run as `nobody` may not read our process: the real refusal, explained."""
    real = sample_mode.binary()
    wrapper = tmp_path / "py-spy-as-nobody"
    wrapper.write_text(
        f'#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setattr(sample_mode, "binary", lambda: str(wrapper))
    out = tmp_path / "never.json"
    spec = RunSpec("sample", "", output=str(out), options=RunOptions(pid=os.getpid(), duration=1))
    code, err = _run(spec)
    assert code == 2
    assert err.count("\n") == 1, err
    assert "ptrace permission" in err
    assert "Traceback" not in err
    assert not out.exists()


FAKE_PYSPY = """#!{python}
# py-spy losing its race with the script's exit (benfred/py-spy#759): the script runs to its
# end, the profile is written, then py-spy exits 1 with ECHILD
import json, subprocess, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
subprocess.run(args[args.index("--") + 1 :], check=False)
frames = [{{"name": "main", "file": "x.py", "line": 1}}]
profile = {{"type": "sampled", "name": "p", "unit": "none", "startValue": 0, "endValue": 1,
           "samples": [[0]], "weights": [1]}}
if {write}:
    json.dump({{"shared": {{"frames": frames}}, "profiles": [profile]}}, open(out, "w"))
sys.stderr.write("Error: No child process (os error 10)\\n")
sys.exit(1)
"""


@pytest.mark.parametrize("written", [True, False])
def test_pyspy_losing_the_race_with_the_scripts_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: bool
) -> None:
    """py-spy's known ECHILD race after a complete recording is a success (the script's own
    exit code, py-spy's error line dropped); with no profile written it stays a failure."""
    fake = tmp_path / "py-spy"
    fake.write_text(FAKE_PYSPY.format(python=sys.executable, write=written))
    fake.chmod(0o755)
    monkeypatch.setattr(sample_mode, "binary", lambda: str(fake))
    out = tmp_path / "race.speedscope.json"
    script = tmp_path / "ends.py"
    script.write_text("import sys\nsys.exit(3)\n")
    code, err = _run(RunSpec("sample", str(script), output=str(out)))
    if written:
        assert code == 3, err  # the script's exit code, as for any recording
        assert "No child process" not in err
        assert out.stat().st_size > 0
    else:
        assert code == 2
        assert "py-spy could not record: No child process (os error 10)" in err
        assert "Traceback" not in err


def test_spec_carries_sample_options() -> None:
    spec = RunSpec(
        "sample", "/x/s.py",
        options=RunOptions(rate=250, native=True, subprocesses=True, gil=True),
    )  # fmt: skip
    args = spec.record_args()
    assert args[:2] == ["--mode", "sample"]
    assert {"--native", "--subprocesses", "--gil"} <= set(args)
    assert args[args.index("--rate") + 1] == "250"
    assert RunSpec.from_dict(spec.to_dict()) == spec
    attached = RunSpec("sample", "", options=RunOptions(pid=42, duration=3.0))
    assert attached.record_args()[-4:] == ["--pid", "42", "--duration", "3.0"]
    assert "--" not in attached.record_args()


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from perfview import cli

    assert cli.main(["record", "--mode", "sample"]) == 2
    assert cli.main(["record", "--mode", "cprofile", "--pid", "1"]) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err


@needs_pyspy
def test_cancel_keeps_the_partial_profile(tmp_path: Path) -> None:
    """SIGTERM (the GUI's Cancel) stops py-spy with Ctrl-C, which writes what it sampled."""
    import signal

    import psutil

    out = tmp_path / "cancelled.speedscope.json"
    cmd = [sys.executable, "-m", "perfview.runner.record", "--mode", "sample", "-o", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--", str(SCRIPT), "30"], env=RunSpec("sample", str(SCRIPT)).child_env()
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the script runs under py-spy for a while
            kids = psutil.Process(proc.pid).children(recursive=True)
            if any("cpu_hot.py" in " ".join(k.cmdline()) for k in kids if k.is_running()):
                break
            time.sleep(0.1)
        time.sleep(1.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _hottest(out) == "crunch"


@needs_pyspy
def test_native_and_subprocess_frames_keep_the_script_stack_clean(tmp_path: Path) -> None:
    out = tmp_path / "native.speedscope.json"
    options = RunOptions(rate=200, native=True, subprocesses=True)
    code, err = _run(
        RunSpec("sample", str(SCRIPT), args=("0.8",), output=str(out), options=options)
    )
    if code != 0 and "py-spy could not record" in err:
        pytest.skip(f"py-spy cannot sample native frames here: {err.strip()}")
    assert code == 0, err
    assert _hottest(out) == "crunch"
    tree = load(out).tree
    assert tree is not None
    files = tree.frames["file"].astype(str).to_numpy()
    script_modules = [
        n for n in range(1, len(tree))
        if tree.name(n) == "<module>" and files[tree.frame[n]] == str(SCRIPT)
    ]  # fmt: skip
    assert script_modules
    for node in script_modules:  # what called the script is py-spy's, never the shim
        parent = int(tree.parent[node])
        assert parent == 0 or files[tree.frame[parent]] not in ("<string>", "<frozen runpy>")
