"""The timeline's search results: one line per matching slice (time order), click to select.

The matching itself is `core.search.search_rows` (names and args: text, /regex/, key=value);
this list shows the first `MAX_SHOWN` matches and follows F3 / Shift+F3 (`set_current`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6 import QtCore, QtWidgets

from perfview.core.analysis import search
from perfview.core.model import ArgsStore
from perfview.core.model.units import format_ns
from perfview.qt.tasks import Task

MAX_SHOWN = 2000  # list lines; F3 still steps through every match
# Args text up to this size is searched at once; a bigger trace's args (a 1 GB trace holds
# ~0.5 GB of them) are scanned in a worker while the name matches are already shown.
SYNC_ARGS_BYTES = 16_000_000


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


def _show(view: Any, rows: np.ndarray, query: search.Query, pending: bool) -> None:
    view._matches = rows[np.argsort(view._ts[rows], kind="stable")]
    view._match_pos = -1
    view.batch.set_highlight(view._matches)
    more = " (searching args…)" if pending else ""
    view.match_label.setText(f"{len(view._matches):,} matches{more}")

    def names(r: np.ndarray) -> list[str]:
        return view._categories[view._codes[r]].tolist()  # type: ignore[no-any-return]

    what = query.describe() + (", args still being searched" if pending else "")
    view.results.set_rows(view._matches, names, view._ts, what)


def run_search(view: Any, text: str) -> None:
    """Search the view's slices for `text` (core.search) and show the matches.

    Names are matched at once (one test per distinct name). Args are scanned here when they
    are small, else in a worker: the name matches show meanwhile, and a result that arrives
    after the text changed again is dropped.
    """
    view._search_seq = getattr(view, "_search_seq", 0) + 1
    seq = view._search_seq
    if not text:
        view._matches = np.zeros(0, dtype=np.int64)
        view.batch.set_highlight(None)
        view.match_label.setText("")
        view.results.set_rows(view._matches, lambda r: [], view._ts, "")
        return
    args = view.timeline.args
    try:
        query = search.parse_query(text)
        if len(args.blob) <= SYNC_ARGS_BYTES:
            rows = search.search_rows(query, view._categories, view._codes, args)
            _show(view, rows, query, False)
            return
        names_only = search.search_rows(query, view._categories, view._codes, ArgsStore())
    except search.SearchError as exc:
        view._matches = np.zeros(0, dtype=np.int64)
        view.batch.set_highlight(None)
        view.match_label.setText("0 matches")
        view.results.show_error(str(exc))
        return
    _show(view, names_only, query, True)
    cats, codes = view._categories, view._codes
    task = Task(lambda _p: search.search_rows(query, cats, codes, args), name="search")

    def done(rows: Any) -> None:
        if getattr(view, "_search_seq", 0) == seq:
            _show(view, np.asarray(rows, dtype=np.int64), query, False)

    task.finished.connect(done)
    task.failed.connect(lambda message: view.results.show_error(message))
    view._search_task = task  # keep a reference while it runs
    task.start()


__all__ = ["MAX_SHOWN", "SYNC_ARGS_BYTES", "SearchResults", "run_search"]
