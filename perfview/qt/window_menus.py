"""The window's menu commands that act on the current tab: View, Edit, recent files, Help.

Why its own module: these handlers (switching views, copying and exporting the current table,
the recent-files menu, About, snakeviz) only read the current tab and the settings; they hold
no loading state. As a mixin of :class:`perfview.qt.main_window.MainWindow` they keep that
module about loading and tabs. This module never imports ``main_window``: the attributes it
uses are declared below for the type checker and set by ``MainWindow.__init__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMainWindow, QMenu, QMessageBox, QWidget

from perfview import __version__
from perfview.qt.document_tab import DocumentTab
from perfview.qt.settings import Settings
from perfview.qt.snakeviz_server import SnakevizServer
from perfview.qt.widgets.info_bar import InfoBar

# At runtime a plain mixin (MainWindow puts QMainWindow after it); the type checker sees the
# QMainWindow methods it calls (statusBar, ...).
if TYPE_CHECKING:
    _Base = QMainWindow
else:
    _Base = object


class WindowMenusMixin(_Base):
    """View / Edit / recent files / Help / snakeviz commands of the main window."""

    settings: Settings
    error_bar: InfoBar
    menus: dict[str, QMenu]
    actions_by_id: dict[str, QAction]
    view_menu: QMenu
    recent_menu: QMenu
    _view_actions: QActionGroup
    _view_menu_items: list[QAction]

    if TYPE_CHECKING:

        def current_tab(self) -> DocumentTab | None: ...

        def open_path(self, path: str | Path, *, remember: bool = True) -> Any: ...

    def open_in_snakeviz(self) -> SnakevizServer | None:
        """Serve the current pstats document with snakeviz and open the browser on it. The
        server belongs to the tab: closing the tab stops it."""
        tab = self.current_tab()
        if tab is None or tab.document.bundle.format != "pstats":
            return None
        server = tab.findChild(SnakevizServer)
        if server is not None and server.url:
            QDesktopServices.openUrl(QUrl(server.url))
            return server
        server = SnakevizServer(tab.document.bundle.path, tab)
        server.url_ready.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))
        server.url_ready.connect(lambda url: self.statusBar().showMessage(f"snakeviz: {url}"))
        server.failed.connect(lambda message: self.error_bar.show_message(message, "error"))
        server.start()
        return server

    # --- view menu -------------------------------------------------------------------------
    def _sync_view_menu(self, tab: DocumentTab | None) -> None:
        """Rebuild the per-document part of the View menu (one checkable item per view)."""
        for action in self._view_menu_items:
            self.view_menu.removeAction(action)
            self._view_actions.removeAction(action)
            action.deleteLater()
        self._view_menu_items = []
        if tab is None:
            return
        self._view_menu_items.append(self.view_menu.addSeparator())
        current = tab.current_view()
        for i, (name, title) in enumerate(tab.view_titles()):
            action = QAction(title, self)
            action.setCheckable(True)
            action.setChecked(name == current)
            action.setData(name)
            if i < 9:
                action.setShortcut(f"Ctrl+{i + 1}")
            action.triggered.connect(lambda _c=False, n=name: self.show_view(n))
            self._view_actions.addAction(action)
            self.view_menu.addAction(action)
            self._view_menu_items.append(action)

    def show_view(self, name: str) -> bool:
        tab = self.current_tab()
        return tab.show_view(name) if tab is not None else False

    def next_view(self, step: int = 1) -> None:
        tab = self.current_tab()
        if tab is not None and tab.tabs.count():
            tab.tabs.setCurrentIndex((tab.tabs.currentIndex() + step) % tab.tabs.count())

    def previous_view(self) -> None:
        self.next_view(-1)

    # --- edit commands ---------------------------------------------------------------------
    def _current_view_widget(self) -> QWidget | None:
        tab = self.current_tab()
        return tab.view_widget(tab.current_view()) if tab is not None else None

    def copy_current_table(self) -> str:
        widget = self._current_view_widget()
        table = _find_child_with(widget, "copy_table")
        return str(table.copy_table()) if table is not None else ""

    def _add_export_action(self) -> None:
        """File ▸ Export Table as CSV…, placed before Close (kept out of the shared action
        table so the handler's optional path argument stays a window concern)."""
        action = QAction("&Export Table as CSV…", self)
        action.setStatusTip("Save every visible row of the current table to a CSV file")
        action.triggered.connect(lambda _checked=False: self.export_current_table())
        self.menus["file"].insertAction(self.actions_by_id["close"], action)
        self.actions_by_id["export_table"] = action

    def export_current_table(self, path: str | Path | None = None) -> Path | None:
        """Write the current view's table as CSV (asking where when `path` is None).

        Written atomically (temp file + rename), so an interrupted export never leaves a
        half-written file behind, nor destroys the file it was replacing.
        """
        from perfview.core.atomic import write_text

        table = _find_child_with(self._current_view_widget(), "table_csv")
        if table is None:
            self.statusBar().showMessage("This view has no table to export", 5000)
            return None
        if path is None:
            tab = self.current_tab()
            name = f"{tab.document.path.stem}-{tab.current_view()}.csv" if tab else "table.csv"
            start = str(Path(self.settings.last_folder()) / name)
            path, _filter = QFileDialog.getSaveFileName(self, "Export table", start, "CSV (*.csv)")
            if not path:
                return None
        target = Path(path)
        try:
            write_text(target, str(table.table_csv()))
        except OSError as exc:
            message = f"perfview: cannot write {target}: {exc.strerror or exc}"
            self.error_bar.show_message(message, "error")
            return None
        self.statusBar().showMessage(f"Table exported to {target}", 5000)
        return target

    def focus_filter(self) -> None:
        widget = self._current_view_widget()
        if widget is None:
            return
        edit = widget.findChild(QLineEdit)
        if edit is not None:
            edit.setFocus()
            edit.selectAll()

    # --- recent files ----------------------------------------------------------------------
    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files()
        for i, path in enumerate(files):
            action = self.recent_menu.addAction(f"&{(i + 1) % 10}  {Path(path).name}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear List", self._clear_recent)
        self.recent_menu.setEnabled(bool(files))

    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self._fill_recent_menu()

    # --- help ------------------------------------------------------------------------------
    def show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("About perfview")
        box.setText(
            f"<b>perfview {__version__}</b><br>A native viewer for cProfile, torch.profiler / "
            "Chrome traces, mprof and memory_profiler output."
        )
        box.open()


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


__all__ = ["WindowMenusMixin"]
