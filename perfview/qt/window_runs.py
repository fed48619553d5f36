"""The window's commands that start other work: File ▸ Compare… and the Profile menu.

Why its own object: comparing two runs and profiling a script are delegated wholesale
(``compare_dialog.py``, ``run_dock.py``); this only opens their dialogs and hands their results
to the two callables it was given, `open_path` (a recorded file) and `open_compare` (two runs).
It also answers whether the window may quit while a script still runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox

from perfview.qt.settings import Settings
from perfview.qt.window_tabs import TabsController

if TYPE_CHECKING:  # the dock's modules load on first use, not at start-up (~35 ms)
    from perfview.qt.run_dock import RunDock
    from perfview.qt.views.run_view import RunDialog


class OpenCompare(Protocol):
    """`MainWindow.open_compare`: two runs and the rule matching their files."""

    def __call__(self, path_a: str | Path, path_b: str | Path, match: str = ...) -> object: ...


class RunsController(QObject):
    """File ▸ Compare… and the Profile menu of `window` (its run dock, built on first use)."""

    def __init__(
        self,
        window: QMainWindow,
        settings: Settings,
        tabs: TabsController,
        open_path: Callable[[str], object],
        open_compare: OpenCompare,
    ) -> None:
        super().__init__(window)
        self.window = window  # the dock's home and the dialogs' parent
        self.settings = settings
        self.tabs = tabs
        self._open_path = open_path
        self._open_compare = open_compare
        self._run_dock: RunDock | None = None

    # --- comparing (compare_tab.py does the work) ------------------------------------------
    def compare_dialog(self) -> Any:
        """File ▸ Compare…: pick two runs; A starts as the current tab's file."""
        from perfview.qt.compare_dialog import CompareDialog

        tab = self.tabs.current_tab()
        path = tab.document.path if tab is not None else None
        dialog = CompareDialog(self.window, path, self.settings.last_folder())
        dialog.compare_requested.connect(self._open_compare)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # --- profile menu ----------------------------------------------------------------------
    def run_dock(self) -> RunDock:
        """The run panel dock, created on first use (most sessions never profile)."""
        if self._run_dock is None:
            from perfview.qt.run_dock import RunDock

            self._run_dock = RunDock(self.window, self._open_path)
        return self._run_dock

    def run_script(self) -> RunDialog:
        """Profile ▸ Run Script… (and Help ▸ Examples, which pre-fills the dialog)."""
        return self.run_dock().controller.run_script(self.window)

    def rerun_last(self) -> None:
        self.run_dock().controller.rerun_last(self.window)

    def show_runs(self) -> None:
        dialog = self.run_dock().controller.show_runs(self.window)
        if hasattr(dialog, "compare_requested"):
            dialog.compare_requested.connect(lambda a, b: self._open_compare(a, b))

    # --- quitting --------------------------------------------------------------------------
    def may_quit(self) -> bool:
        """False when a profiled script still runs and the user wants to keep it; else the
        run (if any) is stopped, what it recorded written, and True."""
        dock = self._run_dock
        if dock is None or not dock.is_running():
            return True
        if not self.confirm_quit_during_run():
            return False
        dock.stop_for_quit()
        return True

    def confirm_quit_during_run(self) -> bool:
        """Ask before quitting while a profiled script still runs (tests replace this)."""
        answer = QMessageBox.question(
            self.window,
            "perfview",
            "A profiling run is still going. Quit and stop it?\n"
            "What it recorded so far is written before it ends.",
        )
        return answer == QMessageBox.StandardButton.Yes


__all__ = ["RunsController"]
