"""Side panel describing one selected slice: fields, raw args, flows and linked GPU work.

It only *shows* what the timeline hands it; activating a linked slice emits
`event_activated(row)` so the timeline (which owns navigation) can jump there.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
from PySide6 import QtCore, QtWidgets

from perfview.core.layout.timeline_layout import linked_events
from perfview.core.model import Timeline
from perfview.core.model.errors import LoadError
from perfview.core.model.units import format_ns

ROW_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)[:2000]
    return str(value)


class DetailsPanel(QtWidgets.QWidget):
    """A two-column tree (field, value). Linked and flow rows carry their event row."""

    event_activated = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QtWidgets.QLabel("Nothing selected")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderLabels(["Field", "Value"])
        self.tree.setColumnCount(2)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setStretchLastSection(True)
        self.tree.setColumnWidth(0, 130)
        self.tree.itemActivated.connect(self._activated)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.tree)

    def clear(self) -> None:
        self.title.setText("Nothing selected")
        self.tree.clear()

    def _add(self, parent: QtWidgets.QTreeWidgetItem | None, key: str, value: Any) -> Any:
        item = QtWidgets.QTreeWidgetItem([key, _cell(value)])
        item.setToolTip(1, _cell(value))
        if parent is None:
            self.tree.addTopLevelItem(item)
        else:
            parent.addChild(item)
        return item

    def _event_line(self, timeline: Timeline, row: int, lane_label: str) -> str:
        ev = timeline.events
        name = str(ev["name"].iat[row])
        ts, dur = _ints(ev, "ts", row), _ints(ev, "dur", row)
        return (
            f"{name}  ·  {ev['kind'].iat[row]}  ·  {lane_label}  ·  "
            f"@{format_ns(ts)}  ({format_ns(dur)})"
        )

    def show_event(self, timeline: Timeline, row: int) -> None:
        """Describe event `row` of `timeline.events`."""
        self.tree.clear()
        ev = timeline.events
        lane_labels = _lane_labels(timeline)
        name = str(ev["name"].iat[row])
        self.title.setText(name)
        lane = _ints(ev, "lane", row)
        for key, value in (
            ("Name", name),
            ("Category", ev["cat"].iat[row]),
            ("Kind", ev["kind"].iat[row]),
            ("Track", lane_labels.get(lane, str(lane))),
            ("Start", format_ns(_ints(ev, "ts", row))),
            ("Duration", format_ns(_ints(ev, "dur", row))),
            ("Depth", _ints(ev, "depth", row)),
        ):
            self._add(None, key, value)
        shape = str(ev["shape"].iat[row])
        if shape and shape != "nan":
            self._add(None, "Input dims", shape)
        try:
            args = timeline.args.get(row)
        except LoadError as exc:  # a damaged cached copy: say so where the args would be
            self._add(None, "Args", str(exc))
            args = {}
        if args:
            top = self._add(None, "Args", f"{len(args)} values")
            for key, value in args.items():
                self._add(top, str(key), value)
            top.setExpanded(True)
        self._add_links(timeline, row, lane_labels)

    def _add_links(self, timeline: Timeline, row: int, labels: dict[int, str]) -> None:
        ev = timeline.events
        lanes = ev["lane"].to_numpy()
        groups: list[tuple[str, np.ndarray]] = []
        flows = timeline.flows
        if len(flows):
            src = flows["src_event"].to_numpy()
            dst = flows["dst_event"].to_numpy()
            outgoing = dst[(src == row) & (dst >= 0)]
            incoming = src[(dst == row) & (src >= 0)]
            groups += [("Flow to", outgoing), ("Flow from", incoming)]
        groups.append(("Linked (correlation / External id)", linked_events(ev, row)))
        for title, rows in groups:
            if not len(rows):
                continue
            top = self._add(None, title, f"{len(rows)} slices")
            for r in rows.tolist()[:200]:
                item = self._add(
                    top, "→", self._event_line(timeline, r, labels.get(int(lanes[r]), ""))
                )
                item.setData(0, ROW_ROLE, int(r))
                item.setData(1, ROW_ROLE, int(r))
            top.setExpanded(True)

    def _activated(self, item: QtWidgets.QTreeWidgetItem, _column: int) -> None:
        row = item.data(0, ROW_ROLE)
        if row is not None:
            self.event_activated.emit(int(row))

    def linked_rows(self) -> list[int]:
        """Event rows listed under flows/links (what a user can jump to); for tests."""
        out: list[int] = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount() if top is not None else 0):
                child = top.child(j) if top is not None else None
                row = child.data(0, ROW_ROLE) if child is not None else None
                if row is not None:
                    out.append(int(row))
        return out


def _ints(frame: pd.DataFrame, column: str, row: int) -> int:
    return int(frame[column].to_numpy()[row])


def _lane_labels(timeline: Timeline) -> dict[int, str]:
    lanes: pd.DataFrame = timeline.lanes
    return {int(k): str(v) for k, v in zip(lanes["lane"], lanes["label"], strict=True)}


__all__ = ["DetailsPanel"]
