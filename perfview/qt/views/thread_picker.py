"""The thread picker of a sampled profile's flame graphs: every thread merged, or one.

One combo box above each page that honours the choice (`Page.per_thread`: icicle, bottom-up,
sandwich, call tree, callers); the choice is the document's (`Document.set_thread`), so every
such page follows it and every picker shows it. The chosen thread's tree is cut from the
merged tree on a worker thread (`sampled_threads.thread_tree`).
"""

from __future__ import annotations

import shiboken6
from PySide6 import QtCore, QtWidgets

from perfview.core.analysis import sampled_threads
from perfview.core.analysis.sampled_threads import ThreadChoice
from perfview.core.model import CallTree
from perfview.qt.document import Document
from perfview.qt.tasks import Task


class ThreadPicker(QtWidgets.QWidget):
    """ "Thread:" and a combo box of `choices`; picking builds that thread's tree, then hands
    it to the document."""

    def __init__(
        self,
        document: Document,
        choices: list[ThreadChoice],
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.task: Task | None = None
        self.box = QtWidgets.QComboBox(self)
        self.box.setToolTip(
            "Which thread the flame graphs show: all threads add their samples on one axis"
        )
        for choice in choices:
            self.box.addItem(choice.label, choice)
        self.box.setSizeAdjustPolicy(
            QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.box.setMinimumContentsLength(24)
        self._show(document.thread_choice)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(QtWidgets.QLabel("Thread:", self))
        layout.addWidget(self.box)
        layout.addStretch(1)
        self.box.currentIndexChanged.connect(self._picked)
        document.thread_changed.connect(self._show)

    def _show(self, choice: ThreadChoice) -> None:
        """Show the document's choice (made here or in another page's picker)."""
        index = next((i for i in range(self.box.count()) if self.box.itemData(i) == choice), 0)
        with QtCore.QSignalBlocker(self.box):
            self.box.setCurrentIndex(index)

    def _picked(self, index: int) -> None:
        choice = self.box.itemData(index)
        if choice is None:
            return
        bundle = self.document.bundle
        self.task = Task(
            lambda _progress: (choice, sampled_threads.thread_tree(bundle, choice)),
            name="thread tree",
        )
        self.task.finished.connect(self._on_tree)
        self.task.start()

    def _on_tree(self, result: tuple[ThreadChoice, CallTree | None]) -> None:
        choice, tree = result
        if not shiboken6.isValid(self) or self.box.currentData() != choice:
            return  # closed, or another thread was picked meanwhile
        self.document.set_thread(choice, tree)


__all__ = ["ThreadPicker"]
