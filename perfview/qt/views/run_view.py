"""Profile ▸ Run Script: the dialog that describes a run, the panel that shows it, the runs list.

`RunController` is what the main window wires to its menu:

    controller = RunController(parent=window)
    controller.open_requested.connect(window.open_path)   # a finished (or partial) profile
    Run Script…  (Ctrl+R)       → controller.run_script(window)
    Re-run Last  (Ctrl+Shift+R) → controller.rerun_last()
    Runs…                       → controller.show_runs(window)
    controller.panel             the RunPanel; dock it, or it shows as its own window on start

None of these block: dialogs are opened with `open()`, the run is a QProcess. The per-mode option
pages live in run_options.py, the runs list in runs_dialog.py.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from perfview.qt.process_runner import ProcessRunner
from perfview.qt.views.run_options import RunOptionsPages
from perfview.qt.views.runs_dialog import RunsDialog
from perfview.runner.spec import MODES, RunSpec

SETTINGS_KEY = "run/last_spec"
MODE_LABELS = {
    "cprofile": "cProfile (function times)",
    "torch": "torch.profiler (Chrome trace)",
    "memory": "Memory over time (mprof)",
    "memory-lines": "Memory per line (memory_profiler)",
    "memray": "Allocations (memray)",
    "cuda-memory": "CUDA memory snapshot (torch allocator history)",
    "sample": "Sampling (py-spy, speedscope)",
    "scalene": "CPU, GPU and memory per line (Scalene)",
}


def _settings(settings: QSettings | None) -> QSettings:
    if settings is not None:
        return settings
    from perfview.qt.settings import open_settings

    return open_settings()


def load_last_spec(settings: QSettings | None = None) -> RunSpec | None:
    """The spec of the last run started from the dialog (None if none or unreadable)."""
    text = _settings(settings).value(SETTINGS_KEY, "")
    try:
        return RunSpec.from_dict(json.loads(str(text))) if text else None
    except (ValueError, KeyError, TypeError):
        return None


def save_last_spec(spec: RunSpec, settings: QSettings | None = None) -> None:
    _settings(settings).setValue(SETTINGS_KEY, json.dumps(spec.to_dict()))


def _path_row(edit: QLineEdit, browse: QPushButton) -> QWidget:
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(edit, 1)
    lay.addWidget(browse)
    return row


class RunDialog(QDialog):
    """Script, arguments, working directory, interpreter, mode and its options."""

    def __init__(self, parent: QWidget | None = None, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run Script")
        self._settings = settings
        self.accepted_spec: RunSpec | None = None
        self.script = QLineEdit()
        self.arguments = QLineEdit()
        self.arguments.setPlaceholderText("arguments, shell-quoted")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("(the script's folder)")
        self.python = QLineEdit(sys.executable)
        self.output = QLineEdit()
        self.output.setPlaceholderText("(a new folder in the runs directory)")
        self.mode = QComboBox()
        for mode in MODES:
            self.mode.addItem(MODE_LABELS[mode], mode)
        self.options = RunOptionsPages()
        self.mode.currentIndexChanged.connect(self.options.setCurrentIndex)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)

        form = QFormLayout()
        form.addRow("Script:", _path_row(self.script, self._browse_button(self._pick_script)))
        form.addRow("Arguments:", self.arguments)
        form.addRow("Working directory:", _path_row(self.cwd, self._browse_button(self._pick_cwd)))
        form.addRow("Python:", _path_row(self.python, self._browse_button(self._pick_python)))
        form.addRow("Mode:", self.mode)
        form.addRow("Options:", self.options)
        form.addRow("Output:", _path_row(self.output, self._browse_button(self._pick_output)))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        last = load_last_spec(self._settings)
        if last is not None:
            self.set_spec(last)

    def _browse_button(self, slot: object) -> QPushButton:
        button = QPushButton("Browse…")
        button.clicked.connect(slot)
        return button

    # --- pickers (native dialogs; not exercised by tests) ------------------------------------
    def _pick_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Script", self.script.text(), "Python (*.py)")
        if path:
            self.script.setText(path)

    def _pick_cwd(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working directory", self.cwd.text())
        if path:
            self.cwd.setText(path)

    def _pick_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python interpreter", self.python.text())
        if path:
            self.python.setText(path)

    def _pick_output(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Output file", self.output.text())
        if path:
            self.output.setText(path)

    # --- spec <-> widgets --------------------------------------------------------------------
    def set_spec(self, spec: RunSpec) -> None:
        self.script.setText(spec.script)
        self.arguments.setText(shlex.join(spec.args))
        self.cwd.setText(spec.cwd or "")
        self.python.setText(spec.python or sys.executable)
        self.output.setText(spec.output or "")
        self.mode.setCurrentIndex(MODES.index(spec.mode))
        self.options.set_options(spec.options)

    def spec(self) -> RunSpec:
        """The RunSpec the form describes; raises ValueError with a message for the user."""
        script = self.script.text().strip()
        if not script or not Path(script).is_file():
            raise ValueError(f"Script not found: {script or '(none)'}")
        python = self.python.text().strip() or sys.executable
        if not Path(python).is_file():
            raise ValueError(f"Python interpreter not found: {python}")
        try:
            args = tuple(shlex.split(self.arguments.text()))
        except ValueError as exc:
            raise ValueError(f"Arguments: {exc}") from exc
        options = self.options.read(str(self.mode.currentData()))
        script_path = Path(script).resolve()
        return RunSpec(
            mode=str(self.mode.currentData()),
            script=str(script_path),
            args=args,
            cwd=self.cwd.text().strip() or str(script_path.parent),
            python=python,
            output=self.output.text().strip() or None,
            options=options,
        )

    def accept(self) -> None:
        try:
            spec = self.spec()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.accepted_spec = spec
        save_last_spec(spec, self._settings)
        super().accept()


class RunPanel(QWidget):
    """Live log, elapsed time, busy bar and Cancel for one run at a time.

    Emits `result_ready(path)` when a run leaves a profile — also a partial one from a failed run.
    """

    result_ready = Signal(str)
    run_ended = Signal(str)  # "ok" | "failed" | "cancelled"

    def __init__(self, parent: QWidget | None = None, runner: ProcessRunner | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run")
        self.runner = runner or ProcessRunner(self)
        self.title = QLabel("No run yet")
        self.status = QLabel()
        self.elapsed = QLabel()
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setMaximumWidth(120)
        self.busy.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(20000)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.status)
        top.addWidget(self.elapsed)
        top.addWidget(self.busy)
        top.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.log, 1)
        self._tick = QTimer(self)
        self._tick.setInterval(100)
        self._tick.timeout.connect(self._show_elapsed)
        self.runner.output.connect(self._append)
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.cancelled.connect(self._on_cancelled)

    def start(self, spec: RunSpec, runs_root: Path | None = None) -> RunSpec:
        """Start a run (raises RuntimeError while another one is running)."""
        self.log.clear()
        started = self.runner.start(spec, runs_root)
        self.title.setText(f"{started.mode} · {Path(started.script).name}")
        self.status.setText("Running…")
        self.busy.show()
        self.cancel_button.setEnabled(True)
        self._tick.start()
        return started

    def _append(self, text: str) -> None:
        self.log.moveCursor(QTextCursor.MoveOperation.End)
        self.log.insertPlainText(text)
        self.log.ensureCursorVisible()

    def _show_elapsed(self) -> None:
        self.elapsed.setText(f"{self.runner.elapsed_s():.1f} s")

    def _stop(self, status: str) -> None:
        self._tick.stop()
        self._show_elapsed()
        self.busy.hide()
        self.cancel_button.setEnabled(False)
        self.status.setText(status)

    def _on_finished(self, path: str, exit_code: int) -> None:
        self._stop("Finished")
        self.run_ended.emit("ok")
        self.result_ready.emit(path)

    def _on_failed(self, message: str, path: object) -> None:
        self._stop(f"Failed: {message}")
        self.run_ended.emit("failed")
        if path:
            self.result_ready.emit(str(path))

    def _on_cancelled(self) -> None:
        self._stop("Cancelled")
        self.run_ended.emit("cancelled")


class RunController(QObject):
    """The small API the main window wires to Profile ▸ Run Script / Re-run Last / Runs."""

    open_requested = Signal(str)

    def __init__(
        self,
        parent: QObject | None = None,
        settings: QSettings | None = None,
        runs_root: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.runs_root = runs_root
        self.panel = RunPanel()
        self.panel.result_ready.connect(self.open_requested)
        self.dialog: RunDialog | None = None
        self.runs_dialog: RunsDialog | None = None

    def run_script(self, parent: QWidget | None = None) -> RunDialog:
        """Open the Run Script dialog (non-blocking); a run starts when it is accepted."""
        dialog = RunDialog(parent, self.settings)
        dialog.accepted.connect(lambda: dialog.accepted_spec and self.start(dialog.accepted_spec))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog = dialog
        dialog.open()
        return dialog

    def rerun_last(self, parent: QWidget | None = None) -> bool:
        """Start the last dialog run again (opens the dialog when there is none)."""
        spec = load_last_spec(self.settings)
        if spec is None:
            self.run_script(parent)
            return False
        return self.start(spec)

    def start(self, spec: RunSpec) -> bool:
        """Run `spec` in the panel; False (and the panel raised) when one is already running."""
        if self.panel.runner.is_running():
            self._show_panel()
            return False
        self.panel.start(spec, self.runs_root)
        self._show_panel()
        return True

    def _show_panel(self) -> None:
        if self.panel.parentWidget() is None:  # not docked by the main window
            self.panel.resize(800, 400)
            self.panel.show()
        self.panel.raise_()

    def show_runs(self, parent: QWidget | None = None) -> RunsDialog:
        dialog = RunsDialog(parent, self.runs_root)
        dialog.open_requested.connect(self.open_requested)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.runs_dialog = dialog
        dialog.open()
        return dialog
