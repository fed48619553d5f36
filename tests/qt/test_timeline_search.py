"""Timeline search over names and args: highlight, results list, next/previous."""

from __future__ import annotations

from typing import Any

import pytest

from perfview.loaders import load
from tests.conftest import sample

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

CPU = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"


def test_key_value_search_lists_and_steps(qtbot: Any) -> None:
    from perfview.qt.views.timeline_view import TimelineView

    timeline = load(sample(CPU)).timeline
    view = TimelineView(timeline)
    qtbot.addWidget(view)
    view.resize(1200, 600)
    view.show()
    view.show_search()
    decoded = [timeline.args.get(i) for i in range(len(timeline.events))]
    want = [i for i, a in enumerate(decoded) if a.get("Sequence number") == 5]
    assert len(want) > 1
    count = view.set_search("sequence number=5")
    assert count == len(want)
    assert sorted(view.results.rows.tolist()) == want
    assert view.results.list.count() == len(want)
    assert view.results.status.text().startswith(f"arg sequence number = 5: {len(want)} slices")
    first = view.next_match()
    assert first == int(view.results.rows[0])
    assert view.results.list.currentRow() == 0
    assert view.selected_row == first
    view.next_match()
    assert view.previous_match() == first
    # picking a line in the list selects that slice
    item = view.results.list.item(len(want) - 1)
    view.results.list.itemClicked.emit(item)
    assert view.selected_row == int(view.results.rows[-1])
    # a bad regex is explained, not raised
    assert view.set_search("/(unclosed/") == 0
    assert "not a valid regular expression" in view.results.status.text()


def test_big_args_are_searched_in_a_worker(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from perfview.qt.views import search_results
    from perfview.qt.views.timeline_view import TimelineView

    monkeypatch.setattr(search_results, "SYNC_ARGS_BYTES", 0)  # as if the args were huge
    timeline = load(sample(CPU)).timeline
    view = TimelineView(timeline)
    qtbot.addWidget(view)
    decoded = [timeline.args.get(i) for i in range(len(timeline.events))]
    want = [i for i, a in enumerate(decoded) if a.get("Sequence number") == 5]
    assert view.set_search("sequence number=5") == 0  # no name can match a key=value
    assert "searching args" in view.match_label.text()
    qtbot.waitUntil(lambda: "searching" not in view.match_label.text(), timeout=30_000)
    assert sorted(view._matches.tolist()) == want
    assert view.match_label.text() == f"{len(want)} matches"
    # a result for an older text is dropped
    view.set_search("sequence number=5")
    task = view._search_task
    view.set_search("")
    qtbot.waitUntil(lambda: not task.is_running, timeout=30_000)
    assert len(view._matches) == 0
