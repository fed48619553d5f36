"""Profile menu wiring: a run started from the window opens its result; quitting mid-run asks."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import QSettings

from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.runner.spec import RunSpec

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"
RUN_TIMEOUT_MS = 60_000

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("PERFVIEW_SETTINGS", str(path))
    monkeypatch.setenv("PERFVIEW_RUNS_DIR", str(tmp_path / "runs"))
    win = MainWindow(Settings(QSettings(str(path), QSettings.Format.IniFormat)))
    qtbot.addWidget(win)
    win.show()
    return win


def test_profile_menu_has_the_run_commands(window: MainWindow) -> None:
    texts = {
        a.text().replace("&", ""): a.shortcut().toString()
        for a in window.menus_controller.menus["profile"].actions()
    }
    assert texts["Run Script…"] == "Ctrl+R"
    assert texts["Re-run Last"] == "Ctrl+Shift+R"
    assert "Runs…" in texts


def test_run_from_window_opens_result_in_a_tab(qtbot, window: MainWindow, tmp_path: Path) -> None:
    out = tmp_path / "cpu.prof"
    spec = RunSpec("cprofile", str(SCRIPTS / "cpu_work.py"), output=str(out))
    dock = window.runs_controller.run_dock()
    with qtbot.waitSignal(window.document_opened, timeout=RUN_TIMEOUT_MS) as blocker:
        assert dock.controller.start(spec)
    assert dock.isVisible()
    tab = blocker.args[0]
    assert tab.document.bundle.format == "pstats"
    functions = set(tab.document.bundle.profile.functions["function"])
    assert {"fib", "crunch"} <= functions


def test_quit_during_run_asks_then_ends_the_child(
    qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids.txt"
    spec = RunSpec(
        "cprofile", str(SCRIPTS / "long_running.py"), (str(pids),), output=str(tmp_path / "l.prof")
    )
    dock = window.runs_controller.run_dock()
    with qtbot.waitSignal(
        dock.controller.panel.runner.output,
        timeout=RUN_TIMEOUT_MS,
        check_params_cb=lambda text: "long_running: started" in text,
    ):
        dock.controller.start(spec)
    script_pid, child_pid = (int(p) for p in pids.read_text().split())

    monkeypatch.setattr(window.runs_controller, "confirm_quit_during_run", lambda: False)
    assert not window.close()  # the user said no: nothing stops
    assert dock.is_running()
    assert psutil.pid_exists(script_pid)

    monkeypatch.setattr(window.runs_controller, "confirm_quit_during_run", lambda: True)
    assert window.close()
    for pid in (script_pid, child_pid):
        if psutil.pid_exists(pid):
            proc = psutil.Process(pid)
            assert proc.status() == psutil.STATUS_ZOMBIE or not proc.is_running(), pid
