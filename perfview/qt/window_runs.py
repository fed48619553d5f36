"""The window's commands that start other work: Compare… and the Profile menu (run dock).

Why its own module: comparing two runs and profiling a script are delegated wholesale
(``compare_tab.py``, ``run_dock.py``); the window only opens their dialogs and wires their
results back to ``open_path`` / ``open_compare``. As a mixin of
:class:`perfview.qt.main_window.MainWindow` they keep that module about loading and tabs.
This module never imports ``main_window``: the attributes it uses are declared below for the
type checker and set by ``MainWindow.__init__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox

from perfview.qt.document_tab import DocumentTab
from perfview.qt.settings import Settings

if TYPE_CHECKING:  # the dock's modules load on first use, not at start-up (~35 ms)
    from perfview.qt.run_dock import RunDock

# At runtime a plain mixin (MainWindow puts QMainWindow after it); the type checker sees the
# QMainWindow it is mixed into.
if TYPE_CHECKING:
    _Base = QMainWindow
else:
    _Base = object


class WindowRunsMixin(_Base):
    """File ▸ Compare… and the Profile menu of the main window."""

    settings: Settings
    _run_dock: RunDock | None

    if TYPE_CHECKING:

        def current_tab(self) -> DocumentTab | None: ...

        def open_path(self, path: str | Path, *, remember: bool = True) -> Any: ...

    # --- comparing (compare_tab.py does the work) ------------------------------------------
    def compare_dialog(self) -> Any:
        """File ▸ Compare…: pick two runs; A starts as the current tab's file."""
        from perfview.qt.compare_dialog import CompareDialog

        tab = self.current_tab()
        path = tab.document.path if tab is not None else None
        dialog = CompareDialog(self, path, self.settings.last_folder())
        dialog.compare_requested.connect(self.open_compare)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_compare(self, path_a: str | Path, path_b: str | Path, match: str = "basename") -> Any:
        """Load two runs concurrently and show them in a compare tab (`compare_opened`)."""
        from perfview.qt.compare_tab import open_compare

        return open_compare(self, path_a, path_b, match)

    # --- profile menu ----------------------------------------------------------------------
    def run_dock(self) -> RunDock:
        """The run panel dock, created on first use (most sessions never profile)."""
        if self._run_dock is None:
            from perfview.qt.run_dock import RunDock

            self._run_dock = RunDock(self, self.open_path)
        return self._run_dock

    def run_script(self) -> None:
        self.run_dock().controller.run_script(self)

    def rerun_last(self) -> None:
        self.run_dock().controller.rerun_last(self)

    def show_runs(self) -> None:
        dialog = self.run_dock().controller.show_runs(self)
        if hasattr(dialog, "compare_requested"):
            dialog.compare_requested.connect(lambda a, b: self.open_compare(a, b))

    def confirm_quit_during_run(self) -> bool:
        """Ask before quitting while a profiled script still runs (tests replace this)."""
        answer = QMessageBox.question(
            self,
            "perfview",
            "A profiling run is still going. Quit and stop it?\n"
            "What it recorded so far is written before it ends.",
        )
        return answer == QMessageBox.StandardButton.Yes


__all__ = ["WindowRunsMixin"]
