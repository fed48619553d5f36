"""The app survives what goes wrong: a loader bug, a recorder that crashes, a window closed
while a file loads, and an exception escaping a Qt slot (dialog, Copy details, crash log)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from perfview.loaders import mprof
from perfview.qt import crash_log
from perfview.qt.file_types import example_path
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from tests.conftest import DATA, SAMPLES

pytestmark = pytest.mark.gui
TIMEOUT_MS = 60_000


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setenv("PERFVIEW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    return win


def test_a_loader_bug_becomes_a_message_and_no_tab(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: Path, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug in the mprof loader")

    monkeypatch.setattr(mprof, "load", broken)
    path = DATA / "mprofile_func.dat"
    with qtbot.waitSignal(window.load_failed, timeout=TIMEOUT_MS) as blocker:
        window.open_path(path)
    message = blocker.args[1]
    assert message == (
        "perfview could not read it (internal error: ZeroDivisionError: a bug in the mprof "
        "loader); please report it"
    )
    assert window.tabs.count() == 0
    assert "please report it" in window.error_bar.label.text()
    assert "Traceback" in window.error_bar.details  # the Details button has the traceback
    monkeypatch.undo()
    with qtbot.waitSignal(window.document_opened, timeout=TIMEOUT_MS):
        window.open_path(path)  # the same file, once the loader is fixed
    assert window.tabs.count() == 1


def test_cli_turns_a_loader_bug_into_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfview import cli

    monkeypatch.setattr(mprof, "load", lambda *_a, **_k: [][1])
    monkeypatch.delenv("PERFVIEW_DEBUG", raising=False)
    assert cli.main(["summary", str(DATA / "mprofile_func.dat")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error: IndexError: list index out of range" in err
    assert "Traceback" not in err


def test_a_crashing_recorder_child_is_reported(qtbot, tmp_path: Path) -> None:
    from perfview.qt.process_runner import ProcessRunner
    from perfview.runner.spec import RunSpec

    script = tmp_path / "crash.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    runner = ProcessRunner()
    spec = RunSpec("cprofile", str(script), output=str(tmp_path / "out.prof"))
    with qtbot.waitSignal(runner.failed, timeout=TIMEOUT_MS) as blocker:
        runner.start(spec)
    message, path = blocker.args
    assert message == "the recorder was killed"
    assert path is None  # nothing half-written under the output name
    assert not (tmp_path / "out.prof").exists()
    assert not runner.is_running()


def test_closing_the_window_during_a_load_cancels_it(qtbot, window: MainWindow) -> None:
    big = max(
        SAMPLES.rglob("*.gz"),
        key=lambda p: p.stat().st_size,
        default=DATA / "torch_cpu_small.pt.trace.json.gz",
    )
    task = window.open_path(big)
    assert task is not None
    ended: list[str] = []
    task.cancelled.connect(lambda: ended.append("cancelled"))
    task.finished.connect(lambda _r: ended.append("finished"))
    with qtbot.waitSignal(task.done, timeout=TIMEOUT_MS):
        window.close()  # closeEvent cancels every load
    assert ended in (["cancelled"], ["finished"])  # finished only if the load won the race
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=5000)


def test_a_load_ending_after_the_window_is_deleted_is_harmless(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings)
    task = window.open_path(DATA / "torch_cpu_small.pt.trace.json.gz")
    assert task is not None
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, int(QEvent.Type.DeferredDelete))
    # The window's slots for this task were connected before it started, so its queued
    # reports are delivered by the event processing below; pytest-qt fails the test if one
    # of them raises ("Internal C++ object already deleted").
    qtbot.waitUntil(lambda: not task.is_running, timeout=TIMEOUT_MS)
    for _ in range(3):
        QCoreApplication.processEvents()


def test_unhandled_exception_dialog_log_and_copy(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from perfview.qt.app import install_excepthook

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_excepthook(window)
    try:
        raise RuntimeError("a bug in a slot")
    except RuntimeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    (box,) = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert "RuntimeError: a bug in a slot" in box.text()
    log = tmp_path / "state" / "crash.log"
    assert str(log) in box.informativeText()
    text = log.read_text()
    assert text.startswith("=== ")
    assert "perfview" in text.splitlines()[0]
    assert 'raise RuntimeError("a bug in a slot")' in text
    copy = box.property("copy_button")
    copy.click()
    assert box.isVisible()  # copying does not close the dialog
    copied = QGuiApplication.clipboard().text()
    assert "RuntimeError: a bug in a slot" in copied
    assert "Traceback" in copied
    box.close()
    with qtbot.waitSignal(window.document_opened, timeout=TIMEOUT_MS):
        window.open_path(example_path())  # the app keeps running


def test_crash_log_rotates_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFVIEW_STATE_DIR", str(tmp_path / "state"))
    log = crash_log.log_path()
    assert log == tmp_path / "state" / "crash.log"
    assert crash_log.record("first") == log
    log.write_text("x" * crash_log.MAX_BYTES)
    crash_log.record("after rotation")
    assert (tmp_path / "state" / "crash.log.1").stat().st_size >= crash_log.MAX_BYTES
    assert "after rotation" in log.read_text()
    assert log.stat().st_size < 10_000
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("PERFVIEW_STATE_DIR", str(blocker / "sub"))  # cannot be a folder
    assert crash_log.record("lost") is None
    monkeypatch.delenv("PERFVIEW_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert crash_log.log_path() == tmp_path / "xdg" / "perfview" / "crash.log"
