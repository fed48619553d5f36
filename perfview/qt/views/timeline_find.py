"""Find in the timeline: the search bar above the plot (Ctrl+F, F3 / Shift+F3, Escape) and
the matches it steps through, highlighted in the plot and listed in the Search tab.

Its own module so that `timeline_view.py` keeps the plot and its interaction; the view's public
search methods (`set_search`, `next_match`, `select_events`, …) call these. The matching itself
runs in `search_results.run_search` (names at once, args here or in a worker).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.qt.views import search_results


def build_search_bar(view: Any) -> None:
    """The search bar above the plot, as `view.search_bar` (hidden until Ctrl+F)."""
    view.search_bar = QtWidgets.QWidget()
    lay = QtWidgets.QHBoxLayout(view.search_bar)
    lay.setContentsMargins(4, 2, 4, 2)
    view.search_edit = QtWidgets.QLineEdit()
    view.search_edit.setPlaceholderText(
        "Find slices: name or args text, /regex/ or key=value (Enter / F3: next)"
    )
    view.search_edit.setClearButtonEnabled(True)
    view.search_edit.textChanged.connect(view.set_search)
    view.search_edit.returnPressed.connect(view.next_match)
    view.match_label = QtWidgets.QLabel("")
    lay.addWidget(view.search_edit)
    lay.addWidget(view.match_label)
    view.search_bar.hide()
    for keys, slot in (
        ("Ctrl+F", view.show_search),
        ("F3", view.next_match),
        ("Shift+F3", view.previous_match),
        ("Escape", view._escape),
    ):
        shortcut = QtGui.QShortcut(QtGui.QKeySequence(keys), view)
        shortcut.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(slot)


def show(view: Any) -> None:
    """Show the search bar, its text selected for typing over."""
    view.search_bar.show()
    view.search_edit.setFocus()
    view.search_edit.selectAll()


def escape(view: Any) -> None:
    """Escape: clear and hide the search bar, hide the range region."""
    if view.search_bar.isVisible():
        view.search_edit.clear()
        view.search_bar.hide()
        view.plot.setFocus()
    view.region.hide()


def set_search(view: Any, text: str) -> int:
    """Highlight and list the slices matching `text` (names or args: text, /regex/,
    key=value; see core.search); returns the count."""
    if view.search_edit.text() != text:
        view.search_edit.setText(text)
        return len(view._matches)
    text = text.strip()
    search_results.run_search(view, text)  # names now; args here or in a worker
    view._match_pos = -1
    if view.document is not None:
        view.document.set_search(text)
    return len(view._matches)


def next_match(view: Any, step: int = 1) -> int:
    """Select the next (or previous) match; returns its row or -1."""
    if not len(view._matches):
        return -1
    view._match_pos = (view._match_pos + step) % len(view._matches)
    row = int(view._matches[view._match_pos])
    view.select_event(row)
    view.match_label.setText(f"{view._match_pos + 1:,} / {len(view._matches):,}")
    view.results.set_current(view._match_pos)
    return row


def select_events(view: Any, rows: object) -> int:
    """Highlight `rows` together (Enter in the search bar steps through them), select the
    first and zoom to it; returns how many were valid. For a recommendation's evidence."""
    given = np.asarray(list(rows), dtype=np.int64)  # type: ignore[call-overload]
    given = given[(given >= 0) & (given < len(view._ts))]
    if not len(given):
        return 0
    view._matches, view._match_pos = given, 0
    view.batch.set_highlight(given)
    view.match_label.setText(f"{len(given):,} slices")
    view.select_event(int(given[0]), fit=True)
    return len(given)
