"""Profile ▸ Runs…: the list of past runs with Open, Compare and Delete.

Its own module because it reads the runs index (`run.json` records) and knows nothing about
starting a run; `RunController` in run_view.py opens it and forwards its signals.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from perfview.runner.spec import RunRecord, delete_run, list_runs


class RunsDialog(QDialog):
    """Past runs (newest first) with Open, Compare (exactly two selected) and Delete."""

    open_requested = Signal(str)
    compare_requested = Signal(str, str)  # older run (A, baseline), newer run (B)
    COLUMNS = ("Started", "Mode", "Script", "Status", "Exit", "Duration")

    def __init__(self, parent: QWidget | None = None, root: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Runs")
        self.resize(760, 360)
        self.root = root
        self.records: list[RunRecord] = []
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(self.open_selected)
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self.open_selected)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare the two selected runs (older = A, newer = B)")
        self.compare_button.clicked.connect(self.compare_selected)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(lambda: self.delete_selected(confirm=True))
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        for button in (self.open_button, self.compare_button, self.delete_button, refresh):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.refresh()

    def refresh(self) -> None:
        self.records = list_runs(self.root)
        self.table.setRowCount(len(self.records))
        for row, rec in enumerate(self.records):
            duration = f"{rec.ended - rec.started:.1f} s" if rec.ended else ""
            cells = (
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(rec.started)),
                rec.mode,
                Path(rec.script).name,
                rec.status,
                "" if rec.exit_code is None else str(rec.exit_code),
                duration,
            )
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 2:
                    item.setToolTip(" ".join([rec.script, *rec.args]))
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        if self.records:
            self.table.selectRow(0)
        self._update_buttons()

    def selected(self) -> RunRecord | None:
        """The selected run when exactly one is selected."""
        records = self.selected_records()
        return records[0] if len(records) == 1 else None

    def selected_records(self) -> list[RunRecord]:
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.records[row] for row in rows]

    def _update_buttons(self) -> None:
        rec = self.selected()
        self.open_button.setEnabled(rec is not None and rec.output_exists)
        self.delete_button.setEnabled(rec is not None and rec.status != "running")
        pair = self.selected_records()
        self.compare_button.setEnabled(len(pair) == 2 and all(r.output_exists for r in pair))

    def compare_selected(self) -> bool:
        """Ask to compare the two selected runs, the older one as the baseline A."""
        pair = self.selected_records()
        if len(pair) != 2 or not all(r.output_exists for r in pair):
            return False
        older, newer = sorted(pair, key=lambda r: r.started)
        self.compare_requested.emit(older.output, newer.output)
        return True

    def open_selected(self) -> None:
        rec = self.selected()
        if rec is not None and rec.output_exists:
            self.open_requested.emit(rec.output)

    def delete_selected(self, confirm: bool = True) -> bool:
        rec = self.selected()
        if rec is None:
            return False
        if confirm:
            answer = QMessageBox.question(
                self, "Delete run", f"Delete the run folder?\n{rec.folder}"
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        delete_run(rec, self.root)
        self.refresh()
        return True
