"""`perfview FILE` while perfview runs: the file becomes a new tab in the running window."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from perfview.qt import app as app_module
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PROF = ROOT / "tests" / "data" / "recursion.prof"

pytestmark = pytest.mark.gui


def test_second_launch_hands_file_to_first(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"perfview-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("PERFVIEW_INSTANCE_NAME", name)
    window = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    server = app_module._serve_instance(window)  # what `perfview` does for the first window
    assert server is not None

    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PERFVIEW_INSTANCE_NAME": name,
        "PERFVIEW_SETTINGS": str(tmp_path / "second.ini"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with qtbot.waitSignal(window.document_opened, timeout=30_000) as blocker:
        second = subprocess.Popen(
            [sys.executable, "-m", "perfview", str(PROF)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    _out, err = second.communicate(timeout=30)
    assert second.returncode == 0, err
    assert "Traceback" not in err
    tab = blocker.args[0]
    assert tab.document.path == PROF.resolve()
    assert window.tabs.count() == 1
