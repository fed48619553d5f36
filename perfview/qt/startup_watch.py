"""Stamps `window_shown` and `first_page_drawn` for the start-up probe (`startup_stamps`).

Installed only when `PERFVIEW_STARTUP_PROBE` is set: an application-wide event filter sees
every paint, which costs a Python call per event, so a normal start never pays for it. With
`PERFVIEW_STARTUP_PROBE_QUIT=1` the application quits after `first_page_drawn`, so a profiler
run of the start-up (`python -m cProfile -m perfview FILE`) ends there.
`window_shown` is stamped as the first paint starts (the start window's heavy imports follow
it without an event-loop turn); `first_page_drawn` on the turn after the page's paint, i.e.
once that paint has finished.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from perfview import startup_stamps

QUIT_ENV = "PERFVIEW_STARTUP_PROBE_QUIT"  # set: quit once the first page is drawn


class StartupWatch(QObject):
    """Watches paints: the first of any window, then the first of the watched document tab."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._shown = False
        self._tab: QWidget | None = None
        self._done = False
        app.installEventFilter(self)

    def watch_tab(self, tab: QWidget) -> None:
        """Stamp `first_page_drawn` at the first paint inside `tab` with no work deferred."""
        if self._tab is None:
            self._tab = tab

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Paint or self._done or not isinstance(watched, QWidget):
            return False
        if not self._shown:  # stamped now: at start-up the GUI thread imports right after
            self._shown = True
            startup_stamps.stamp("window_shown")
        tab = self._tab
        if tab is not None and (watched is tab or tab.isAncestorOf(watched)):
            from perfview.qt import deferred

            if not deferred.pending():
                self._done = True
                QTimer.singleShot(0, self._page_drawn)
        return False

    def _page_drawn(self) -> None:
        startup_stamps.stamp("first_page_drawn")
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
            if os.environ.get(QUIT_ENV):  # profiling the start-up: stop here
                app.quit()


__all__ = ["StartupWatch"]
