"""The compare tab's Structure view: two traces aligned by call tree, first divergence first.

Shows `core.compare.structure.StructureDiff` as an indented table (one row per aligned node,
execution order; a table model over the frame, no item per node), a line naming the first
divergence with a button that selects it, and a "differences only" filter. Activating a row
(double-click, Enter) emits `node_activated(a_ts, b_ts, width)`: the compare tab then shows both
timelines at that node (on the side where it is absent: where it would be).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from perfview.core.compare.structure import SAME, STATUSES, StructureDiff
from perfview.qt.models.table_model import DataFrameModel

INDENT = "    "


def display_frame(diff: StructureDiff, differences_only: bool) -> pd.DataFrame:
    """Rows to show: status, the node's name indented by depth, A, B, Δ (and hidden anchors)."""
    table = diff.table
    if differences_only:
        table = table[table["status"] != SAME]
    leaf = table["path"].str.rsplit("/", n=1).str[-1]
    depth = table["depth"].to_numpy()
    indent = pd.Series([INDENT * int(d) for d in depth], index=table.index, dtype=object)
    return pd.DataFrame(
        {
            "status": table["status"].astype(object),
            "node": (indent + leaf).astype(object),
            "a_ns": table["a_ns"],
            "b_ns": table["b_ns"],
            "delta_ns": table["delta_ns"],
        },
        index=table.index,
    )


class CompareStructureView(QWidget):
    """Indented table of the aligned structure; `node_activated` asks for both timelines."""

    node_activated = Signal(float, float, float)  # a_ts, b_ts (NaN if absent), width ns

    def __init__(self, diff: StructureDiff, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.diff = diff
        counts = diff.table["status"].value_counts()
        tally = ", ".join(f"{int(counts.get(s, 0))} {s}" for s in STATUSES)
        first = diff.first_path
        where = "none: the two traces have the same structure" if first is None else first
        self.summary = QLabel(f"<b>First divergence:</b> {where}<br><small>{tally}</small>")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.first_button = QPushButton("Go to first divergence")
        self.first_button.setEnabled(diff.first_divergence is not None)
        self.first_button.clicked.connect(self.select_first_divergence)
        self.only = QCheckBox("Differences only")
        self.only.toggled.connect(self._refilter)
        self.model = DataFrameModel(
            display_frame(diff, False), headers={"a_ns": "A", "b_ns": "B", "delta_ns": "Δ"}
        )
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setColumnWidth(0, 80)
        self.table.setColumnWidth(1, 520)
        self.table.activated.connect(self._on_activated)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 2)
        top.addWidget(self.summary, 1)
        top.addWidget(self.only, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.first_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

    def shown_rows(self) -> pd.Index:
        """The structure-table rows now listed, in order (the frame's index)."""
        return self.model.frame.index

    def _refilter(self, differences_only: bool) -> None:
        self.model.set_frame(display_frame(self.diff, differences_only))

    def select_first_divergence(self) -> None:
        """Select and scroll to the first divergence, and show it in both timelines."""
        if self.diff.first_divergence is None:
            return
        rows = list(self.shown_rows())
        row = rows.index(self.diff.first_divergence)
        index = self.model.index(row, 0)
        self.table.selectRow(row)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._on_activated(index)

    def _on_activated(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        node = self.diff.table.loc[self.shown_rows()[index.row()]]
        width = float(np.nanmax([node["a_ns"], node["b_ns"], 1000.0]))
        self.node_activated.emit(float(node["a_at"]), float(node["b_at"]), width)


__all__ = ["CompareStructureView", "display_frame"]
