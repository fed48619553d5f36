"""A lazy Qt tree model over a `CallTree` (struct-of-arrays), for the top-down call tree view.

Qt asks for children only when a row is expanded, so a 200k-node tree costs nothing until the
user opens it. Each QModelIndex carries the CallTree node id as its `internalId` (never a Python
object pointer), and each node's children are sorted by total time once, on first expansion.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from perfview.core.model import CallTree
from perfview.core.model.units import Unit, format_value

AnyIndex = QModelIndex | QPersistentModelIndex
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
RAW_ROLE = Qt.ItemDataRole.UserRole + 2

# (header, metric key or None for the name/percent columns, unit)
COLUMNS: tuple[tuple[str, str | None, Unit | None], ...] = (
    ("name", None, None),
    ("total", "total_ns", Unit.NS),
    ("self", "self_ns", Unit.NS),
    ("calls", "calls", Unit.COUNT),
    ("% of root", None, Unit.PERCENT),
    ("file", None, None),
)
_NAME, _TOTAL, _SELF, _CALLS, _PCT, _FILE = range(len(COLUMNS))


class CallTreeModel(QAbstractItemModel):
    """Top-down tree: the synthetic root (node 0) is hidden; its children are the top rows."""

    def __init__(self, tree: CallTree, parent: Any = None) -> None:
        super().__init__(parent)
        self.tree = tree
        n = len(tree)
        self._zeros = np.zeros(n, dtype=np.float64)
        self._total = tree.metrics.get("total_ns", self._zeros)
        self._self = tree.metrics.get("self_ns", self._zeros)
        self._calls = tree.metrics.get("calls", self._zeros)
        root_total = float(self._total[0]) if n else 0.0
        if root_total <= 0 and n:
            root_total = float(sum(self._total[c] for c in tree.children(0)))
        self._root_total = root_total
        self._sorted: dict[int, np.ndarray] = {}
        self._row = np.full(n, -1, dtype=np.int64)
        has_file = "file" in tree.frames.columns
        self._files = tree.frames["file"].astype(str).to_numpy() if has_file else None

    # --- helpers ---------------------------------------------------------------------------
    def sorted_children(self, node: int) -> np.ndarray:
        """Children of `node`, biggest total first (computed once per node)."""
        kids = self._sorted.get(node)
        if kids is None:
            raw = self.tree.children(node)
            kids = raw[np.argsort(-self._total[raw], kind="stable")] if len(raw) else raw
            self._row[kids] = np.arange(len(kids))
            self._sorted[node] = kids
        return kids

    def node_of(self, index: AnyIndex) -> int:
        return int(index.internalId()) if index.isValid() else 0

    def index_of(self, node: int, column: int = 0) -> QModelIndex:
        """Model index for `node` (computes the sorted children along its ancestry)."""
        if node <= 0 or node >= len(self.tree):
            return QModelIndex()
        parent = int(self.tree.parent[node])
        self.sorted_children(parent)
        return self.createIndex(int(self._row[node]), column, node)

    def path_to(self, node: int) -> list[int]:
        """Ancestors of `node` from the top row down to it (root excluded)."""
        path = []
        while node > 0:
            path.append(node)
            node = int(self.tree.parent[node])
        return path[::-1]

    # --- Qt model API ----------------------------------------------------------------------
    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        kids = self.sorted_children(self.node_of(parent))
        if row >= len(kids):
            return QModelIndex()
        return self.createIndex(row, column, int(kids[row]))

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        node = self.node_of(index)
        up = int(self.tree.parent[node])
        if up <= 0:
            return QModelIndex()
        return self.index_of(up, 0)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        if not len(self.tree):
            return 0
        return len(self.tree.children(self.node_of(parent)))

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self.node_of(index)
        column = index.column()
        if role == NODE_ROLE:
            return node
        if role == RAW_ROLE:
            return self._raw(node, column)
        if role == Qt.ItemDataRole.DisplayRole:
            value = self._raw(node, column)
            unit = COLUMNS[column][2]
            if unit is None or value is None:
                return "" if value is None else str(value)
            return format_value(float(value), unit)
        if role == Qt.ItemDataRole.TextAlignmentRole and column not in (_NAME, _FILE):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == _NAME:
            return self.tree.name(node)
        return None

    def _raw(self, node: int, column: int) -> Any:
        if column == _NAME:
            return self.tree.name(node)
        if column == _TOTAL:
            return float(self._total[node])
        if column == _SELF:
            return float(self._self[node])
        if column == _CALLS:
            return float(self._calls[node])
        if column == _PCT:
            if self._root_total <= 0:
                return None
            return 100.0 * float(self._total[node]) / self._root_total
        if column == _FILE and self._files is not None:
            frame = int(self.tree.frame[node])
            return self._files[frame] if frame >= 0 else ""
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section][0]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


__all__ = ["COLUMNS", "NODE_ROLE", "RAW_ROLE", "CallTreeModel"]
