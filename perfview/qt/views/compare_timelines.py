"""Two traces' timelines stacked, x ranges linked, aligned at the first ProfilerStep.

Each run keeps its own `TimelineView` (its own tracks, side panel and search): lanes of two runs
rarely match one to one, so they are not interleaved. The x axes are linked with an offset
rather than through pyqtgraph's `setXLink`, which only links equal ranges: B's x is A's x minus
`offset`, where `offset = A.first_step - B.first_step` (`diff_views.first_step_ns`; 0 when a
trace has no steps, which aligns the trace starts). Zooming or panning either view moves the
other; a guard flag keeps the two handlers from feeding each other. A dashed line marks the
alignment instant in both views.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QToolButton, QVBoxLayout, QWidget

from perfview.core.compare.diff_views import first_step_ns
from perfview.core.model import Timeline
from perfview.core.model.units import format_ns
from perfview.qt.views.timeline_view import TimelineView

ALIGN_PEN = pg.mkPen(90, 90, 100, 200, width=1, style=Qt.PenStyle.DashLine)


def _titled(title: str, view: QWidget, extra: QWidget | None = None) -> tuple[QWidget, QLabel]:
    box = QWidget()
    label = QLabel(title, box)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setContentsMargins(4, 2, 4, 0)
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 4, 0)
    row.addWidget(label, 1)
    if extra is not None:
        row.addWidget(extra)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addLayout(row)
    layout.addWidget(view, 1)
    return box, label


class CompareTimelines(QWidget):
    """Timeline A above timeline B; `offset` is A's alignment instant minus B's (ns)."""

    def __init__(
        self,
        timeline_a: Timeline,
        timeline_b: Timeline,
        names: tuple[str, str] = ("A", "B"),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.step_a = first_step_ns(timeline_a)
        self.step_b = first_step_ns(timeline_b)
        self.offset = self.step_a - self.step_b
        self.view_a = TimelineView(timeline_a)
        self.view_b = TimelineView(timeline_b)
        aligned = "first ProfilerStep" if self.step_a or self.step_b else "trace start"
        titles = [
            f"<b>{side}</b> {name} &nbsp;<small>aligned at the {aligned} "
            f"({format_ns(step)} into the trace, dashed line)</small>"
            for side, name, step in zip("AB", names, (self.step_a, self.step_b), strict=True)
        ]
        # The side panels (details, range) start hidden: two stacked timelines need the width.
        self.details_button = QToolButton(self)
        self.details_button.setText("Details panels")
        self.details_button.setCheckable(True)
        self.details_button.toggled.connect(self.show_details)
        self.show_details(False)
        box_a, self.label_a = _titled(titles[0], self.view_a, self.details_button)
        box_b, self.label_b = _titled(titles[1], self.view_b)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(box_a)
        self.splitter.addWidget(box_b)
        self.splitter.setSizes([1000, 1000])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        for view, step in ((self.view_a, self.step_a), (self.view_b, self.step_b)):
            line = pg.InfiniteLine(pos=float(step), angle=90, pen=ALIGN_PEN, movable=False)
            line.setZValue(35)
            view.plot.addItem(line, ignoreBounds=True)
        self._widen_limits()
        self._syncing = False
        self.view_a.viewbox.sigXRangeChanged.connect(lambda *_: self._follow(self.view_a))
        self.view_b.viewbox.sigXRangeChanged.connect(lambda *_: self._follow(self.view_b))
        self.fit_all()

    def show_details(self, shown: bool) -> None:
        for view in (self.view_a, self.view_b):
            view.side.setVisible(shown)

    # --- linking ---------------------------------------------------------------------------
    def _spans(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Both runs' content spans in A's coordinates."""
        lo_a, hi_a = self.view_a._span()
        lo_b, hi_b = self.view_b._span()
        return (lo_a, hi_a), (lo_b + self.offset, hi_b + self.offset)

    def _widen_limits(self) -> None:
        """Each view may pan over the union of both runs, or linking would clamp one of them."""
        (lo_a, hi_a), (lo_b, hi_b) = self._spans()
        lo, hi = min(lo_a, lo_b), max(hi_a, hi_b)
        pad = max((hi - lo) * 0.05, 1000.0)
        self.view_a.viewbox.setLimits(xMin=lo - pad, xMax=hi + pad)
        self.view_b.viewbox.setLimits(xMin=lo - pad - self.offset, xMax=hi + pad - self.offset)

    def _follow(self, source: TimelineView) -> None:
        if self._syncing:
            return
        lo, hi = source.x_range()
        shift = -self.offset if source is self.view_a else self.offset
        target = self.view_b if source is self.view_a else self.view_a
        self._syncing = True
        try:
            target.viewbox.setXRange(lo + shift, hi + shift, padding=0)
        finally:
            self._syncing = False

    def fit_all(self) -> None:
        """Show both runs whole (the union of their aligned spans)."""
        (lo_a, hi_a), (lo_b, hi_b) = self._spans()
        lo, hi = min(lo_a, lo_b), max(hi_a, hi_b)
        self.view_a.viewbox.setXRange(lo, hi, padding=0.01)

    def show_points(self, a_ts: float, b_ts: float, width: float) -> None:
        """Show A around `a_ts` and B around `b_ts` (the Structure view's aligned node).

        The two instants need not be `offset` apart (the runs diverged before), so both views
        are placed at once, without linking; a side given as NaN (the node is absent there)
        follows the other through the usual offset.
        """
        pad = max(width, 1000.0)
        if a_ts != a_ts:  # NaN: only in B
            a_ts = b_ts + self.offset
        if b_ts != b_ts:  # only in A
            b_ts = a_ts - self.offset
        self._syncing = True
        try:
            self.view_a.viewbox.setXRange(a_ts - pad, a_ts + 2 * pad, padding=0)
            self.view_b.viewbox.setXRange(b_ts - pad, b_ts + 2 * pad, padding=0)
        finally:
            self._syncing = False

    def x_ranges(self) -> tuple[tuple[float, float], tuple[float, float]]:
        return self.view_a.x_range(), self.view_b.x_range()


__all__ = ["CompareTimelines"]
