"""The critical path as a track over the Timeline: it appears on a GPU trace once its worker
is done, lists each step's path in time order, and a click on a segment selects its slice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore

from tests.core.analysis.torch.critical_path._tiny import GPU_BOUND, US, loaded, write

pytestmark = pytest.mark.gui


def _view(qtbot: Any, tmp_path: Path) -> Any:
    from perfview.qt.views.timeline_view import TimelineView

    view = TimelineView(loaded(write(tmp_path / "gpu.json", GPU_BOUND)))
    qtbot.addWidget(view)
    view.resize(1200, 500)
    with qtbot.waitSignal(view.path_track.ready, timeout=30000):
        view.show()
    return view


def test_the_track_lists_the_path_of_a_gpu_trace(qtbot: Any, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    track = view.path_track
    assert track.isVisible()
    seg = track.segments
    # the path of GPU_BOUND: launch, both kernels, the sync's return, the step's CPU time
    kernels = seg[seg["category"] == "kernel"]
    assert kernels[["name", "start_ns", "end_ns"]].values.tolist() == [
        ["k1_gemm", 12 * US, 52 * US], ["k2", 52 * US, 92 * US],
    ]  # fmt: skip
    assert (seg["end_ns"] - seg["start_ns"]).sum() == 100 * US
    assert np.all(np.diff(seg["start_ns"].to_numpy()) >= 0)
    # drawn where the plot draws the same times: the track's x is the plot's
    x0, x1 = view.path_track.to_px(np.array([12 * US, 92 * US]))
    lo, hi = track.bounds()
    assert lo <= x0 < x1 <= hi <= track.width()


def test_clicking_a_segment_selects_its_slice(qtbot: Any, tmp_path: Path) -> None:
    view = _view(qtbot, tmp_path)
    track = view.path_track
    ev = view.timeline.events
    k2 = int(np.flatnonzero((ev["name"].astype(str) == "k2").to_numpy())[0])
    x = float(track.to_px(np.array([72 * US]))[0])  # the middle of k2
    with qtbot.waitSignal(view.selected, timeout=5000) as blocker:
        qtbot.mouseClick(track, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(int(x), 10))
    assert blocker.args == [k2]
    assert view.selected_row == k2
    # zoomed in on k1_gemm, the same pixel is another segment: the track follows the plot
    view.viewbox.setXRange(12 * US, 52 * US, padding=0)
    gemm = int(np.flatnonzero((ev["name"].astype(str) == "k1_gemm").to_numpy())[0])
    x = float(track.to_px(np.array([30 * US]))[0])
    with qtbot.waitSignal(view.selected, timeout=5000) as blocker:
        qtbot.mouseClick(track, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(int(x), 10))
    assert blocker.args == [gemm]


def test_no_track_without_a_torch_trace(qtbot: Any, tmp_path: Path) -> None:
    from perfview.core.model import Timeline
    from perfview.qt.views.timeline_view import TimelineView
    from tests.qt.test_timeline_view import make_timeline

    timeline: Timeline = make_timeline()
    view = TimelineView(timeline)
    qtbot.addWidget(view)
    view.show()
    assert not timeline.is_torch
    assert not view.path_track.isVisible()


def test_one_colour_per_path_category() -> None:
    from perfview.core.analysis.torch.critical_path.graph import CATEGORIES
    from perfview.qt.views.critical_path_track import CATEGORY_COLORS

    assert tuple(CATEGORY_COLORS) == CATEGORIES


def test_a_long_path_is_drawn_merged_to_pixels_and_whole_when_zoomed_in(qtbot: Any) -> None:
    """The real NCCL sample's three steps: tens of thousands of segments zoomed out are one
    rect per pixel column at most (every segment counted in one), zoomed in each its own."""
    from PySide6.QtGui import QColor

    from perfview.loaders import load
    from perfview.qt.views.critical_path_track import CATEGORY_COLORS
    from perfview.qt.views.timeline_view import TimelineView
    from tests.conftest import sample

    timeline = load(sample("kineto_gpu/hta_nccl_data.json.gz")).timeline
    assert timeline is not None
    view = TimelineView(timeline)
    qtbot.addWidget(view)
    view.resize(1200, 500)
    with qtbot.waitSignal(view.path_track.ready, timeout=60000):
        view.show()
    track = view.path_track
    seg = track.segments
    lo, hi = track.bounds()
    shown = track._shown(lo, hi)
    assert len(seg) > 10 * (hi - lo)  # far more segments than pixels
    assert len(shown) <= 2 * (hi - lo)
    assert int(shown.count.sum()) == len(seg)
    # zoomed to the longest communication segment: drawn alone, in its category's colour
    comm = seg[seg["category"] == "communication"]
    longest = int(np.argmax((comm["end_ns"] - comm["start_ns"]).to_numpy()))
    start = int(comm["start_ns"].to_numpy()[longest])
    end = int(comm["end_ns"].to_numpy()[longest])
    view.viewbox.setXRange(start - (end - start), end + (end - start), padding=0)
    lo, hi = track.bounds()
    shown = track._shown(lo, hi)
    mine = np.flatnonzero((shown.x0 == start) & (shown.x1 == end))
    assert len(mine) == 1
    assert int(shown.count[mine[0]]) == 1
    assert track.to_px is not None
    x = int(track.to_px(np.array([(start + end) / 2]))[0])
    pixel = track.grab().toImage().pixelColor(x, 10)
    assert pixel == QColor(CATEGORY_COLORS["communication"])
