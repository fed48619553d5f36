"""File ▸ Compare…: the dialog that picks runs A and B and the matching rule.

Each side may name several runs separated by `;` (Browse picks several files): the compare
tab then shows medians, intervals and verdicts (`compare_runs`).

Why its own module: the dialog is a self-contained form (two paths, Browse, Swap, a match
rule) that only emits `compare_requested`; it needs nothing from the compare tab, so keeping
it apart keeps :mod:`perfview.qt.compare_tab` short. ``compare_tab`` re-exports it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

MATCH_LABELS = {
    "basename": "file name + line + function",
    "name": "function name only",
    "full": "full path + line + function",
}


class CompareDialog(QDialog):
    """File ▸ Compare…: two paths (A prefilled with the current tab's file) and a match rule."""

    compare_requested = Signal(str, str, str)  # path A, path B, match

    def __init__(
        self, parent: QWidget | None = None, path_a: Path | None = None, folder: str = ""
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare Two Runs")
        self.setMinimumWidth(620)
        self.folder = folder
        self.path_a = QLineEdit(str(path_a) if path_a is not None else "")
        self.path_a.setPlaceholderText(
            "baseline run (.prof, trace .json(.gz), .dat, report); several: a1.prof; a2.prof"
        )
        self.path_b = QLineEdit()
        self.path_b.setPlaceholderText("new run, of the same kind; several runs: separate with ;")
        self.match = QComboBox()
        for key, label in MATCH_LABELS.items():
            self.match.addItem(label, key)
        swap = QPushButton("Swap A ↔ B")
        swap.clicked.connect(self.swap_fields)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        form = QFormLayout()
        form.addRow("A (baseline):", self._row(self.path_a))
        form.addRow("B (new):", self._row(self.path_b))
        form.addRow("Match functions by:", self.match)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.compare_button = buttons.addButton("Compare", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(swap, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _row(self, edit: QLineEdit) -> QWidget:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(edit, 1)
        browse = QPushButton("Browse…")
        browse.clicked.connect(lambda: self._browse(edit))
        lay.addWidget(browse)
        return row

    def _browse(self, edit: QLineEdit) -> None:  # native dialog: not exercised by tests
        from perfview.qt.file_types import name_filters

        start = edit.text() or self.path_a.text() or self.folder
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Choose one run or several", start.split(";")[0], ";;".join(name_filters())
        )
        if paths:
            edit.setText("; ".join(paths))

    def swap_fields(self) -> None:
        a, b = self.path_a.text(), self.path_b.text()
        self.path_a.setText(b)
        self.path_b.setText(a)

    def accept(self) -> None:
        a, b = self.path_a.text().strip(), self.path_b.text().strip()
        for label, text in (("A", a), ("B", b)):
            parts = [p.strip() for p in text.split(";") if p.strip()] or [""]
            # folders are jobs (their rank traces), compared rank by rank; several folders are
            # several runs of a job, so a side is all folders or all files
            jobs = all(Path(part).is_dir() for part in parts)
            for part in parts:
                if not part or not (Path(part).is_file() or jobs):
                    self.error.setText(f"Run {label}: file not found: {part or '(none)'}")
                    return
        self.compare_requested.emit(a, b, str(self.match.currentData()))
        super().accept()


__all__ = ["MATCH_LABELS", "CompareDialog"]
