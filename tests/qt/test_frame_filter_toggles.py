"""The flame graphs' frame-filter toggles: memray's import system hidden from the start (as
memray does), a toggle that says how much passes through it, one click to show it again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.loaders import load
from perfview.qt.document import Document
from tests.conftest import sample

pytestmark = pytest.mark.gui


def _import_rows(view: Any) -> int:
    files = view.tree.frames["file"].to_numpy()
    frame = np.asarray(view.tree.frame[1:], dtype=np.int64)
    return sum(str(f).startswith("<frozen importlib.") for f in files[frame])


def test_memray_icicle_hides_the_import_system_until_asked(qtbot: Any) -> None:
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.icicle_view import IcicleView

    tab = DocumentTab(Document(load(sample("memray/async_analysis_linux_memray.bin"))))
    qtbot.addWidget(tab)
    view = tab.view_widget("icicle")
    assert isinstance(view, IcicleView)
    box = view.filter_boxes["import"]
    assert box.isChecked()
    assert "import system" in box.text()
    assert "%" in box.text()
    assert _import_rows(view) == 0
    hidden_nodes = len(view.tree)
    box.setChecked(False)
    assert _import_rows(view) > 0
    assert len(view.tree) > hidden_nodes
    assert view.total[0] == view.source.metrics["total_ns"][0]  # weight kept either way
    box.setChecked(True)
    assert _import_rows(view) == 0


def test_a_pstats_icicle_offers_the_toggles_but_hides_nothing_first(qtbot: Any) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample("pstats/dtu_gabriellanaro_output.prof"))))
    qtbot.addWidget(tab)
    view: Any = tab.view_widget("icicle")
    assert set(view.filter_boxes) == {"import", "profiler"}
    assert not any(b.isChecked() for b in view.filter_boxes.values())
    assert view.tree is view.source
    assert _import_rows(view) > 0
    view.set_hidden("import", True)
    assert view.filter_boxes["import"].isChecked()
    assert _import_rows(view) == 0


def test_the_sandwich_offers_the_same_toggles_and_rebuilds_without_those_frames(
    qtbot: Any,
) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample("pstats/dtu_gabriellanaro_output.prof"))))
    qtbot.addWidget(tab)
    view: Any = tab.view_widget("sandwich")
    assert set(view.filter_bar.boxes) == {"import", "profiler"}
    assert view.tree is view.source
    assert _import_rows(view) > 0
    view.filter_bar.boxes["import"].setChecked(True)
    assert view.tree is not view.source
    assert _import_rows(view) == 0
