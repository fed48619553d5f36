"""The status bar's part of the main window: progress, Cancel, and the tasks it tracks.

Why its own module: every background task (a load, a compare, a job folder) reports through the
same status-bar widgets, and this bookkeeping (which tasks run, busy or not, a window already
deleted) is independent of what the tasks do. As a mixin of
:class:`perfview.qt.main_window.MainWindow` it keeps that module about opening files and tabs.
This module never imports ``main_window``: the attributes it uses are declared below for the
type checker and set by ``MainWindow.__init__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QPushButton

from perfview.qt import warmup
from perfview.qt.tasks import Task

# At runtime a plain mixin (MainWindow puts QMainWindow after it); the type checker sees the
# QMainWindow it is mixed into.
if TYPE_CHECKING:
    _Base = QMainWindow
else:
    _Base = object


class StatusTasksMixin(_Base):
    """Progress bar, label and Cancel button for the window's background tasks."""

    _tasks: dict[Task, str]

    if TYPE_CHECKING:

        def _drop_placeholder(self, task: Task) -> None: ...

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.progress_label = QLabel(self)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop loading")
        self.cancel_button.clicked.connect(self.cancel_loads)
        self.info_label = QLabel(self)
        self.compile_label = QLabel(self)  # its text is set when shown (`watch_compile`)
        self.compile_label.setToolTip(
            "After an install, the fast trace reader is compiled once in the background "
            "(numba); big traces opened meanwhile wait for it."
        )
        self.compile_label.setVisible(False)
        bar.addPermanentWidget(self.compile_label)
        bar.addPermanentWidget(self.info_label)
        bar.addPermanentWidget(self.progress_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self._set_busy(False)

    def cancel_loads(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def _gone(self) -> bool:
        """True once the window's C++ side is deleted. Load tasks outlive a closed window
        (closeEvent cancels them, but they still report); their lambdas must then do nothing
        rather than raise "Internal C++ object already deleted" from the event loop."""
        return not shiboken6.isValid(self) or not shiboken6.isValid(self.progress)

    def _on_progress(self, path: Path, fraction: float, message: str) -> None:
        if self._gone():
            return
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self.progress_label.setText(f"{path.name}: {message}" if message else path.name)

    def _on_task_done(self, task: Task) -> None:
        self._tasks.pop(task, None)
        if self._gone():
            return
        self._drop_placeholder(task)
        if not self._tasks:
            self._set_busy(False)

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress_label.setVisible(busy)
        if busy:
            self.progress.setValue(0)
            self.progress_label.setText(text)

    def watch_compile(self, interval_ms: int = 500) -> QTimer:
        """Show `compile_label` while the trace scanner compiles ahead in its child process
        (`service.compile_ahead`, started by the start-up warm-up), polling until the
        warm-up has settled and no compile runs."""
        timer = QTimer(self)
        timer.setInterval(interval_ms)

        def tick() -> None:
            if self._gone():
                timer.stop()
                return
            from perfview.loaders import service  # loaded by then: the first load imports it

            running = service.compiling()
            if running:
                text = service.COMPILE_MESSAGE
                self.compile_label.setText(text[0].upper() + text[1:])
            self.compile_label.setVisible(running)
            if not running and warmup.scanner_settled():
                timer.stop()

        timer.timeout.connect(tick)
        timer.start()
        return timer

    def is_loading(self) -> bool:
        return bool(self._tasks)

    def track_task(self, task: Task, path: Path, text: str) -> None:
        """Show a background task in the status bar (progress, Cancel) until it is done."""
        self._tasks[task] = str(path)
        task.progress.connect(lambda f, m, p=path: self._on_progress(p, f, m))
        task.done.connect(lambda t=task: self._on_task_done(t))
        self._set_busy(True, text)


__all__ = ["StatusTasksMixin"]
