"""Help ▸ Examples: a demo entry opens the Run dialog filled in with its recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.runner.examples import DEMOS

pytestmark = pytest.mark.gui


def test_help_examples_prefills_the_run_dialog(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("PERFVIEW_SETTINGS", str(path))
    window = MainWindow(Settings(QSettings(str(path), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    help_menu = window.menus_controller.menus["help"]
    assert help_menu.actions()[0].menu() is window.examples_menu
    subs = {a.text(): a.menu() for a in window.examples_menu.actions()}
    assert list(subs) == list(DEMOS)
    actions = {a.text(): a for a in subs["pairwise-loop"].actions()}
    actions["Fixed form"].trigger()
    dialog = window.runs_controller.run_dock().controller.dialog
    assert dialog is not None
    spec = dialog.spec()
    assert spec.mode == "torch"
    assert spec.script == str(DEMOS["pairwise-loop"].path)
    assert spec.args == ("--fixed",)
    assert spec.options.with_stack
    assert spec.options.schedule == (1, 1, 1, 1)  # wait, warmup, active, repeat
    dialog.reject()
    {a.text(): a for a in subs["elementwise-chain"].actions()}["Slow form"].trigger()
    slow = window.runs_controller.run_dock().controller.dialog
    assert slow is not None
    assert slow.spec().args == ()
    assert slow.spec().options.record_shapes
    slow.reject()
