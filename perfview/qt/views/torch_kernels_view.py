"""Kernels page: kernels by name with launch configuration; a kernel's ops and its launches.

Top: `kernels.kernels_table` (calls, times, grid, block, registers, shared memory, occupancy,
tensor-core use). Selecting a kernel shows, below, which ops launched it (from
`op_kernels_table`) and every launch (`kernel_rows`). Double-clicking a launch asks the
document tab for the Timeline and selects that event there.
"""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from perfview.core.analysis.torch.kernels import KERNELS_DEFINITION
from perfview.core.model import Timeline
from perfview.core.pages.data import KERNEL_SPREAD_CHART, KernelsData
from perfview.qt.document import Document, Selection
from perfview.qt.views.bar_chart import BarChartView
from perfview.qt.views.table_view import TableView
from perfview.qt.views.torch_ops_view import set_rows

LAUNCH_COLUMNS = ["row", "ts_ns", "dur_ns", "grid", "block", "registers_per_thread",
                  "shared_memory_bytes", "occupancy_pct", "op"]  # fmt: skip
KERNEL_HEADERS = {"occupancy_pct": "est. occupancy %", "tensor_cores": "tensor cores"}


class TorchKernelsView(QWidget):
    """Kernels table above two detail tables: launching ops, and launches."""

    event_requested = Signal(int)  # the event row a launch double-click asked to show

    def __init__(
        self,
        timeline: Timeline,
        document: Document | None = None,
        table: pd.DataFrame | None = None,
        parent: QWidget | None = None,
        data: KernelsData | None = None,
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.document = document
        # `data` comes from a worker (document tab); launch rows cost seconds on big traces.
        data = data if data is not None else KernelsData.compute(timeline, table)
        frame = data.table
        self._rows = data.rows
        self._op_kernels = data.op_kernels
        self.current_kernel = ""

        self.kernels = TableView(frame, document, kind="op", key_column="name",
                                 headers=KERNEL_HEADERS, stretch_column="name",
                                 caption=KERNELS_DEFINITION)  # fmt: skip
        self.kernels.row_selected.connect(lambda s: self.show_kernel(s.name))
        self.ops_label = QLabel("Select a kernel to see the ops that launched it.", self)
        empty_ops = self._op_kernels.iloc[:0].drop(columns="kernel")
        self.ops = TableView(empty_ops, document, kind="op", key_column="op",
                             stretch_column="op")  # fmt: skip
        self.launch_label = QLabel("Launches (double-click one to show it on the timeline)", self)
        self.launches = TableView(self._rows[LAUNCH_COLUMNS].iloc[:0], None, kind="event",
                                  key_column="row", units={"row": None},
                                  headers={"row": "event"})  # fmt: skip
        self.launches.table.doubleClicked.connect(self._on_launch_double_clicked)

        def boxed(label: QLabel, table: TableView) -> QWidget:
            box = QWidget(self)
            v = QVBoxLayout(box)
            v.setContentsMargins(0, 0, 0, 0)
            v.addWidget(label)
            v.addWidget(table, 1)
            return box

        self.spread: BarChartView | None = None
        if len(data.spread):
            self.spread = BarChartView(data.spread, KERNEL_SPREAD_CHART)
            self.spread.bar_clicked.connect(self._on_spread_clicked)
        detail = QSplitter(Qt.Orientation.Horizontal, self)
        detail.addWidget(boxed(self.ops_label, self.ops))
        detail.addWidget(boxed(self.launch_label, self.launches))
        detail.setSizes([400, 600])
        split = QSplitter(Qt.Orientation.Vertical, self)
        if self.spread is not None:  # its own fixed height: the axis under it stays in sight
            split.addWidget(self.spread)
            split.setCollapsible(0, True)
        split.addWidget(self.kernels)
        split.addWidget(detail)
        split.setSizes([self.spread.height(), 400, 300] if self.spread else [600, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def show_kernel(self, name: str) -> None:
        """Fill the detail tables for kernel `name`."""
        self.current_kernel = name
        ops = self._op_kernels[self._op_kernels["kernel"] == name].reset_index(drop=True)
        set_rows(self.ops, ops[[c for c in ops.columns if c != "kernel"]])
        launches = self._rows.loc[self._rows["name"] == name, LAUNCH_COLUMNS]
        set_rows(self.launches, launches.reset_index(drop=True))
        short = name if len(name) < 90 else name[:87] + "…"
        self.ops_label.setText(f"<b>{len(ops)}</b> launching op(s) of <i>{short}</i>")
        self.launch_label.setText(
            f"<b>{len(launches):,}</b> launches (double-click one to show it on the timeline)"
        )

    def _on_spread_clicked(self, position: int) -> None:
        """A kernel's strip clicked: select its row above the details and show them."""
        assert self.spread is not None
        name = self.spread.labels[position]
        found = self.kernels.model.find_rows("name", name)
        if found:
            index = self.kernels.proxy.mapFromSource(self.kernels.model.index(found[0], 0))
            if index.isValid():
                self.kernels.table.selectRow(index.row())
                self.kernels.table.scrollTo(index)
        self.show_kernel(name)

    def launch_row(self, proxy_row: int) -> int:
        """The event row (in Timeline.events) of the launch shown at `proxy_row`."""
        src = self.launches.proxy.mapToSource(self.launches.proxy.index(proxy_row, 0)).row()
        return int(self.launches.model.raw(src, self.launches.model.column_index("row")))

    def open_launch(self, proxy_row: int) -> None:
        """Show launch `proxy_row` on the timeline: switch tab, then select the event."""
        row = self.launch_row(proxy_row)
        self.event_requested.emit(row)
        if self.document is not None:
            self.document.request_view("timeline")
            name = self.current_kernel or str(self.timeline.events["name"].iloc[row])
            self.document.select(Selection(kind="event", name=name, event=row, source=self))

    def _on_launch_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.open_launch(index.row())


__all__ = ["TorchKernelsView"]
