"""Operators page: torch ops with host and device time, the kernels each op launched, its stack.

Top: `op_kernels.ops_table` (by name, or by name + input shape with the toggle). Selecting an
op fills the detail pane below with that op's GPU activities (`op_kernels_table(op, shape)`:
what "expanding" the op shows) and the Python call stack of its longest call (`call_stack`),
and selects the op in the Document so the timeline and icicle follow.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis.torch import op_kernels
from perfview.core.model import Timeline
from perfview.core.pages.data import OpDetail, OpsData, longest_call
from perfview.qt.document import Document, Selection
from perfview.qt.views.table_view import TableView

OP_HEADERS = {"device_self_pct": "device self %", "host_self_pct": "host self %"}


def set_rows(view: TableView, frame: pd.DataFrame) -> None:
    """Replace a detail table's rows and refit its columns to the new content (capped)."""
    view.model.set_frame(frame)
    view._update_count()
    view.table.resizeColumnsToContents()
    header = view.table.horizontalHeader()
    for i in range(header.count()):
        header.resizeSection(i, min(max(header.sectionSize(i) + 12, 60), 520))


class TorchOpsView(QWidget):
    """Ops table (toggle: by input shape) above a kernels table and a call-stack list."""

    def __init__(
        self,
        timeline: Timeline,
        document: Document | None = None,
        tables: dict[str, pd.DataFrame] | None = None,
        parent: QWidget | None = None,
        data: OpsData | None = None,
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.document = document
        self._tables = dict(tables or {})
        self.current_op: tuple[str, str | None] | None = None
        # `data` comes from a worker (document tab): on big traces the busiest op's detail and
        # the shape check cost half a second.
        if data is None:
            data = OpsData.compute(timeline, self._ops_frame(False))

        self.by_shape = QCheckBox("Group by input shape", self)
        self.by_shape.toggled.connect(self._on_toggle)
        self.ops = TableView(
            self._ops_frame(False),
            document,
            kind="op",
            key_column="name",
            headers=OP_HEADERS,
            stretch_column="name",
        )
        self.ops.row_selected.connect(self._on_op_selected)

        self.kernels_label = QLabel("Select an operator to see the GPU kernels it launched.", self)
        self.kernels = TableView(data.kernel_columns, None, kind="op", key_column="kernel")
        self.stack_label = QLabel("Python call stack (outermost first)", self)
        self.stack = QListWidget(self)
        self.stack.setAlternatingRowColors(True)

        detail = QSplitter(Qt.Orientation.Horizontal, self)
        left = QWidget(detail)
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.kernels_label)
        lv.addWidget(self.kernels, 1)
        right = QWidget(detail)
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.stack_label)
        rv.addWidget(self.stack, 1)
        detail.addWidget(left)
        detail.addWidget(right)
        detail.setSizes([700, 300])

        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.ops)
        split.addWidget(detail)
        split.setSizes([600, 400])
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(self.by_shape)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        self.by_shape.setEnabled(data.has_shapes)
        # Open on the op with the most device self time, so the detail pane is not blank.
        if data.busiest is not None:
            self.show_detail(data.busiest)

    def _ops_frame(self, by_shape: bool) -> pd.DataFrame:
        key = "operators-by-shape" if by_shape else "operators"
        if key not in self._tables:
            if self.document is not None and self.document.bundle.timeline is self.timeline:
                self._tables[key] = self.document.table(key)
            else:
                self._tables[key] = op_kernels.ops_table(self.timeline, by_shape=by_shape)
        return self._tables[key]

    def _on_toggle(self, checked: bool) -> None:
        self.ops.model.set_frame(self._ops_frame(checked))
        self.ops._update_count()

    def _on_op_selected(self, selection: Selection) -> None:
        shape: str | None = None
        if self.by_shape.isChecked():
            rows = self.ops.selected_proxy_rows()
            if rows:
                src = self.ops.proxy.mapToSource(self.ops.proxy.index(rows[0], 0)).row()
                col = self.ops.model.column_index("shape")
                shape = str(self.ops.model.raw(src, col))
        self.show_op(selection.name, shape)

    def show_op(self, name: str, shape: str | None = None) -> int:
        """Fill the detail pane for op `name` (and `shape`); returns the kernel row count."""
        return self.show_detail(OpDetail.compute(self.timeline, name, shape))

    def show_detail(self, detail: OpDetail) -> int:
        """Fill the detail pane from a computed `OpDetail`; returns the kernel row count."""
        name, shape, frame = detail.name, detail.shape, detail.kernels
        self.current_op = (name, shape)
        set_rows(self.kernels, frame.drop(columns="op"))  # the op is named in the label
        calls = int(frame["calls"].sum()) if len(frame) else 0
        what = f"{name} [{shape}]" if shape else name
        self.kernels_label.setText(
            f"<b>{what}</b> launched {len(frame)} distinct GPU activities ({calls:,} calls)"
            if len(frame)
            else f"<b>{what}</b> launched no GPU work itself (device time comes from ops below it)"
        )
        self.stack.clear()
        if detail.stack is not None:
            self.stack.addItems(detail.stack or ["(no enclosing frames)"])
        return len(frame)


__all__ = ["TorchOpsView", "longest_call"]
