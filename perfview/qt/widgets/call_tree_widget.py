"""Top-down call tree as an expandable tree table (name, total, self, calls, % of root).

The textual companion of the icicle: exact numbers, keyboard navigation, and it scales to big
trees because the model is lazy. Linked to the Document selection both ways.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelectionModel, QModelIndex
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTreeView, QVBoxLayout, QWidget

from perfview.core.model import CallTree
from perfview.qt.document import Document, Selection
from perfview.qt.models.tree_model import CallTreeModel

ESTIMATED_NOTE = (
    "Estimated tree: cProfile keeps no full stacks, so times along each path are apportioned "
    "from caller/callee totals."
)


class CallTreeWidget(QWidget):
    """QTreeView over a `CallTreeModel`; the first top rows start expanded."""

    def __init__(
        self, tree: CallTree, document: Document | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.tree = tree
        self.document = document
        self._syncing = False
        self.model = CallTreeModel(tree, self)
        self.view = QTreeView(self)
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.header().setStretchLastSection(True)
        self.view.setColumnWidth(0, 420)
        for column in range(1, 5):
            self.view.setColumnWidth(column, 90)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        if tree.estimated:
            note = QLabel(ESTIMATED_NOTE, self)
            note.setWordWrap(True)
            note.setContentsMargins(6, 4, 6, 4)
            layout.addWidget(note)
        layout.addWidget(self.view, 1)
        self._expand_hot_path()
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        if document is not None:
            document.selection_changed.connect(self._on_document_selection)

    def _expand_hot_path(self, depth: int = 6) -> None:
        """Open the heaviest path a few levels deep so the tab is not a single closed row."""
        index = self.model.index(0, 0)
        for _ in range(depth):
            if not index.isValid():
                break
            self.view.expand(index)
            index = self.model.index(0, 0, index)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or not current.isValid() or self.document is None:
            return
        node = self.model.node_of(current)
        self.document.select(
            Selection(kind="node", name=self.tree.name(node), node=node, source=self)
        )

    def select_node(self, node: int) -> None:
        """Expand the path to `node`, make it current and scroll to it (no selection echo)."""
        path = self.model.path_to(node)
        if not path:
            return
        for ancestor in path[:-1]:
            self.view.expand(self.model.index_of(ancestor))
        index = self.model.index_of(node)
        self._syncing = True
        try:
            self.view.selectionModel().setCurrentIndex(
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        finally:
            self._syncing = False

    def node_for_name(self, name: str) -> int | None:
        """The heaviest node whose frame is named `name` (vectorised over the frames table)."""
        names = self.tree.frames["name"].astype(str).to_numpy()
        frames = np.flatnonzero(names == name)
        if not len(frames):
            return None
        nodes = np.flatnonzero(np.isin(self.tree.frame, frames))
        if not len(nodes):
            return None
        total = self.tree.metrics.get("total_ns")
        return int(nodes[np.argmax(total[nodes])]) if total is not None else int(nodes[0])

    def _on_document_selection(self, selection: Selection | None) -> None:
        if selection is None or selection.source is self:
            return
        node = selection.node if selection.kind in ("node", "function") else None
        if (
            node is not None
            and 0 < node < len(self.tree)
            and self.tree.name(node) != selection.name
        ):
            node = None  # a node id from another tree (e.g. an inverted one): match by name
        if node is None or not 0 < node < len(self.tree):
            node = self.node_for_name(selection.name)
        if node is not None:
            self.select_node(node)


__all__ = ["CallTreeWidget"]
