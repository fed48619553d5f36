"""What the window tells the user: the status bar's progress and Cancel, messages, errors.

Why its own object: every background task (a load, a compare, a job folder) reports through
the same status-bar widgets, and this bookkeeping (which tasks run, busy or not, a window
already deleted) is independent of what the tasks do. `StatusController` holds only the
status bar and the error bar it writes to; whoever must react when a task ends (the tabs drop
its loading placeholder) listens to `task_done`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar

from perfview.core.model.units import format_ns
from perfview.qt import warmup
from perfview.qt.tasks import Task
from perfview.qt.widgets.info_bar import InfoBar

if TYPE_CHECKING:
    from perfview.qt.document_tab import DocumentTab


class StatusController(QObject):
    """Progress bar, label and Cancel for the window's background tasks; messages and errors.

    Signal: task_done(Task), once a tracked task has finished, failed or been cancelled.
    """

    task_done = Signal(object)

    def __init__(self, bar: QStatusBar, error_bar: InfoBar) -> None:
        super().__init__(bar)
        self.bar = bar
        self.error_bar = error_bar
        self._tasks: dict[Task, str] = {}
        self.progress_label = QLabel(bar)
        self.progress = QProgressBar(bar)
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel", bar)
        self.cancel_button.setToolTip("Stop loading")
        self.cancel_button.clicked.connect(self.cancel_loads)
        self.info_label = QLabel(bar)
        self.compile_label = QLabel(bar)  # its text is set when shown (`watch_compile`)
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

    # --- messages --------------------------------------------------------------------------
    def say(self, text: str, timeout_ms: int = 0) -> None:
        """A transient line in the status bar (0: until the next one)."""
        self.bar.showMessage(text, timeout_ms)

    def error(self, text: str, details: str = "", timeout_ms: int = 10000) -> None:
        """An error in the bar at the top (non-modal; `details` behind its button) and below."""
        self.error_bar.show_message(text, "error", details)
        self.bar.showMessage(text, timeout_ms)

    def show_document(self, tab: DocumentTab | None) -> None:
        """The current document's format and span, at the right of the status bar."""
        if tab is None:
            self.info_label.setText("")
            return
        bundle = tab.document.bundle
        span = f", {format_ns(bundle.duration_ns)}" if bundle.duration_ns else ""
        self.info_label.setText(f"{bundle.format}{span}")

    # --- tasks -----------------------------------------------------------------------------
    def track_task(self, task: Task, path: Path, text: str) -> None:
        """Show a background task in the status bar (progress, Cancel) until it is done."""
        self._tasks[task] = str(path)
        task.progress.connect(lambda f, m, p=path: self._on_progress(p, f, m))
        task.done.connect(lambda t=task: self._on_task_done(t))
        self._set_busy(True, text)

    def is_loading(self) -> bool:
        return bool(self._tasks)

    def cancel_loads(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def gone(self) -> bool:
        """True once the status bar's C++ side is deleted. Load tasks outlive a closed window
        (closing cancels them, but they still report); their lambdas must then do nothing
        rather than raise "Internal C++ object already deleted" from the event loop."""
        return not shiboken6.isValid(self) or not shiboken6.isValid(self.progress)

    def _on_progress(self, path: Path, fraction: float, message: str) -> None:
        if self.gone():
            return
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self.progress_label.setText(f"{path.name}: {message}" if message else path.name)

    def _on_task_done(self, task: Task) -> None:
        self._tasks.pop(task, None)
        if self.gone():
            return
        self.task_done.emit(task)
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
            if self.gone():
                timer.stop()
                return
            from perfview.loaders import service  # loaded by then: the first load imports it

            running = service.compiling()
            if running:
                text = service.compile_message()
                self.compile_label.setText(text[0].upper() + text[1:])
            self.compile_label.setVisible(running)
            if not running and warmup.scanner_settled():
                timer.stop()

        timer.timeout.connect(tick)
        timer.start()
        return timer


__all__ = ["StatusController"]
