"""Soak: thousands of repaints with zoom/pan steps on a real trace must not crash.

This is the guard against binding regressions such as PySide6 6.12.0 on Python 3.11, which
drops a reference to None on every void call and aborts after a few hundred repaints
(qt-setup.md). Short tests pass there; only a long run of real painting shows it.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import SAMPLES

pytest.importorskip("pytestqt")
pytestmark = [pytest.mark.gui, pytest.mark.slow]

TRACE = SAMPLES / "kineto_gpu" / "hta_nccl_data.json.gz"
TIMELINE_FRAMES = 2000
ICICLE_FRAMES = 1000


def _bundle():
    """The real NCCL trace when the samples are here, else a synthetic ~200k-slice one."""
    from perfview.core.analysis.calltree import tree_from_events
    from perfview.core.model import Bundle

    if TRACE.exists():
        from perfview import loaders

        bundle = loaders.load(TRACE)
    else:
        from tests.qt.test_timeline_view import make_timeline

        timeline = make_timeline(n_top=600, n_lanes=4, fanout=4, levels=4)  # 204k slices
        bundle = Bundle(format="trace", path=TRACE, timeline=timeline)
    assert bundle.timeline is not None
    bundle.tree = tree_from_events(bundle.timeline)
    return bundle


def _drive(qtbot, view, frames: int, steps) -> int:
    """Apply one navigation step per frame and repaint synchronously; grab now and then."""
    from PySide6.QtWidgets import QApplication

    painted = 0
    for i in range(frames):
        steps[i % len(steps)]()
        view.plot.viewport().repaint()
        painted += 1
        if i % 200 == 0:
            QApplication.processEvents()
            assert not view.grab().isNull()
    return painted


def test_soak_timeline_and_icicle(qtbot) -> None:
    from perfview.qt.views.icicle_view import IcicleView
    from perfview.qt.views.timeline_view import TimelineView

    bundle = _bundle()
    timeline = TimelineView(bundle.timeline)
    qtbot.addWidget(timeline)
    timeline.resize(1400, 800)
    timeline.show()
    qtbot.waitExposed(timeline)
    vb = timeline.viewbox
    rows = np.flatnonzero(bundle.timeline.events["dur"].to_numpy() > 0)[::97]
    picks = iter(np.resize(rows, TIMELINE_FRAMES))
    steps = [
        lambda: vb.zoom_x(0.7),
        lambda: vb.pan_x(0.2),
        lambda: vb.zoom_x(0.7),
        lambda: vb.pan_x(-0.3),
        lambda: vb.scroll_rows(3),
        lambda: vb.scroll_rows(-3),
        lambda: timeline.select_event(int(next(picks))),
        lambda: vb.zoom_x(1.9),
        lambda: timeline.fit_all(),
    ]
    assert _drive(qtbot, timeline, TIMELINE_FRAMES, steps) == TIMELINE_FRAMES
    assert timeline.batch.stats["visible"] > 0

    icicle = IcicleView(bundle.tree)
    qtbot.addWidget(icicle)
    icicle.resize(1400, 700)
    icicle.show()
    qtbot.waitExposed(icicle)
    kids = icicle.tree.children(0)
    ivb = icicle.viewbox
    isteps = [
        lambda: ivb.zoom_x(0.6),
        lambda: ivb.pan_x(0.1),
        lambda: icicle.zoom_to(int(kids[0]) if len(kids) else 0),
        lambda: icicle.set_search("aten"),
        lambda: icicle.set_search(""),
        lambda: icicle.zoom_to(0),
    ]
    assert _drive(qtbot, icicle, ICICLE_FRAMES, isteps) == ICICLE_FRAMES
    assert icicle.batch.stats["visible"] > 0
