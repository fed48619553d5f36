"""Icicle (top-down flame graph) of a merged call tree, drawn by one `RectBatchItem`.

x is the node's `total_ns` laid out inside its parent (`core.flame.layout`), y is the depth
(root on top). Clicking a node zooms the x range to exactly that node and extends the
breadcrumb; the breadcrumb (or double-click on empty space) zooms back out. For traces a
second mode shows one lane chronologically (a time-ordered flame chart).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.layout import colors, flame
from perfview.core.model import CallTree, PstatsProfile, Timeline
from perfview.core.model.units import Unit, format_ns, format_value
from perfview.qt.document import Document, Selection
from perfview.qt.items.flame_view_box import FlameViewBox
from perfview.qt.items.labels import TimeAxis
from perfview.qt.items.quick_axis import QuickAxis, quick_plot
from perfview.qt.items.rect_batch import RectBatchItem
from perfview.qt.views.icicle_lanes import LaneSelector
from perfview.qt.widgets.frame_filter_bar import FrameFilterBar

ROW_PX = 20.0
ESTIMATED_TEXT = "estimated — cProfile keeps no full stacks"
BADGE_STYLE = (
    "QLabel { background: #fff3cd; color: #6b4e00; border: 1px solid #e0c36a;"
    " border-radius: 8px; padding: 1px 8px; }"
)


class IcicleView(QtWidgets.QWidget):
    """`IcicleView(tree, document=None, profile=None)`; `profile` marks pstats functions."""

    node_selected = QtCore.Signal(int)
    lanes_changed = QtCore.Signal(str)  # the lane choice's key, once its tree is shown
    lanes_ready = QtCore.Signal()  # the lane selector is filled (traces only)

    def __init__(
        self,
        tree: CallTree,
        document: Document | None = None,
        profile: PstatsProfile | None = None,
        parent: QtWidgets.QWidget | None = None,
        *,
        filters: Collection[str] | None = None,
    ) -> None:
        super().__init__(parent)
        # Frame filters (`core.analysis.frame_filters`): None, no toggles; else the keys of
        # the filters hidden from the start (memray's import system).
        self.source = tree  # the tree before any frames are hidden
        self.filter_bar: FrameFilterBar | None = None
        if filters is not None:
            self.filter_bar = FrameFilterBar(tree, filters)
            self.filter_bar.changed.connect(self._on_filters)
            tree = self.filter_bar.apply(tree)
        self.tree = tree
        self.document = document
        self.profile = profile
        self.timeline: Timeline | None = getattr(
            getattr(document, "bundle", None), "timeline", None
        )
        # sampled profiles may weigh samples in bytes or plain counts rather than time
        sampled = getattr(getattr(document, "bundle", None), "sampled", None)
        self.unit: str = getattr(sampled, "unit", "ns")
        self.mode = "merged"
        self._adopt(tree)
        self._build_bar()
        self._build_plot()
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        if self.filter_bar is not None:
            layout.addWidget(self.filter_bar)
        layout.addWidget(self.plot)
        self._set_merged()
        if document is not None:
            document.selection_changed.connect(self._on_document_selection)
            document.search_changed.connect(self._on_document_search)

    def _adopt(self, tree: CallTree) -> None:
        """Take `tree` as the merged tree (arrays the drawing and tooltips read)."""
        self.tree = tree
        self.focus_node = 0
        self.path: list[int] = [0]
        names = tree.frames["name"].to_numpy(dtype=object)
        frame = np.asarray(tree.frame, dtype=np.int64)
        self.node_names = np.where(frame >= 0, names[np.maximum(frame, 0)], "(root)").astype(object)
        self.total = np.asarray(tree.metrics["total_ns"], dtype=np.float64)
        self.self_ns = np.asarray(
            tree.metrics.get("self_ns", np.zeros(len(tree))), dtype=np.float64
        )
        self.calls = np.asarray(tree.metrics.get("calls", np.zeros(len(tree))), dtype=np.float64)
        # Allocation trees (CUDA snapshots, memray) carry bytes in total_ns; see `unit_bytes`.
        if "unit_bytes" in tree.metrics:
            self.unit = "bytes"

    @property
    def hidden_keys(self) -> set[str]:
        return self.filter_bar.hidden_keys if self.filter_bar is not None else set()

    @property
    def filter_boxes(self) -> dict[str, QtWidgets.QCheckBox]:
        return self.filter_bar.boxes if self.filter_bar is not None else {}

    def _filtered(self, tree: CallTree) -> CallTree:
        return self.filter_bar.apply(tree) if self.filter_bar is not None else tree

    def set_hidden(self, key: str, hidden: bool) -> None:
        """Hide (or show again) the frames of filter `key` and redraw the merged tree."""
        if self.filter_bar is not None:
            self.filter_bar.set_hidden(key, hidden)

    def _on_filters(self) -> None:
        self._adopt(self._filtered(self.source))
        if self.mode == "merged":  # a time-ordered chart shows events, not the merged tree
            self._set_merged()

    def _on_lane_tree(self, tree: CallTree, key: str) -> None:
        """Show the tree of the lanes just picked in the lane selector."""
        self.source = tree
        tree = self._filtered(tree)
        self._adopt(tree)
        self.mode_box.setCurrentIndex(0)
        self._set_merged()
        self.lanes_changed.emit(key)

    # --- construction -------------------------------------------------------------------------
    def _build_bar(self) -> None:
        self.bar = QtWidgets.QWidget()
        lay = QtWidgets.QHBoxLayout(self.bar)
        lay.setContentsMargins(6, 3, 6, 3)
        self.breadcrumb = QtWidgets.QLabel()
        self.breadcrumb.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.breadcrumb.linkActivated.connect(lambda link: self.zoom_to(int(link)))
        self.badge = QtWidgets.QLabel(ESTIMATED_TEXT)
        self.badge.setStyleSheet(BADGE_STYLE)
        self.badge.setToolTip(
            "cProfile records caller → callee pairs, not stacks. Deeper paths are apportioned "
            "from those pairs; use the callers/callees panel for exact numbers."
        )
        self.badge.setVisible(bool(self.tree.estimated))
        notes = self.tree.notes
        self.notes_badge = QtWidgets.QLabel(" · ".join("⚠ " + _short(n) for n in notes[:2]))
        self.notes_badge.setStyleSheet(BADGE_STYLE)
        self.notes_badge.setToolTip("\n\n".join(self.tree.notes))
        self.notes_badge.setVisible(bool(self.tree.notes))
        self.lanes_box = LaneSelector(self.timeline)
        self.lanes_box.ready.connect(self.lanes_ready)
        self.lanes_box.building.connect(
            lambda label: self.breadcrumb.setText(f"building the tree of {_html(label)}…")
        )
        self.lanes_box.tree_ready.connect(self._on_lane_tree)
        self.mode_box = QtWidgets.QComboBox()
        self.mode_box.addItem("Merged", None)
        if self.timeline is not None and len(self.timeline.events):
            lanes = self.timeline.lanes.sort_values("lane", kind="stable")
            for lane, label in zip(lanes["lane"], lanes["label"], strict=True):
                self.mode_box.addItem(f"Time-ordered: {label}", int(lane))
        self.mode_box.setVisible(self.mode_box.count() > 1)
        self.mode_box.setMaximumWidth(320)
        self.mode_box.setSizeAdjustPolicy(
            QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.mode_box.setMinimumContentsLength(18)
        self.mode_box.currentIndexChanged.connect(self._mode_changed)
        self.search_edit = QtWidgets.QLineEdit()
        self.search_edit.setPlaceholderText("Find function…")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMaximumWidth(260)
        self.search_edit.textChanged.connect(self.set_search)
        lay.addWidget(self.breadcrumb, 1)
        lay.addWidget(self.badge)
        lay.addWidget(self.notes_badge)
        lay.addWidget(self.lanes_box)
        lay.addWidget(self.mode_box)
        lay.addWidget(self.search_edit)
        shortcut = QtGui.QShortcut(QtGui.QKeySequence("Ctrl+F"), self)
        shortcut.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.search_edit.setFocus)

    def _build_plot(self) -> None:
        self.viewbox = FlameViewBox()
        self.viewbox.invertY(True)
        if self.unit == "bytes":
            self.axis: pg.AxisItem = _bytes_axis()
        else:
            self.axis = TimeAxis("top") if self.unit == "ns" else QuickAxis("top")
        self.plot = quick_plot({"top": self.axis}, viewBox=self.viewbox)
        self.plot.setBackground(QtGui.QColor(250, 250, 252))
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        self.axis.setPen(pg.mkPen(120, 120, 130))
        self.axis.setTextPen(pg.mkPen(40, 40, 48))
        self.batch = RectBatchItem(names=self._label_names)
        self.plot.addItem(self.batch)
        self.viewbox.clicked.connect(self._on_click)
        self.viewbox.double_clicked.connect(self._on_double_click)
        self.plot.scene().sigMouseMoved.connect(self._on_hover)

    def _label_names(self, nodes: np.ndarray) -> list[str]:
        if self.mode == "merged":
            return self.node_names[nodes].tolist()
        return self._event_names[nodes].tolist()

    # --- modes --------------------------------------------------------------------------------
    def _set_merged(self) -> None:
        self.mode = "merged"
        buckets = colors.palette_indices(self.node_names.astype(str))
        self.rects = flame.layout(self.tree, buckets=buckets)
        self.batch.set_rects(self.rects)
        n_rows = int(self.rects.row.max()) + 1 if len(self.rects) else 1
        width = max(float(self.total[0]), 1.0)
        self.viewbox.setLimits(xMin=-width * 0.02, xMax=width * 1.02)
        self.viewbox.set_content_rows(n_rows, ROW_PX)
        self.zoom_to(0)

    def _mode_changed(self, index: int) -> None:
        lane = self.mode_box.itemData(index)
        if lane is None:
            self._set_merged()
        else:
            self.show_lane(int(lane))

    def show_lane(self, lane: int) -> None:
        """Time-ordered flame chart of one trace lane (rows = nesting depth)."""
        assert self.timeline is not None
        ev = self.timeline.events
        self.mode = "time"
        rows = np.flatnonzero(ev["lane"].to_numpy() == lane)
        names = ev["name"]
        self._event_names = np.asarray(names.astype(object), dtype=object)
        buckets = colors.bucket_codes(names)
        ts = ev["ts"].to_numpy(np.int64)[rows]
        dur = ev["dur"].to_numpy(np.int64)[rows]
        depth = ev["depth"].to_numpy(np.int32)[rows]
        self.rects = flame.layout_events(ts, dur, depth, buckets[rows], node=rows)
        self.batch.set_rects(self.rects)
        lo, hi = (float(ts.min()), float((ts + dur).max())) if len(ts) else (0.0, 1.0)
        pad = (hi - lo) * 0.02 + 1
        self.viewbox.setLimits(xMin=lo - pad, xMax=hi + pad)
        self.viewbox.set_content_rows(int(depth.max(initial=0)) + 1, ROW_PX)
        self.viewbox.setXRange(lo, hi, padding=0.01)
        self.breadcrumb.setText(f"Lane {lane}: {len(rows):,} slices, chronological")

    # --- navigation ---------------------------------------------------------------------------
    def node_span(self, node: int) -> tuple[float, float]:
        pos = self.batch.index.position_of(node) if self.batch.index is not None else -1
        if pos < 0:
            return 0.0, max(float(self.total[0]), 1.0)
        return float(self.rects.x0[pos]), float(self.rects.x1[pos])

    def zoom_to(self, node: int) -> None:
        """Make node's span the x range (root = everything) and update the breadcrumb."""
        if self.mode != "merged":
            return
        lo, hi = self.node_span(node)
        self.viewbox.setXRange(lo, max(hi, lo + 1e-6), padding=0)
        self.focus_node = node
        path = []
        p = node
        while p >= 0:
            path.append(p)
            p = int(self.tree.parent[p])
        self.path = path[::-1]
        links = " › ".join(f'<a href="{n}">{_html(str(self.node_names[n]))}</a>' for n in self.path)
        self.breadcrumb.setText(links)
        _, (top, bottom) = self.viewbox.viewRange()
        depth = len(self.path) - 1
        if not top <= depth < bottom - 1:
            self.viewbox.show_rows_from(max(depth - 2, 0) - 0.5)

    def x_range(self) -> tuple[float, float]:
        (lo, hi), _ = self.viewbox.viewRange()
        return float(lo), float(hi)

    def _tolerance(self) -> float:
        lo, hi = self.x_range()
        return (hi - lo) / max(self.viewbox.width(), 1.0) * 2.0

    def _on_click(self, x: float, y: float) -> None:
        node = self.batch.node_at(x, y, self._tolerance())
        if node < 0:
            return
        self.select_node(node)

    def _on_double_click(self, x: float, y: float) -> None:
        if self.batch.node_at(x, y, self._tolerance()) >= 0:
            return
        if self.mode == "merged":
            self.zoom_to(0)
        else:
            self.viewbox.autoRange()

    def select_node(self, node: int, zoom: bool = True) -> None:
        """Select (and by default zoom into) a node; tells the document."""
        self.batch.set_selected(node)
        if self.mode == "merged":
            if zoom:
                self.zoom_to(node)
            self.node_selected.emit(node)
            if self.document is not None:
                kind = "function" if self.profile is not None else "node"
                # pstats trees have one frame per function id, so the frame is the function.
                func = int(self.tree.frame[node]) if self.profile is not None else None
                shared = self.tree is self.document.tree()  # node ids mean the same tree
                self.document.select(
                    Selection(
                        kind=kind,
                        name=str(self.node_names[node]),
                        node=node if shared else None,
                        function=func if func is not None and func >= 0 else None,
                        source=self,
                    )
                )
        elif self.document is not None:
            name = str(self._event_names[node])
            self.document.select(Selection(kind="event", name=name, event=node, source=self))

    def _on_hover(self, scene_pos: QtCore.QPointF) -> None:
        if not self.viewbox.sceneBoundingRect().contains(scene_pos):
            return
        p = self.viewbox.mapSceneToView(scene_pos)
        node = self.batch.node_at(p.x(), p.y(), self._tolerance())
        self.plot.setToolTip(self.tooltip(node) if node >= 0 else "")

    def tooltip(self, node: int) -> str:
        if self.mode != "merged":
            return f"<b>{_html(str(self._event_names[node]))}</b>"
        root = max(float(self.total[0]), 1e-12)
        return (
            f"<b>{_html(str(self.node_names[node]))}</b><br>"
            f"total {self._fmt(self.total[node])} ({self.total[node] * 100 / root:.1f} % of root)"
            f"<br>self {self._fmt(self.self_ns[node])} · "
            f"{'allocations' if 'unit_bytes' in self.tree.metrics else 'calls'} "
            f"{int(self.calls[node]):,}"
        )

    def _fmt(self, value: float) -> str:
        if self.unit == "ns":
            return format_ns(value)
        if self.unit == "bytes":
            return format_value(float(value), Unit.BYTES)
        return f"{format_value(float(value), Unit.COUNT)} samples"

    # --- search and document ------------------------------------------------------------------
    def set_search(self, text: str) -> int:
        """Highlight nodes whose name contains `text` (case-insensitive); returns the count."""
        text = text.strip()
        if not text or self.mode != "merged":
            self.batch.set_highlight(None)
            return 0
        lowered = np.char.lower(self.node_names.astype(str))
        nodes = np.flatnonzero(np.char.find(lowered, text.lower()) >= 0)
        self.batch.set_highlight(nodes)
        if self.document is not None:
            self.document.set_search(text)
        return len(nodes)

    def highlight_name(self, name: str) -> np.ndarray:
        """Highlight every node called `name` and bring the heaviest one into view."""
        nodes = np.flatnonzero(self.node_names == name)
        self.batch.set_highlight(nodes if len(nodes) else None)
        if len(nodes):
            best = int(nodes[np.argmax(self.total[nodes])])
            self.batch.set_selected(best)
            lo, hi = self.x_range()
            a, b = self.node_span(best)
            if b < lo or a > hi or (b - a) < (hi - lo) * 0.01:
                parent = int(self.tree.parent[best])
                self.zoom_to(parent if parent >= 0 else best)
        return nodes

    def _on_document_selection(self, selection: Selection | None) -> None:
        if selection is None or selection.source is self or self.mode != "merged":
            return
        if selection.kind in ("function", "op", "node") and selection.name:
            self.highlight_name(selection.name)

    def _on_document_search(self, text: str) -> None:
        if text != self.search_edit.text():
            self.search_edit.setText(text)


def _short(note: str, width: int = 60) -> str:
    """The start of a tree note for the badge (the tooltip has the whole text)."""
    if " could not be placed" in note:
        return note.split(" could not be placed")[0] + " moved to extra top-level nodes"
    head = note.split(":")[0]
    return head if len(head) <= width else head[: width - 1] + "…"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["ESTIMATED_TEXT", "IcicleView"]


def _bytes_axis() -> pg.AxisItem:
    from perfview.qt.items.labels import BytesAxis

    return BytesAxis("top")
