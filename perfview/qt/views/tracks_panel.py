"""The timeline's Tracks tab: show/hide, pin, reorder, filter by name and collapse processes,
and which flow arrows to draw (all, the selection's, none).

The arrangement itself is `core.track_arrange.TrackState`; applying one lays the timeline out
again (`timeline_layout.prepare_timeline(state=…)`), which on a big trace re-sorts millions of
rectangles, so it runs in a worker `Task` and the view swaps its data when it is done.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from PySide6 import QtCore, QtWidgets

from perfview.core.layout import timeline_layout
from perfview.core.layout.track_arrange import FLOW_MODES, TrackState, display_order
from perfview.qt.tasks import Task

LANE_ROLE = QtCore.Qt.ItemDataRole.UserRole


def relayout(view: Any, data: timeline_layout.TimelineData) -> None:
    """Swap the view's layout for `data`: drop the old curves, bands and markers, add new."""
    for item in [*view.curves, view.bands, view.instant_item]:
        if item is not None:
            view.plot.removeItem(item)
    view.data = data
    view._layout_tracks()
    draw_flows(view)


def draw_flows(view: Any) -> None:
    """Flow arrows by the view's mode: every flow whose two ends are drawn ("all"), the
    selected slice's ("selected", the view's own drawing) or none."""
    mode = getattr(view, "flow_mode", "selected")
    if mode == "selected":
        if view.selected_row is not None:
            view._draw_flows(view.selected_row)
        return
    for head in view._arrow_heads:
        view.plot.removeItem(head)
    view._arrow_heads = []
    flows = view.timeline.flows
    if mode == "none" or not len(flows):
        view.flow_item.setData([], [])
        return
    src = flows["src_event"].to_numpy(dtype=np.int64)
    dst = flows["dst_event"].to_numpy(dtype=np.int64)
    ok = (src >= 0) & (dst >= 0)
    ok[ok] &= (view.event_row[src[ok]] >= 0) & (view.event_row[dst[ok]] >= 0)
    a, b = src[ok], dst[ok]
    xs, ys = np.empty(2 * len(a)), np.empty(2 * len(a))
    xs[0::2], xs[1::2] = view._ts[a], view._ts[b]
    ys[0::2], ys[1::2] = view.event_row[a] + 0.5, view.event_row[b] + 0.5
    view.flow_item.setData(xs, ys)


