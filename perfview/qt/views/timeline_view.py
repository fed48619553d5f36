"""Timeline: one track per lane (thread / GPU stream), slices stacked by depth, plus counter and
torch memory tracks. All slices are drawn by ONE `RectBatchItem`.

Coordinates: x is ns since the trace origin, y is a row number (row r covers [r, r+1), the
view is inverted so row 0 is at the top). Rows keep a fixed pixel height; only x zooms.
Views never compute aggregates themselves: range tables, links and layouts come from
`perfview.core.layout.timeline_layout`. Around the plot: `timeline_panels` (side tabs),
`timeline_find` (search bar) and `timeline_flows` (the selection's flow arrows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.layout import colors, timeline_layout
from perfview.core.model import Timeline
from perfview.core.model.units import format_ns
from perfview.qt import deferred
from perfview.qt.document import Document, Selection
from perfview.qt.items import marks
from perfview.qt.items.flame_view_box import FlameViewBox
from perfview.qt.items.labels import TimeAxis, TrackAxis
from perfview.qt.items.quick_axis import quick_plot
from perfview.qt.items.rect_batch import RectBatchItem, TrackBands
from perfview.qt.tasks import Task
from perfview.qt.views import timeline_find, timeline_flows, timeline_panels
from perfview.qt.views.critical_path_track import CriticalPathTrack
from perfview.qt.views.details_panel import DetailsPanel

ROW_PX = 18.0
CURVE_ROWS = timeline_layout.CURVE_ROWS  # height of a counter / memory track in rows
MAX_COUNTER_TRACKS = timeline_layout.MAX_COUNTER_TRACKS
# What a deferred view (`defer`) sets on a later turn: asking for one builds the rest at once.
_LATE = {"tracks", "event_row", "curves", "instant_item", "total_rows", "details", "results"}
_LATE |= {"range_label", "range_table", "tracks_panel", "bookmarks", "flow_mode"}


class TimelineView(QtWidgets.QWidget, deferred.BuiltInTurns):
    """Tracks × time. Construct as `TimelineView(timeline, document)`; document may be None.

    `data` is `timeline_layout.prepare_timeline(timeline)`, computed on a worker thread by the
    document tab so that building this widget does no work proportional to the trace; without
    it the view prepares it itself (tests, compare and bench scripts). With `defer` the
    tracks and the side tabs are added on the next event-loop turns (`ensure_built`).
    `background(task)` starts the view's own worker (the critical-path track) when the
    window sees fit (a document tab: once quiet, `DocumentTab.run_when_quiet`); without it
    the task starts at once.
    """

    selected = QtCore.Signal(int)  # event row (also sent to the document)
    # built by timeline_panels.build_side and timeline_find.build_search_bar
    side: QtWidgets.QTabWidget
    details: DetailsPanel
    search_bar: QtWidgets.QWidget
    search_edit: QtWidgets.QLineEdit
    match_label: QtWidgets.QLabel

    def __init__(
        self,
        timeline: Timeline,
        document: Document | None = None,
        parent: QtWidgets.QWidget | None = None,
        data: timeline_layout.TimelineData | None = None,
        *,
        defer: bool = False,
        background: Callable[[Task], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.document = document
        self._background = background
        self.selected_row: int | None = None
        self._matches = np.zeros(0, dtype=np.int64)
        self._match_pos = -1
        self.data = data if data is not None else timeline_layout.prepare_timeline(timeline)
        self._categories = self.data.categories
        self._codes = self.data.codes
        self._ts = self.data.ts
        self._dur = self.data.dur
        self._build_plot()
        timeline_find.build_search_bar(self)
        timeline_panels.assemble(self)  # the plot beside the (empty) side tabs
        self._connect_document()  # now: a request may come before the rest is built
        if defer:  # painted once, when all of it is there
            self.setUpdatesEnabled(False)
        # With `defer`, the rest on the coming event-loop turns, ~10 ms of GUI-thread work
        # each: on a busy machine each ms stretches 3-5x (one 25 ms step was a 100+ ms stall).
        self.build_in_turns(
            [self._finish_plot, self._finish_side], defer, lambda: self.setUpdatesEnabled(True)
        )

    def _finish_plot(self) -> None:
        self._layout_tracks()
        self.fit_all()
        if self.timeline.is_torch:  # each step's critical path, over the tracks
            self.path_track.start(self.timeline, self._background)

    def _finish_side(self) -> None:
        timeline_panels.build_side(self)  # Details, Range, Search, Tracks, Bookmarks tabs

    def __getattr__(self, name: str) -> Any:
        """An attribute a later turn sets (`defer`), asked for sooner: build the rest now."""
        if name in _LATE and self.__dict__.get("_unbuilt"):
            self.ensure_built()
            return object.__getattribute__(self, name)
        raise AttributeError(name)

    # --- construction -------------------------------------------------------------------------
    def _build_plot(self) -> None:
        self.viewbox = FlameViewBox()
        self.viewbox.invertY(True)
        self.time_axis = TimeAxis("top")
        self.track_axis = TrackAxis(width=230)
        self.plot = quick_plot(
            {"top": self.time_axis, "left": self.track_axis}, viewBox=self.viewbox
        )
        self.plot.setBackground(QtGui.QColor(250, 250, 252))
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        for axis in (self.time_axis, self.track_axis):
            axis.setPen(pg.mkPen(120, 120, 130))
            axis.setTextPen(pg.mkPen(40, 40, 48))
        self.plot.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.plot.installEventFilter(self)
        self.bands = pg.GraphicsObject()  # replaced in _layout_tracks
        cats, codes = self._categories, self._codes
        self.batch = RectBatchItem(names=lambda nodes: cats[codes[nodes]].tolist())
        self.batch.setZValue(10)
        self.plot.addItem(self.batch)
        self.flow_item = pg.PlotDataItem(pen=pg.mkPen(20, 20, 20, 200, width=1.5), connect="pairs")
        self.flow_item.setZValue(30)
        self._arrow_heads: list[pg.ArrowItem] = []
        self.plot.addItem(self.flow_item)
        self.region = pg.LinearRegionItem(
            movable=False, brush=pg.mkBrush(60, 120, 220, 40), pen=pg.mkPen(60, 120, 220, 160)
        )
        self.region.setZValue(40)
        self.region.hide()
        self.plot.addItem(self.region, ignoreBounds=True)
        self.viewbox.clicked.connect(self._on_click)
        self.viewbox.double_clicked.connect(self._on_double_click)
        self.viewbox.range_dragging.connect(self._show_region)
        self.viewbox.range_selected.connect(self.select_range)
        self.plot.scene().sigMouseMoved.connect(self._on_hover)
        self.path_track = CriticalPathTrack(int(self.track_axis.width()))
        self.path_track.to_px = self._track_px
        self.path_track.bounds = self._track_bounds
        self.path_track.segment_clicked.connect(self._on_path_segment)
        self.viewbox.sigXRangeChanged.connect(self.path_track.update)

    def _layout_tracks(self) -> None:
        """Rows for every lane, then counter tracks, then the torch memory track (all laid
        out in `self.data`; this only hands the arrays to the items)."""
        data = self.data
        self.tracks = data.tracks
        self.event_row = data.event_row
        self.batch.set_index(data.index)
        self.curves: list[pg.PlotDataItem] = []
        for _label, x, ys in data.curves:
            self._add_curve(x, ys)
        self.instant_item = marks.add_instants(self.plot, data.instants)
        self.total_rows = data.total_rows
        self.track_axis.set_tracks(data.labels)
        bands = TrackBands(self.tracks, data.band_span)
        self.plot.addItem(bands)
        self.bands = bands
        lo, hi = self._span()
        pad = max((hi - lo) * 0.05, 1000.0)
        self.viewbox.setLimits(
            xMin=lo - pad,
            xMax=hi + pad,
            minXRange=10.0,
        )
        self.viewbox.set_content_rows(self.total_rows, ROW_PX)

    def _add_curve(self, x: np.ndarray, ys: np.ndarray) -> None:
        """One counter/memory curve, `ys` already in row units (`timeline_layout.curve_rows`)."""
        colour = colors.PALETTE[len(self.curves) * 5 % len(colors.PALETTE)]
        # No fill under the curve: pyqtgraph fills a downsampled curve segment by segment
        # (~40 fillPath calls, 7 ms a frame), more than all the slices cost.
        dark = tuple(int(c * 0.7) for c in colour)
        # steps: a counter holds its value until the next sample (the tooltip says the same).
        # A 1 px pen: Qt's raster engine strokes a 1.5 px one as polygons, 3 ms per curve per
        # frame (49 ms of a 1 GB resnet50 trace's first Timeline frame, against 1 ms now).
        curve = pg.PlotDataItem(x, ys, pen=pg.mkPen(*dark, width=1), stepMode="right")
        curve.setZValue(5)
        self.plot.addItem(curve)
        # Only after addItem: pyqtgraph 0.14 raises in itemChange when clip-to-view is set on
        # an item that has no ViewBox yet.
        curve.setClipToView(True)
        curve.setDownsampling(auto=True, method="peak")
        self.curves.append(curve)

    def _connect_document(self) -> None:
        if self.document is None:
            return
        self.document.selection_changed.connect(self._on_document_selection)
        self.document.range_changed.connect(self._on_document_range)
        self.document.search_changed.connect(self._on_document_search)
        self.document.slices_requested.connect(self.select_events)

    # --- geometry -----------------------------------------------------------------------------
    def _span(self) -> tuple[float, float]:
        return self.data.span

    def fit_all(self) -> None:
        lo, hi = self._span()
        self.viewbox.setXRange(lo, hi, padding=0.01)
        self.viewbox.show_rows_from(-0.5)

    def x_range(self) -> tuple[float, float]:
        (lo, hi), _ = self.viewbox.viewRange()
        return float(lo), float(hi)

    def fit_event(self, row: int, fill: float = 1 / 1.1) -> None:
        """Zoom so slice `row` spans `fill` of the view's width, centred (by default the
        whole view but a 5 % margin each side), and scroll to its track. A smaller `fill`
        shows what ran around it (a screenshot of one kernel: 0.5)."""
        self.ensure_built()
        ts, dur = float(self._ts[row]), float(max(self._dur[row], 1))
        half = dur / min(max(fill, 1e-6), 1.0) / 2
        mid = ts + dur / 2
        self.viewbox.setXRange(mid - half, mid + half, padding=0)
        self._scroll_to_row(int(self.event_row[row]))

    def _scroll_to_row(self, row: int) -> None:
        _, (top, bottom) = self.viewbox.viewRange()
        if top <= row and row + 1 <= bottom:
            return
        self.viewbox.show_rows_from(row - (bottom - top) / 3)

    # --- interaction --------------------------------------------------------------------------
    def eventFilter(self, obj: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if (
            obj is self.plot
            and isinstance(event, QtGui.QKeyEvent)
            and (event.type() == QtCore.QEvent.Type.KeyPress)
        ):
            key = QtCore.Qt.Key(event.key())
            moves: dict[QtCore.Qt.Key, Callable[[], None]] = {
                QtCore.Qt.Key.Key_W: lambda: self.viewbox.zoom_x(0.8, self._cursor_x()),
                QtCore.Qt.Key.Key_S: lambda: self.viewbox.zoom_x(1.25, self._cursor_x()),
                QtCore.Qt.Key.Key_A: lambda: self.viewbox.pan_x(-0.15),
                QtCore.Qt.Key.Key_D: lambda: self.viewbox.pan_x(0.15),
            }
            move = moves.get(key)
            if move is not None:
                move()
                return True
        return super().eventFilter(obj, event)

    def _cursor_x(self) -> float | None:
        pos = self.plot.mapFromGlobal(QtGui.QCursor.pos())
        if not self.plot.rect().contains(pos):
            return None
        scene = self.plot.mapToScene(pos)
        return float(self.viewbox.mapSceneToView(scene).x())

    def _pixel_tolerance(self, px: float = 3.0) -> float:
        lo, hi = self.x_range()
        return (hi - lo) / max(self.viewbox.width(), 1.0) * px

    def _on_click(self, x: float, y: float) -> None:
        self.ensure_built()
        row = self.batch.node_at(x, y, self._pixel_tolerance())
        if row >= 0:
            self.select_event(row, fit=False)

    def _track_px(self, xs: np.ndarray) -> np.ndarray:
        """Pixels in the critical-path track of times `xs`: the plot's x mapping."""
        (lo, hi), _ = self.viewbox.viewRange()
        left, right = self._track_bounds()
        scale = (right - left) / max(hi - lo, 1e-9)
        return np.asarray(left + (np.asarray(xs, np.float64) - lo) * scale)

    def _track_bounds(self) -> tuple[float, float]:
        """The plot's data area in the critical-path track's pixels (left, right)."""
        vb = self.viewbox
        rect = vb.sceneBoundingRect()
        left = self.plot.mapFromScene(rect.topLeft()).x()
        right = self.plot.mapFromScene(rect.topRight()).x()
        origin = self.path_track.mapFrom(self, self.plot.mapTo(self, QtCore.QPoint(0, 0))).x()
        return float(origin + left), float(origin + right)

    def _on_path_segment(self, row: int) -> None:
        """A segment of the critical-path track clicked: its slice, selected and in view."""
        self.select_event(row, fit=False)
        self._scroll_to_row(int(self.event_row[row]))

    def _on_double_click(self, x: float, y: float) -> None:
        self.ensure_built()
        row = self.batch.node_at(x, y, self._pixel_tolerance())
        if row >= 0:
            self.select_event(row, fit=True)
        else:
            self.fit_all()

    def _on_hover(self, scene_pos: QtCore.QPointF) -> None:
        if not self.viewbox.sceneBoundingRect().contains(scene_pos):
            return
        p = self.viewbox.mapSceneToView(scene_pos)
        self.plot.setToolTip(self.hover_text(p.x(), p.y()))

    def hover_text(self, x: float, y: float) -> str:
        """Tooltip at data point (x, y): the slice there, or how many slices a merged rect holds."""
        self.ensure_built()
        extra = marks.hover_text(self, x, y)  # instant markers, counter values
        if extra:
            return extra
        tolerance = self._pixel_tolerance(2.0)
        row, merged = self.batch.drawn_at(x, y, tolerance)
        if row < 0:
            row, merged = self.batch.node_at(x, y, tolerance), 1
        if row < 0:
            return ""
        text = (
            f"<b>{self._categories[self._codes[row]]}</b><br>"
            f"{self.timeline.events['kind'].iat[row]} · start {format_ns(int(self._ts[row]))}"
            f" · {format_ns(int(self._dur[row]))}"
        )
        if merged > 1:
            text += f"<br><i>{merged:,} slices merged here; zoom in to see them (widest shown)</i>"
        return text

    def select_event(self, row: int, fit: bool = False) -> None:
        """Select slice `row`: outline it, describe it, draw its flows, tell the document."""
        self.ensure_built()
        row = int(row)
        self.selected_row = row
        self.batch.set_selected(row)
        self.details.show_event(self.timeline, row)
        self.side.setCurrentWidget(self.details)
        timeline_panels.open_side(self)
        self._draw_flows(row)
        if fit:
            self.fit_event(row)
        else:
            self._ensure_visible(row)
        self.selected.emit(row)
        if self.document is not None:
            name = str(self._categories[self._codes[row]])
            self.document.select(Selection(kind="event", name=name, event=row, source=self))

    def _ensure_visible(self, row: int) -> None:
        lo, hi = self.x_range()
        ts, end = float(self._ts[row]), float(self._ts[row] + self._dur[row])
        if end < lo or ts > hi:
            half = (hi - lo) / 2
            mid = (ts + end) / 2
            self.viewbox.setXRange(mid - half, mid + half, padding=0)
        self._scroll_to_row(int(self.event_row[row]))

    def _draw_flows(self, row: int) -> None:
        timeline_flows.draw(self, row)

    # --- range --------------------------------------------------------------------------------
    def _show_region(self, lo: float, hi: float) -> None:
        self.region.setRegion((lo, hi))
        self.region.show()

    def select_range(self, lo: float, hi: float) -> None:
        """Select [lo, hi] ns: show it, fill the range table, tell the document."""
        self.ensure_built()
        lo_i, hi_i = round(min(lo, hi)), round(max(lo, hi))
        self._show_region(lo_i, hi_i)
        self._fill_range_table(lo_i, hi_i)
        if self.document is not None:
            self.document.set_range(lo_i, hi_i)

    def _fill_range_table(self, lo: int, hi: int) -> None:
        timeline_panels.fill_range_table(self, lo, hi)

    # --- search (the search bar and its logic: timeline_find) ------------------------------
    def show_search(self) -> None:
        timeline_find.show(self)

    def _escape(self) -> None:
        timeline_find.escape(self)

    def set_search(self, text: str) -> int:
        """Highlight and list the slices matching `text` (names or args: text, /regex/,
        key=value; see core.search); returns the count."""
        self.ensure_built()
        return timeline_find.set_search(self, text)

    def next_match(self, step: int = 1) -> int:
        """Select the next (or previous) match; returns its row or -1."""
        self.ensure_built()
        return timeline_find.next_match(self, step)

    def previous_match(self) -> int:
        return self.next_match(-1)

    def select_events(self, rows: object) -> int:
        """Highlight `rows` together (Enter in the search bar steps through them), select the
        first and zoom to it; returns how many were valid. For a recommendation's evidence."""
        self.ensure_built()
        return timeline_find.select_events(self, rows)

    # --- document -----------------------------------------------------------------------------
    def _on_document_selection(self, selection: Selection | None) -> None:
        self.ensure_built()
        if selection is None or selection.source is self:
            return
        if selection.kind == "event" and selection.event is not None:
            if selection.event != self.selected_row and 0 <= selection.event < len(self._ts):
                self.select_event(int(selection.event))
            return
        if selection.name:
            code = np.flatnonzero(self._categories == selection.name)
            self.batch.set_highlight(np.flatnonzero(np.isin(self._codes, code)))

    def _on_document_range(self, lo: int, hi: int) -> None:
        self.ensure_built()
        self._show_region(lo, hi)
        self._fill_range_table(lo, hi)

    def _on_document_search(self, text: str) -> None:
        if text != self.search_edit.text():
            self.search_bar.setVisible(bool(text))
            self.search_edit.setText(text)


__all__ = ["TimelineView"]
