"""The window's Timeline page on a reopened trace is drawn from the cached layout
(`store.layout_entries`), and the first open stores it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


def _tab_when_prepared(qtbot: Any, path: Path) -> Any:
    from perfview.loaders import load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(path)))
    qtbot.addWidget(tab)
    qtbot.waitUntil(lambda: "timeline" in tab.tab_data.data, timeout=60_000)  # the AHEAD page
    return tab


def test_reopened_timeline_comes_from_the_cached_layout(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.core.layout import timeline_layout
    from perfview.qt import tasks
    from perfview.qt.views.timeline_view import TimelineView
    from perfview.store import layout_entries, parsed_columns

    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")
    path = tmp_path / "resnet.pt.trace.json.gz"
    path.write_bytes(sample(RESNET).read_bytes())

    first = _tab_when_prepared(qtbot, path)
    parsed_columns.flush()
    layout_entries.flush()
    assert first.tab_data.data["timeline"].event_row.flags.writeable  # laid out here
    assert layout_entries.entry_for(path).is_dir()  # and stored

    again = _tab_when_prepared(qtbot, path)
    data = again.tab_data.data["timeline"]
    assert not data.event_row.flags.writeable  # read back, memory-mapped
    fresh = timeline_layout.prepare_timeline(again.document.bundle.timeline)
    assert np.array_equal(data.event_row, fresh.event_row)
    assert again.show_view("timeline")
    view = again.view_widget("timeline")
    assert isinstance(view, TimelineView)
    assert view.data is data
    assert view.grab().width() > 0  # draws from read-only arrays
    row = int(np.flatnonzero(fresh.event_row >= 0)[0])
    view.select_event(row, fit=True)  # zooms in: the finest level, then culls and merges
    assert view.grab().width() > 0
    name = str(data.categories[data.codes[row]])
    assert view.set_search(name) > 0
    task = getattr(view, "_search_task", None)  # the args are searched in a worker:
    # wait until its result was delivered (released on the GUI thread after the slots ran)
    qtbot.waitUntil(lambda: task is None or task not in tasks._RUNNING, timeout=30_000)
    view.fit_all()
    assert view.grab().width() > 0