class TracksPanel(QtWidgets.QWidget):
    """Controls for the view's `TrackState`. `applied` fires when the new layout is shown."""

    applied = QtCore.Signal()

    def __init__(self, view: Any, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.state = TrackState()
        self.task: Task | None = None
        self.applied_state = self.state  # the arrangement the view shows now
        self.filter_edit = QtWidgets.QLineEdit(self)
        self.filter_edit.setPlaceholderText("Show tracks whose name contains…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(lambda t: self.apply(name_filter=t))
        self.list = QtWidgets.QListWidget(self)
        self.list.itemChanged.connect(self._on_check)
        buttons = QtWidgets.QHBoxLayout()
        for text, slot in (
            ("Pin", self.toggle_pin),
            ("Up", lambda: self.move_lane(-1)),
            ("Down", lambda: self.move_lane(1)),
            ("Collapse", self.toggle_collapse),
        ):
            button = QtWidgets.QPushButton(text, self)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        self.flows = QtWidgets.QComboBox(self)
        self.flows.addItems(["Flows: all", "Flows: selected slice", "Flows: none"])
        self.flows.setCurrentIndex(1)
        self.flows.currentIndexChanged.connect(lambda i: self.set_flow_mode(FLOW_MODES[i]))
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.flows)
        self._fill()

    # --- the list --------------------------------------------------------------------------
    def _lanes(self) -> Any:
        return self.view.timeline.lanes.sort_values("lane", kind="stable")

    def _fill(self) -> None:
        """One checkable line per lane, in the arranged order (hidden lanes unchecked)."""
        lanes = self._lanes()
        labels = dict(zip(lanes["lane"].tolist(), lanes["label"].astype(str), strict=True))
        pids = dict(zip(lanes["lane"].tolist(), lanes["pid"].tolist(), strict=True))
        current = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for lane in display_order(lanes, self.state):
            marks = ("★ " if lane in self.state.pinned else "") + (
                "▸ " if pids[lane] in self.state.collapsed else ""
            )
            item = QtWidgets.QListWidgetItem(marks + labels[lane])
            item.setData(LANE_ROLE, lane)
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            hidden = lane in self.state.hidden
            item.setCheckState(
                QtCore.Qt.CheckState.Unchecked if hidden else QtCore.Qt.CheckState.Checked
            )
            self.list.addItem(item)
        self.list.blockSignals(False)
        if 0 <= current < self.list.count():
            self.list.setCurrentRow(current)

    def current_lane(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else int(item.data(LANE_ROLE))

    def _on_check(self, item: QtWidgets.QListWidgetItem) -> None:
        lane = int(item.data(LANE_ROLE))
        hidden = set(self.state.hidden)
        if item.checkState() == QtCore.Qt.CheckState.Checked:
            hidden.discard(lane)
        else:
            hidden.add(lane)
        self.apply(hidden=frozenset(hidden))

    # --- commands --------------------------------------------------------------------------
    def toggle_pin(self, lane: int | None = None) -> None:
        lane = self.current_lane() if lane is None else lane
        if lane is None:
            return
        pinned = list(self.state.pinned)
        pinned = [p for p in pinned if p != lane] if lane in pinned else [*pinned, lane]
        self.apply(pinned=tuple(pinned))

    def move_lane(self, step: int, lane: int | None = None) -> None:
        """Move a lane up (-1) or down (+1) among the arranged tracks."""
        lane = self.current_lane() if lane is None else lane
        if lane is None:
            return
        order = [x for x in display_order(self._lanes(), self.state) if x not in self.state.pinned]
        if lane not in order:
            return
        i = order.index(lane)
        j = min(max(i + step, 0), len(order) - 1)
        order[i], order[j] = order[j], order[i]
        self.apply(order=tuple(order))
        self.list.setCurrentRow(len(self.state.pinned) + j)

    def toggle_collapse(self, pid: int | None = None) -> None:
        if pid is None:
            lane = self.current_lane()
            if lane is None:
                return
            lanes = self._lanes()
            pid = int(lanes.loc[lanes["lane"] == lane, "pid"].iat[0])
        collapsed = set(self.state.collapsed) ^ {pid}
        self.apply(collapsed=frozenset(collapsed))

    def set_flow_mode(self, mode: str) -> None:
        self.state = dataclasses.replace(self.state, flows=mode)
        self.view.flow_mode = mode
        draw_flows(self.view)

    def apply(self, **changes: Any) -> None:
        """Change the state and lay the timeline out again in a worker."""
        self.state = dataclasses.replace(self.state, **changes)
        self._fill()
        self._start()

    def _start(self) -> None:
        if self.task is not None:
            return  # restarted by _after with the newest state
        state, timeline = self.state, self.view.timeline
        task = Task(lambda _p: (state, timeline_layout.prepare_timeline(timeline, state=state)))
        task.finished.connect(self._on_done)
        task.done.connect(self._after)
        self.task = task
        task.start()

    def _on_done(self, result: Any) -> None:
        state, data = result
        relayout(self.view, data)
        self.applied_state = state
        if state == self.state:
            self.applied.emit()

    def _after(self) -> None:
        self.task = None
        if self.applied_state != self.state:
            self._start()


def install(view: Any) -> TracksPanel:
    """Add the Tracks tab to a TimelineView (one hook line there)."""
    panel = TracksPanel(view)
    view.side.addTab(panel, "Tracks")
    view.flow_mode = "selected"
    return panel


__all__ = ["TracksPanel", "draw_flows", "install", "relayout"]
