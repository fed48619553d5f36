"""The tab a file occupies while it loads: name, progress and Cancel.

Showing the tab at once tells the user their file was taken; closing it cancels the load
(the loader stops at its next progress report), exactly like the status bar's Cancel.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from perfview.qt.tasks import Task


class LoadingTab(QWidget):
    """Placeholder for `path` while `task` loads it; the document tab replaces it in place."""

    def __init__(self, path: Path, task: Task, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.task = task
        self.label = QLabel(f"Loading {path.name}…", self)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.detail = QLabel("", self)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setMinimumWidth(360)
        self.bar.setMaximumWidth(480)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(task.cancel)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(self.detail)
        layout.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)

    def set_progress(self, fraction: float, message: str) -> None:
        self.bar.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self.detail.setText(message)
