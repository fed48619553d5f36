"""Save a workspace from one window, open it in another: files, pages, zoom, tracks, selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from perfview.core.layout.track_arrange import TrackState
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from tests.conftest import sample

pytestmark = pytest.mark.gui

TRACE = "kineto_gpu/hta_mi250_rocm6.2.json.gz"
PSTATS = "pstats/gprof2dot_print1.pstats"


def _window(qtbot: Any, tmp_path: Path, name: str) -> MainWindow:
    path = tmp_path / f"{name}.ini"
    win = MainWindow(Settings(QSettings(str(path), QSettings.Format.IniFormat)))
    qtbot.addWidget(win)
    win.resize(1200, 700)
    win.show()
    return win


def _open(qtbot: Any, window: MainWindow, path: Path) -> Any:
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as blocker:
        window.open_path(path)
    return blocker.args[0]


def test_save_and_restore(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt import workspace_actions

    first = _window(qtbot, tmp_path, "a")
    trace = _open(qtbot, first, sample(TRACE))
    view = trace.view_widget("timeline")
    trace.show_view("timeline")
    lane = int(view.timeline.lanes["lane"].iat[0])
    with qtbot.waitSignal(view.tracks_panel.applied, timeout=60_000):
        view.tracks_panel.apply(hidden=frozenset({lane}))
    view.tracks_panel.set_flow_mode("none")
    row = int(view.timeline.events["dur"].to_numpy().argmax())
    view.select_event(row)
    mark = view.bookmarks.add_here()  # at the selected slice's start
    view.select_range(1000, 5_000_000)
    view.viewbox.setXRange(2_000_000, 4_000_000, padding=0)
    prof = _open(qtbot, first, sample(PSTATS))
    prof.show_view("callers")
    first.tabs.setCurrentWidget(trace)
    saved = workspace_actions.save_workspace(first, tmp_path / "study")
    assert saved == tmp_path / "study.perfview"
    doc = json.loads(saved.read_text())
    assert [t["view"] for t in doc["tabs"]] == ["timeline", "callers"]
    assert not Path(doc["tabs"][0]["path"]).is_absolute()

    second = _window(qtbot, tmp_path, "b")
    with qtbot.waitSignal(second.workspace_restored, timeout=60_000):
        second.open_path(saved)  # a .perfview path opens as a workspace
    tabs = [second.tabs.widget(i) for i in range(second.tabs.count())]
    expected = [sample(TRACE).resolve(), sample(PSTATS).resolve()]  # samples may be linked
    assert [Path(t.document.path).resolve() for t in tabs] == expected
    restored, other = tabs
    assert second.tabs.currentWidget() is restored
    assert restored.current_view() == "timeline"
    assert other.current_view() == "callers"
    tv = restored.view_widget("timeline")
    if tv.tracks_panel.task is not None:
        with qtbot.waitSignal(tv.tracks_panel.applied, timeout=60_000):
            pass
    assert tv.tracks_panel.state == TrackState(hidden=frozenset({lane}), flows="none")
    assert tv.flow_mode == "none"
    assert lane not in tv.tracks.lanes.tolist()
    assert tv.selected_row == row
    assert tv.bookmarks.items == [mark]
    assert mark.ts_ns == int(tv.timeline.events["ts"].iat[row])
    assert mark.label == str(tv.timeline.events["name"].iat[row])
    assert restored.document.range == (1000, 5_000_000)
    lo, hi = tv.x_range()
    assert (round(lo), round(hi)) == (2_000_000, 4_000_000)


def test_missing_file_is_reported_and_the_rest_restores(qtbot: Any, tmp_path: Path) -> None:
    doc = {
        "format": "perfview-workspace",
        "version": 1,
        "current": 1,
        "tabs": [
            {"path": str(tmp_path / "gone.json"), "view": "timeline"},
            {"path": str(sample(PSTATS)), "view": "functions"},
        ],
    }
    path = tmp_path / "w.perfview"
    path.write_text(json.dumps(doc))
    window = _window(qtbot, tmp_path, "c")
    with qtbot.waitSignal(window.workspace_restored, timeout=60_000):
        window.open_path(path)
    assert window.error_bar.isVisible()
    text = window.error_bar.label.text()
    assert text.startswith("1 file is missing from workspace w.perfview:")
    assert "gone.json" in text
    assert window.tabs.count() == 1
    assert window.tabs.widget(0).current_view() == "functions"
