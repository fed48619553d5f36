"""Soak, light: 40 documents opened and closed and 1,000 zoom/pan steps in one window, with
RSS back near its baseline afterwards (scripts/probes/soak.py runs 200 documents / 10,000 steps)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("psutil")

from PySide6.QtCore import QSettings

from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings

pytestmark = [pytest.mark.gui, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = 40
STEPS = 1000
# Allowed growth over the warmed-up baseline. Measured: about 5 MB after 40 documents (and
# 200 documents end within a few MB of 40), so this catches a leak of a tab or a Bundle per
# document (each is megabytes) without failing on allocator noise.
MAX_GROWTH_MB = 60


def _soak() -> ModuleType:
    path = ROOT / "scripts" / "probes" / "soak.py"
    spec = importlib.util.spec_from_file_location("perfview_soak", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("perfview_soak", module)
    spec.loader.exec_module(module)
    return module


def test_open_close_and_navigate_many_documents(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    soak = _soak()
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()

    def wait(condition, timeout: float = 60.0) -> None:
        qtbot.waitUntil(condition, timeout=int(timeout * 1000))

    figures = soak.soak(window, soak.default_files(), DOCS, STEPS, wait)
    assert figures.docs == DOCS
    assert figures.steps == STEPS
    assert window.tabs.count() == 0
    assert not window.status_controller.is_loading()
    growth_mb = (figures.final - figures.baseline) / soak.MB
    assert growth_mb < MAX_GROWTH_MB, figures.report()
