"""Callers and callees of one function (the "sandwich"), next to the icicle.

For cProfile the numbers are exact, straight from the recorded caller → callee edges
(`pstats_graph.callers_callees`); for traces they are aggregated over every node of that name in
the merged tree (`calltree.callers_callees_tree`). Activating a row selects that function.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6 import QtCore, QtWidgets

from perfview.core.analysis.profile_tables import function_labels
from perfview.core.model import CallTree, PstatsProfile
from perfview.core.model.units import format_ns
from perfview.qt.document import Document, Selection

_FUNCTION_ID = QtCore.Qt.ItemDataRole.UserRole
_RIGHT = QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter


def _table(title: str) -> tuple[QtWidgets.QGroupBox, QtWidgets.QTableWidget]:
    box = QtWidgets.QGroupBox(title)
    table = QtWidgets.QTableWidget(0, 4)
    table.verticalHeader().hide()
    table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    table.setHorizontalHeaderLabels(["Function", "Calls", "Self", "Total"])
    header = table.horizontalHeader()
    header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
    lay = QtWidgets.QVBoxLayout(box)
    lay.setContentsMargins(4, 4, 4, 4)
    lay.addWidget(table)
    return box, table


class SandwichView(QtWidgets.QWidget):
    """`SandwichView(tree, document=None, profile=None)`; follows the document's selection."""

    function_activated = QtCore.Signal(str)

    def __init__(
        self,
        tree: CallTree | None,
        document: Document | None = None,
        profile: PstatsProfile | None = None,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.tree = tree
        self.document = document
        self.profile = profile
        self.name = ""
        self.title = QtWidgets.QLabel("Select a function to see its callers and callees")
        self.title.setWordWrap(True)
        callers_box, self.callers = _table("Callers")
        callees_box, self.callees = _table("Callees")
        for table in (self.callers, self.callees):
            table.itemActivated.connect(self._activated)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        split.addWidget(callers_box)
        split.addWidget(callees_box)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(split)
        if document is not None:
            document.selection_changed.connect(self._on_selection)

    def _on_selection(self, selection: Selection | None) -> None:
        if selection is None or selection.source is self or not selection.name:
            return
        if selection.kind in ("function", "op", "node"):
            self.show_function(selection.name, selection.function)

    def show_function(self, name: str, function_id: int | None = None) -> None:
        """Fill both tables for `name` (pstats: the function id, or the heaviest of that name)."""
        self.name = name
        if self.profile is not None:
            fid = function_id if function_id is not None else self._function_id(name)
            if fid is None:
                self._clear(name)
                return
            from perfview.core.analysis.pstats_graph import callers_callees

            callers, callees = callers_callees(self.profile, fid)
            self._fill_pstats(self.callers, callers)
            self._fill_pstats(self.callees, callees)
            label = str(function_labels(self.profile.functions.iloc[[fid]]).iloc[0])
            self.title.setText(
                f"<b>{_html(label)}</b> — exact, from cProfile's caller/callee records"
            )
        elif self.tree is not None:
            from perfview.core.analysis.calltree import callers_callees_tree

            callers, callees = callers_callees_tree(self.tree, name)
            self._fill_tree(self.callers, callers)
            self._fill_tree(self.callees, callees)
            self.title.setText(f"<b>{_html(name)}</b> — summed over every call path in the tree")

    def _function_id(self, name: str) -> int | None:
        funcs = self.profile.functions if self.profile is not None else None
        if funcs is None:
            return None
        hits = np.flatnonzero(funcs["function"].to_numpy(dtype=object) == name)
        if not len(hits):
            return None
        cum = funcs["cumtime_ns"].to_numpy()[hits]
        return int(hits[np.argmax(cum)])

    def _clear(self, name: str) -> None:
        self.title.setText(f"<b>{_html(name)}</b>: not found")
        self.callers.setRowCount(0)
        self.callees.setRowCount(0)

    def _fill(
        self,
        table: QtWidgets.QTableWidget,
        headers: list[str],
        rows: list[list[str]],
        ids: list[int] | None = None,
    ) -> None:
        table.setColumnCount(len(headers))
        table.setHorizontalHeaderLabels(headers)
        table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(_RIGHT)
                elif ids is not None:
                    item.setData(_FUNCTION_ID, ids[i])
                table.setItem(i, j, item)

    def _fill_pstats(self, table: QtWidgets.QTableWidget, frame: pd.DataFrame) -> None:
        """Rows named `file:line(function)` like `pstats.print_callees`, each keeping its
        function id: the bare name is ambiguous (a script's many `<module>`s)."""
        frame = frame.iloc[:500]
        rows = [
            [str(f), f"{int(n):,}", format_ns(int(tt)), format_ns(int(ct))]
            for f, n, tt, ct in zip(
                frame["label"],
                frame["ncalls"],
                frame["tottime_ns"],
                frame["cumtime_ns"],
                strict=True,
            )
        ]
        ids = [int(i) for i in frame["id"]]
        self._fill(table, ["Function", "Calls", "Own time", "Cumulative"], rows, ids)

    def _fill_tree(self, table: QtWidgets.QTableWidget, frame: pd.DataFrame) -> None:
        rows = [
            [str(name), f"{int(c):,}", format_ns(float(s)), format_ns(float(t))]
            for name, c, s, t in zip(
                frame["name"], frame["calls"], frame["self_ns"], frame["total_ns"], strict=True
            )
        ][:500]
        self._fill(table, ["Function", "Calls", "Self", "Total"], rows)

    def _activated(self, item: QtWidgets.QTableWidgetItem) -> None:
        table = item.tableWidget()
        first = table.item(item.row(), 0) if table is not None else None
        if first is None:
            return
        fid = first.data(_FUNCTION_ID)
        function_id = int(fid) if fid is not None else None
        name = first.text()
        if function_id is not None and self.profile is not None:
            name = str(self.profile.functions["function"].iloc[function_id])
        self.function_activated.emit(name)
        if self.document is not None:
            kind = "function" if self.profile is not None else "node"
            self.document.select(Selection(kind=kind, name=name, function=function_id, source=self))
        self.show_function(name, function_id)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["SandwichView"]
