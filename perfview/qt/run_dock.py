"""The Profile menu's home in the main window: a bottom dock holding the live run panel.

The `RunController` (run_view.py) knows how to start, show and list runs; this dock only
places its panel in the window, shows it when a run starts, and lets the window ask whether a
run is still going (so quitting can ask first instead of orphaning the child).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from perfview.qt.views.run_view import RunController


class RunDock(QDockWidget):
    """Bottom dock with the run panel; opens each finished (or partial) result in the window."""

    def __init__(self, window: QMainWindow, open_path: object) -> None:
        super().__init__("Run", window)
        self.setObjectName("run_dock")  # saveState()/restoreState() need a name
        store = getattr(getattr(window, "settings", None), "store", None)
        self.controller = RunController(parent=self, settings=store)
        self.setWidget(self.controller.panel)
        self.controller.open_requested.connect(open_path)
        self.controller.panel.runner.started.connect(self.show_panel)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self)
        self.hide()

    def show_panel(self, *_args: object) -> None:
        self.show()
        self.raise_()

    def is_running(self) -> bool:
        return bool(self.controller.panel.runner.is_running())

    def cancel(self) -> None:
        """End the running script and its process group (terminate, then kill)."""
        self.controller.panel.runner.cancel()

    def stop_for_quit(self) -> None:
        """End the run synchronously; only called while the window closes."""
        self.controller.panel.runner.stop_for_quit()
