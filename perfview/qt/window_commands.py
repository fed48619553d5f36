"""The commands that act on the current tab: switch its view, copy or export its table,
focus its filter, open it in snakeviz.

Why its own object: these only read the current tab (through `TabsController`) and the
settings and report through `StatusController`; they hold no loading state and build no
menus (`window_menus.py` points the menu items at these methods).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QLineEdit, QWidget

from perfview.qt.settings import Settings
from perfview.qt.snakeviz_server import SnakevizServer
from perfview.qt.window_status import StatusController
from perfview.qt.window_tabs import TabsController


class TabCommands(QObject):
    """View / Edit commands and snakeviz on the window's current tab."""

    def __init__(
        self, parent: QWidget, tabs: TabsController, settings: Settings, status: StatusController
    ) -> None:
        super().__init__(parent)
        self.dialog_parent = parent  # what file dialogs open over
        self.tabs = tabs
        self.settings = settings
        self.status = status

    # --- views -----------------------------------------------------------------------------
    def show_view(self, name: str) -> bool:
        tab = self.tabs.current_tab()
        return tab.show_view(name) if tab is not None else False

    def next_view(self, step: int = 1) -> None:
        tab = self.tabs.current_tab()
        if tab is not None and tab.tabs.count():
            tab.tabs.setCurrentIndex((tab.tabs.currentIndex() + step) % tab.tabs.count())

    def previous_view(self) -> None:
        self.next_view(-1)

    # --- edit ------------------------------------------------------------------------------
    def _current_view_widget(self) -> QWidget | None:
        tab = self.tabs.current_tab()
        return tab.view_widget(tab.current_view()) if tab is not None else None

    def copy_current_table(self) -> str:
        widget = self._current_view_widget()
        table = _find_child_with(widget, "copy_table")
        return str(table.copy_table()) if table is not None else ""

    def export_current_table(self, path: str | Path | None = None) -> Path | None:
        """Write the current view's table as CSV (asking where when `path` is None).

        Written atomically (temp file + rename), so an interrupted export never leaves a
        half-written file behind, nor destroys the file it was replacing.
        """
        from perfview.core.atomic import write_text

        table = _find_child_with(self._current_view_widget(), "table_csv")
        if table is None:
            self.status.say("This view has no table to export", 5000)
            return None
        if path is None:
            tab = self.tabs.current_tab()
            name = f"{tab.document.path.stem}-{tab.current_view()}.csv" if tab else "table.csv"
            start = str(Path(self.settings.last_folder()) / name)
            path, _filter = QFileDialog.getSaveFileName(
                self.dialog_parent, "Export table", start, "CSV (*.csv)"
            )
            if not path:
                return None
        target = Path(path)
        try:
            write_text(target, str(table.table_csv()))
        except OSError as exc:
            self.status.error_bar.show_message(
                f"perfview: cannot write {target}: {exc.strerror or exc}", "error"
            )
            return None
        self.status.say(f"Table exported to {target}", 5000)
        return target

    def focus_filter(self) -> None:
        widget = self._current_view_widget()
        if widget is None:
            return
        edit = widget.findChild(QLineEdit)
        if edit is not None:
            edit.setFocus()
            edit.selectAll()

    # --- snakeviz --------------------------------------------------------------------------
    def open_in_snakeviz(self) -> SnakevizServer | None:
        """Serve the current pstats document with snakeviz and open the browser on it. The
        server belongs to the tab: closing the tab stops it."""
        tab = self.tabs.current_tab()
        if tab is None or tab.document.bundle.profile is None:
            return None
        server = tab.findChild(SnakevizServer)
        if server is not None and server.url:
            QDesktopServices.openUrl(QUrl(server.url))
            return server
        server = SnakevizServer(tab.document.bundle.path, tab)
        server.url_ready.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))
        server.url_ready.connect(lambda url: self.status.say(f"snakeviz: {url}"))
        server.failed.connect(lambda message: self.status.error_bar.show_message(message, "error"))
        server.start()
        return server


def _find_child_with(widget: QWidget | None, method: str) -> Any:
    """`widget` or its first descendant that has `method` (e.g. a TableView's copy_table)."""
    if widget is None:
        return None
    if hasattr(widget, method):
        return widget
    for child in widget.findChildren(QWidget):
        if hasattr(child, method):
            return child
    return None


__all__ = ["TabCommands"]
