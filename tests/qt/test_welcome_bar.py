"""A bare first start opens the bundled example with a bar that says it is the example and
offers the ways out: open a file, open a folder, record a script, the examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from tests.conftest import sample

pytestmark = pytest.mark.gui


def _window(qtbot: Any, tmp_path: Path) -> MainWindow:
    window = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    window.show()
    return window


def test_the_first_start_says_it_shows_the_example_and_offers_the_ways_in(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.document_opened, timeout=30_000):
        window.open_example(welcome=True)
    bar = window.welcome_bar
    assert bar.isVisible()
    assert "bundled example" in bar.label.text()
    assert set(bar.buttons) == {"open", "folder", "record", "examples"}
    assert bar.buttons["examples"].menu() is window.examples_menu
    asked: list[str] = []
    from PySide6.QtWidgets import QFileDialog

    def dialog(*_args: object, **_kwargs: object) -> tuple[list[object], str]:
        asked.append("open")
        return [], ""  # the user cancelled

    monkeypatch.setattr(QFileDialog, "getOpenFileUrls", dialog)
    bar.buttons["open"].click()  # the same File > Open dialog as the menu's
    assert asked == ["open"]
    with qtbot.waitSignal(window.document_opened, timeout=30_000):
        window.open_path(sample("pstats/gprof2dot_print1.pstats"))
    assert not bar.isVisible()  # one's own profile: the example's caption goes


def test_opening_the_example_from_the_menu_shows_no_welcome(qtbot: Any, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.document_opened, timeout=30_000):
        window.open_example()
    assert not window.welcome_bar.isVisible()
