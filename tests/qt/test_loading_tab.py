"""A file gets its tab the moment it is opened; closing that tab cancels the load."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

import perfview.loaders as loaders
from perfview.qt.document_tab import DocumentTab
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.qt.widgets.loading_tab import LoadingTab

PROF = Path(__file__).resolve().parents[1] / "data" / "recursion.prof"

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path: Path) -> MainWindow:
    win = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(win)
    win.show()
    return win


def test_closing_the_loading_tab_cancels_the_load(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = threading.Event()
    stop = threading.Event()

    def endless(path, progress=None, **_kw):  # a loader that only stops when cancelled
        started.set()
        while not stop.wait(0.01):
            progress(0.5, "still reading")  # raises LoadCancelled once Cancel was pressed
        raise AssertionError("the test timed out before cancelling")

    monkeypatch.setattr(loaders, "load", endless)
    task = window.open_path(PROF)
    assert task is not None
    placeholder = window.tabs.currentWidget()
    assert isinstance(placeholder, LoadingTab)
    assert window.tabs.tabText(window.tabs.currentIndex()) == PROF.name
    assert started.wait(10)
    try:
        with qtbot.waitSignal(task.cancelled, timeout=10_000):
            window.tabs_controller.close_tab(window.tabs.indexOf(placeholder))
    finally:
        stop.set()
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=5000)
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.welcome


def test_loaded_document_takes_the_placeholders_place(qtbot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.document_opened, timeout=30_000) as blocker:
        window.open_path(PROF)
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=5000)
    assert window.tabs.count() == 1
    assert isinstance(window.tabs.widget(0), DocumentTab)
    assert window.tabs.widget(0) is blocker.args[0]
