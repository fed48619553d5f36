"""The timeline's search results: one line per matching slice (time order), click to select.

The matching itself is `core.search.search_rows` (names and args: text, /regex/, key=value);
this list shows the first `MAX_SHOWN` matches and follows F3 / Shift+F3 (`set_current`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6 import QtCore, QtWidgets

from perfview.core.units import format_ns

MAX_SHOWN = 2000  # list lines; F3 still steps through every match


class SearchResults(QtWidgets.QWidget):
    """A status line and a list of matches; `activated(row)` when the user picks one."""

    activated = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QtWidgets.QLabel("Ctrl+F: search names and args — text, /regex/ or key=value")
        self.status.setWordWrap(True)
        self.list = QtWidgets.QListWidget(self)
        self.list.setUniformItemSizes(True)
        self.list.itemActivated.connect(self._on_item)
        self.list.itemClicked.connect(self._on_item)
        self.rows = np.zeros(0, dtype=np.int64)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.status)
        layout.addWidget(self.list, 1)

    def set_rows(self, rows: np.ndarray, names: Any, ts: np.ndarray, what: str) -> None:
        """Show `rows` (slice rows in time order); `names(rows)` gives their names."""
        self.rows = np.asarray(rows, dtype=np.int64)
        self.list.clear()
        shown = self.rows[:MAX_SHOWN]
        texts = names(shown) if len(shown) else []
        self.list.addItems(
            [f"{format_ns(int(ts[r]))}  {n}" for r, n in zip(shown.tolist(), texts, strict=True)]
        )
        more = f" (first {MAX_SHOWN:,} listed)" if len(self.rows) > MAX_SHOWN else ""
        self.status.setText(f"{what}: {len(self.rows):,} slices{more}" if what else "")

    def show_error(self, message: str) -> None:
        self.rows = np.zeros(0, dtype=np.int64)
        self.list.clear()
        self.status.setText(message)

    def set_current(self, position: int) -> None:
        if 0 <= position < self.list.count():
            self.list.setCurrentRow(position)

    def _on_item(self, item: QtWidgets.QListWidgetItem) -> None:
        position = self.list.row(item)
        if 0 <= position < len(self.rows):
            self.activated.emit(position)


__all__ = ["MAX_SHOWN", "SearchResults"]
