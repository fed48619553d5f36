"""The critical path as a track over the Timeline: each step's path, segment by segment.

One widget paints every segment in one `paintEvent` (one `drawRects` call per category, like
the Timeline's slices: `rect_batch.draw_rect_array`), never one item per segment, and those
narrower than a pixel merged per pixel column first (`flame_cull.FlameIndex`). It sits
above the Timeline's plot, its x axis the plot's: the Timeline says where a time lands in
pixels (`to_px`), and repaints it when the plot's range changes. Clicking a segment selects
the slice it is named after on the Timeline (`segment_clicked(row)`); gaps between slices and
hand-offs between threads select nothing. The segments come from
`critical_path.path.path_segments`, computed in a worker (`start`), so the track shows once
they are there and stays hidden on traces without a step's path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.model import Timeline
from perfview.core.model.units import format_ns
from perfview.qt import deferred
from perfview.qt.items.rect_batch import draw_rect_array
from perfview.qt.tasks import Task

# One colour per path category (graph.CATEGORIES; the Critical path page's bars use them too)
CATEGORY_COLORS = {
    "cpu_op": "#4e79a7", "kernel": "#59a14f", "memcpy": "#edc948", "communication": "#b07aa1",
    "launch": "#f28e2b", "sync": "#e15759", "data_loading": "#76b7b2", "idle": "#bab0ac",
}  # fmt: skip
HEIGHT_PX = 20
# Segments merged per frame at most (more are drawn from the index's pre-merged levels): a
# whole trace's path merged afresh each frame cost ~10 ms, as much as all its slices.
RAW_BUDGET = 4_000
LABEL = "Critical path"


def compute_segments(timeline: Timeline) -> pd.DataFrame:
    """The worker's part (imported there: the analysis modules are not the window's)."""
    from perfview.core.analysis.torch.critical_path.path import path_segments

    return path_segments(timeline)


class CriticalPathTrack(QtWidgets.QWidget):
    """See the module docstring. `label_px`: the width of the Timeline's track labels, where
    this track writes its name; `to_px(ns array) → x pixels` in this widget."""

    segment_clicked = QtCore.Signal(int)  # event row
    ready = QtCore.Signal()  # the segments are in (or there are none)

    def __init__(self, label_px: int, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.label_px = label_px
        self.to_px: Callable[[np.ndarray], np.ndarray] | None = None
        self._release: Callable[[], None] = lambda: None
        # the plot's data area in this widget's pixels (left, right): where segments may go
        self.bounds: Callable[[], tuple[float, float]] = lambda: (label_px, self.width() - 1)
        self.segments = pd.DataFrame()
        self._start = np.zeros(0, np.int64)
        self._end = np.zeros(0, np.int64)
        self._cat = np.zeros(0, np.int64)
        self._row = np.zeros(0, np.int64)
        self._step_start = np.zeros(0, np.int64)
        self._index: FlameIndex | None = None
        self._brushes = [QtGui.QBrush(QtGui.QColor(c)) for c in CATEGORY_COLORS.values()]
        self.setFixedHeight(HEIGHT_PX)
        self.setMouseTracking(True)
        legend = " ".join(
            f"<span style='color:{c}'>■</span>&nbsp;{n}" for n, c in CATEGORY_COLORS.items()
        )
        self.setToolTip(
            f"The critical path of each step, by category:<br>{legend}<br>"
            "Click a segment to select its slice."
        )
        self.hide()

    def start(self, timeline: Timeline, run: Callable[[Task], None] | None = None) -> None:
        """Compute the segments in a worker (started by `run(task)` when given: the tab
        starts it once the window is quiet); the track shows when they come."""
        self._release = deferred.hold(self)  # a screenshot waits for the track
        task = Task(lambda _progress: compute_segments(timeline), "critical path track")
        # methods of this widget, so that Qt drops the connections with it (a tab closed
        # while the worker runs); the hold is released with it too
        task.finished.connect(self.set_segments)
        task.done.connect(self._task_done)
        if run is None:
            task.start()
        else:
            run(task)

    def _task_done(self) -> None:
        self._release()
        self.ready.emit()

    def set_segments(self, segments: pd.DataFrame) -> None:
        self.segments = segments.reset_index(drop=True)
        self._start = segments["start_ns"].to_numpy(dtype=np.int64)
        self._end = segments["end_ns"].to_numpy(dtype=np.int64)
        self._row = segments["row"].to_numpy(dtype=np.int64)
        firsts = segments.groupby("step", sort=False)["start_ns"].min()
        self._step_start = np.sort(firsts.to_numpy(dtype=np.int64))
        cats = pd.Categorical(segments["category"], categories=list(CATEGORY_COLORS))
        self._cat = np.asarray(cats.codes, np.int64)
        # culled and merged to pixels per frame (`FlameIndex`, one row), never drawn whole
        self._index = FlameIndex(
            Rects.make(self._start, np.maximum(self._end, self._start), np.zeros(len(self._start)),
                       bucket=self._cat),
            raw_budget=RAW_BUDGET, direct_below=0,
        )  # fmt: skip
        self.setVisible(len(segments) > 0)
        self.update()

    def segment_at(self, x_px: float) -> int:
        """Index of the segment under pixel x (within 2 px), else -1."""
        if self.to_px is None or not len(self._start):
            return -1
        left, right = self.to_px(self._start), self.to_px(self._end)
        near = np.flatnonzero((left - 2 <= x_px) & (x_px <= np.maximum(right, left + 1) + 2))
        if not len(near):
            return -1
        # the one whose middle is closest: a 1 px segment beside a wide one stays clickable
        mid = (left[near] + right[near]) / 2
        return int(near[np.argmin(np.abs(mid - x_px))])

    # --- Qt ------------------------------------------------------------------------------------
    def paintEvent(self, _event: QtGui.QPaintEvent) -> None:
        painter = QtGui.QPainter(self)
        try:
            painter.fillRect(self.rect(), QtGui.QColor(244, 244, 248))
            lo, hi = self.bounds()
            painter.setPen(QtGui.QColor(40, 40, 48))
            align = QtCore.Qt.AlignmentFlag.AlignVCenter | QtCore.Qt.AlignmentFlag.AlignRight
            painter.drawText(QtCore.QRect(4, 0, max(int(lo) - 10, 1), HEIGHT_PX),
                             int(align), LABEL)  # fmt: skip
            if self.to_px is None or self._index is None:
                return
            shown = self._shown(lo, hi)
            left = np.floor(self.to_px(shown.x0))
            right = np.ceil(self.to_px(shown.x1)) - 1
            right = np.maximum(right, left)  # at least one pixel: a short step is still seen
            painter.setClipRect(QtCore.QRect(int(lo), 0, int(hi - lo) + 1, HEIGHT_PX))
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            for code, brush in enumerate(self._brushes):
                pick = np.flatnonzero(shown.bucket == code)
                if not len(pick):
                    continue
                rects = np.empty((len(pick), 4), np.int32)
                rects[:, 0] = np.clip(left[pick], lo - 1, hi + 1)
                rects[:, 1] = 3
                rects[:, 2] = np.clip(right[pick], lo - 1, hi + 1)
                rects[:, 3] = HEIGHT_PX - 4
                painter.setBrush(brush)
                draw_rect_array(painter, np.ascontiguousarray(rects))
            # where each step's path starts: a dark tick across the track
            ticks = np.floor(self.to_px(self._step_start))
            ticks = ticks[(ticks >= lo) & (ticks <= hi)]
            if len(ticks):
                bars = np.zeros((len(ticks), 4), np.int32)
                bars[:, 0] = bars[:, 2] = ticks
                bars[:, 3] = HEIGHT_PX - 1
                painter.setBrush(QtGui.QColor(40, 40, 48))
                draw_rect_array(painter, bars)
        finally:
            painter.end()

    def _shown(self, lo: float, hi: float) -> Rects:
        """The segments between pixels lo and hi, those narrower than a pixel merged into
        one per pixel column (the colour of most of its time), as the Timeline's slices
        are: a whole trace's tens of thousands of segments are ~1,000 rects to draw."""
        assert self.to_px is not None
        assert self._index is not None
        p0, p1 = self.to_px(np.array([0.0, 1e9]))
        scale = float(p1 - p0) / 1e9  # pixels per ns
        if scale <= 0:
            return Rects.empty()
        x_lo, x_hi = (lo - p0) / scale, (hi - p0) / scale
        return self._index.query(float(x_lo), float(x_hi), scale)

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:
        i = self.segment_at(event.position().x())
        if i >= 0 and self._row[i] >= 0:
            self.segment_clicked.emit(int(self._row[i]))
        event.accept()

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ToolTip and isinstance(event, QtGui.QHelpEvent):
            i = self.segment_at(event.pos().x())
            if i >= 0:
                seg = self.segments.iloc[i]
                QtWidgets.QToolTip.showText(event.globalPos(), (
                    f"<b>{seg['name']}</b><br>{seg['category']} · step {seg['step']} · "
                    f"{format_ns(int(seg['end_ns'] - seg['start_ns']))}"
                ), self)  # fmt: skip
                return True
        return super().event(event)


__all__ = ["CATEGORY_COLORS", "CriticalPathTrack", "compute_segments"]
