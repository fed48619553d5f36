"""ProcessRunner drives the real recorder child; waits are on signals, never sleeps."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from perfview.qt.process_runner import ProcessRunner
from perfview.runner.spec import RunSpec, list_runs

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"

pytestmark = pytest.mark.gui


@pytest.fixture
def runner(qtbot) -> ProcessRunner:
    runner = ProcessRunner()
    runner.log: list[str] = []  # type: ignore[misc]
    runner.output.connect(runner.log.append)
    yield runner
    if runner.is_running():  # never leave a child behind, even when a test fails
        runner.grace_ms = 0
        with qtbot.waitSignal(runner.cancelled, timeout=5000):
            runner.cancel()


def test_finished_run_reports_its_profile(qtbot, runner: ProcessRunner, tmp_path: Path) -> None:
    spec = RunSpec("cprofile", str(SCRIPTS / "cpu_work.py"), cwd=str(tmp_path))
    with qtbot.waitSignal(runner.finished, timeout=30000) as blocker:
        started = runner.start(spec, runs_root=tmp_path / "runs")
    path, code = blocker.args
    assert code == 0
    assert path == started.output
    assert Path(path).stat().st_size > 0
    log = "".join(runner.log)
    assert log.startswith("$ ")
    assert "perfview.runner.record --mode cprofile" in log
    assert "crunch = 3050" in log
    assert f"profile written to {path}" in log
    (rec,) = list_runs(tmp_path / "runs")
    assert (rec.status, rec.exit_code, rec.output) == ("ok", 0, path)
    assert runner.elapsed_s() > 0
    assert not runner.is_running()


def test_failed_run_hands_back_the_partial_profile(
    qtbot, runner: ProcessRunner, tmp_path: Path
) -> None:
    out = tmp_path / "partial.prof"
    spec = RunSpec("cprofile", str(SCRIPTS / "raises.py"), output=str(out))
    with qtbot.waitSignal(runner.failed, timeout=30000) as blocker:
        runner.start(spec)
    message, path = blocker.args
    assert message == "script exited with code 1; partial profile written"
    assert path == str(out)
    assert out.stat().st_size > 0
    assert "ValueError: boom from the script" in "".join(runner.log)


def test_interpreter_that_cannot_start(qtbot, runner: ProcessRunner, tmp_path: Path) -> None:
    spec = RunSpec(
        "cprofile",
        str(SCRIPTS / "cpu_work.py"),
        python=str(tmp_path / "nopython"),
        output=str(tmp_path / "o.prof"),
    )
    with qtbot.waitSignal(runner.failed, timeout=10000) as blocker:
        runner.start(spec)
    message, path = blocker.args
    assert message.startswith(f"could not start {tmp_path / 'nopython'}")
    assert path is None
    assert not runner.is_running()


def test_cancel_ends_script_and_its_children(qtbot, runner: ProcessRunner, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    spec = RunSpec("cprofile", str(SCRIPTS / "long_running.py"), (str(pids_file),))
    runner.start(spec, runs_root=tmp_path / "runs")
    qtbot.waitUntil(pids_file.exists, timeout=20000)
    pids = [int(p) for p in pids_file.read_text().split()]
    assert pids[0] == runner.pid  # the recorder runs the script in its own process
    procs = [psutil.Process(p) for p in pids]
    assert all(p.is_running() for p in procs)
    assert procs[1].ppid() == pids[0]
    with qtbot.waitSignal(runner.cancelled, timeout=2000):
        runner.cancel()

    def all_gone() -> bool:  # not running and not left as zombies
        return not any(psutil.pid_exists(p) for p in pids)

    qtbot.waitUntil(all_gone, timeout=2000)
    (rec,) = list_runs(tmp_path / "runs")
    assert rec.status == "cancelled"
    assert "partial profile written" in "".join(runner.log)
    assert json.loads((Path(rec.folder) / "run.json").read_text())["exit_code"] == 143


def test_cancel_kills_a_child_that_ignores_sigterm(
    qtbot, runner: ProcessRunner, tmp_path: Path
) -> None:
    script = tmp_path / "stubborn.py"
    flag = tmp_path / "ready"
    script.write_text(
        "import os, signal, time, pathlib\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"pathlib.Path({str(flag)!r}).write_text(str(os.getpid()))\n"
        "while True: time.sleep(0.05)\n"
    )
    runner.grace_ms = 300
    spec = RunSpec("memory", str(script), output=str(tmp_path / "m.dat"))
    runner.start(spec)
    qtbot.waitUntil(lambda: flag.exists() and flag.read_text() != "", timeout=20000)
    pids = [runner.pid, int(flag.read_text())]  # the recorder samples the script's process
    with qtbot.waitSignal(runner.cancelled, timeout=2000):
        runner.cancel()
    qtbot.waitUntil(lambda: not any(psutil.pid_exists(p) for p in pids), timeout=2000)
    assert (tmp_path / "m.dat").read_text().startswith("CMDLINE ")
