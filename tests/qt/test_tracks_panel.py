"""The timeline's Tracks tab: hide, pin, collapse, filter and flow modes change what is drawn."""

from __future__ import annotations

from typing import Any

import pytest

from perfview.loaders import load
from tests.conftest import sample

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

NCCL = "kineto_gpu/hta_nccl_data.json.gz"


@pytest.fixture
def view(qtbot: Any) -> Any:
    from perfview.qt.views.timeline_view import TimelineView

    v = TimelineView(load(sample(NCCL)).timeline)
    qtbot.addWidget(v)
    v.resize(1200, 600)
    v.show()
    return v


def _apply(qtbot: Any, view: Any, action: Any) -> None:
    with qtbot.waitSignal(view.tracks_panel.applied, timeout=60_000):
        action()


def test_hide_pin_collapse_and_filter(qtbot: Any, view: Any) -> None:
    panel = view.tracks_panel
    lanes = view.timeline.lanes
    first = int(lanes["lane"].iat[0])
    n_tracks = len(view.tracks.offset)
    # hide the first lane by unchecking it
    from PySide6.QtCore import Qt

    _apply(qtbot, view, lambda: panel.list.item(0).setCheckState(Qt.CheckState.Unchecked))
    assert first in panel.state.hidden
    assert len(view.tracks.offset) == n_tracks - 1
    in_first = (view.timeline.events["lane"] == first).to_numpy()
    assert (view.event_row[in_first] == -1).all()
    assert len(view.batch.index.rects) == int((~in_first).sum())
    # pin the last lane: it becomes the top track
    last = int(lanes["lane"].iat[-1])
    _apply(qtbot, view, lambda: panel.toggle_pin(last))
    assert int(view.tracks.lanes[0]) == last
    assert view.track_axis._labels[0][1] == str(lanes["label"].iat[-1])
    assert panel.list.item(0).text().startswith("★ ")
    # collapse a process: one summary row for all its threads
    pid = int(lanes["pid"].iat[0])
    _apply(qtbot, view, lambda: panel.toggle_collapse(pid))
    assert -1 in view.tracks.lanes.tolist()
    # filter by name: only GPU streams
    _apply(qtbot, view, lambda: panel.filter_edit.setText("stream"))
    assert all("stream" in text for _y, text in view.track_axis._labels[: len(view.tracks.offset)])


def test_flow_modes(qtbot: Any, view: Any) -> None:
    panel = view.tracks_panel
    panel.flows.setCurrentIndex(0)  # all
    xs, _ys = view.flow_item.getData()
    assert xs is not None
    assert len(xs) > 1000
    panel.flows.setCurrentIndex(2)  # none
    xs, _ys = view.flow_item.getData()
    assert xs is None or len(xs) == 0
    view.select_event(int(view.timeline.flows["src_event"].iat[0]))
    xs, _ys = view.flow_item.getData()
    assert xs is None or len(xs) == 0
    panel.flows.setCurrentIndex(1)  # the selection's
    view.select_event(int(view.timeline.flows["src_event"].iat[0]))
    xs, _ys = view.flow_item.getData()
    assert len(xs) >= 2
