"""Bookmarks on the timeline: named points in time, drawn as labelled vertical lines.

Ctrl+B bookmarks the selected slice's start (or the middle of the view when nothing is
selected); a workspace saves and restores them (`core.workspace.Bookmark`).
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from perfview.core.model.units import format_ns
from perfview.documents.workspace import Bookmark

PEN = pg.mkPen(40, 90, 200, 220, width=1.5, style=QtCore.Qt.PenStyle.DashLine)


class Bookmarks:
    """The bookmarks of one TimelineView and their lines."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.items: list[Bookmark] = []
        self._lines: list[pg.InfiniteLine] = []
        shortcut = QtGui.QShortcut(QtGui.QKeySequence("Ctrl+B"), view)
        shortcut.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.add_here)

    def add_here(self) -> Bookmark:
        """Bookmark the selected slice's start, else the middle of the visible range."""
        view = self.view
        if view.selected_row is not None:
            row = int(view.selected_row)
            ts, label = int(view._ts[row]), str(view._categories[view._codes[row]])
        else:
            lo, hi = view.x_range()
            ts, label = round((lo + hi) / 2), ""
        return self.add(Bookmark(ts, label or f"@ {format_ns(ts)}"))

    def add(self, mark: Bookmark) -> Bookmark:
        self.items.append(mark)
        line = pg.InfiniteLine(
            pos=mark.ts_ns, angle=90, movable=False, pen=PEN, label=mark.label,
            labelOpts={"position": 0.96, "color": (40, 90, 200), "fill": (255, 255, 255, 200)},
        )  # fmt: skip
        line.setZValue(45)
        self.view.plot.addItem(line, ignoreBounds=True)
        self._lines.append(line)
        return mark

    def set(self, marks: list[Bookmark]) -> None:
        """Replace every bookmark (a workspace being restored)."""
        for line in self._lines:
            self.view.plot.removeItem(line)
        self.items, self._lines = [], []
        for mark in marks:
            self.add(mark)


def install(view: Any) -> Bookmarks:
    return Bookmarks(view)


__all__ = ["Bookmarks", "install"]
