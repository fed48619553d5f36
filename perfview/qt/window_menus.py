"""The window's menu bar: the commands of `actions.ACTIONS`, recent files, the View menu's
items for the current document, which commands apply, and Help ▸ About.

Why its own object: the menus only point at what other objects do (each command is a
callable the window hands in, `actions.build_actions`) and follow the current tab; they hold
no loading state. `MenusController` holds the menu bar's window, the settings (recent files)
and two callables: `open_path` for a recent file and `show_view` for a View menu item.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMainWindow, QMenu, QMessageBox, QWidget

from perfview import __version__
from perfview.qt import actions as action_table
from perfview.qt.document_tab import DocumentTab
from perfview.qt.settings import Settings

# Commands that need a document in the current tab; snakeviz needs a cProfile one.
NEED_A_DOCUMENT = (
    "close", "reload", "copy_table", "export_table", "next_view", "prev_view", "find"
)  # fmt: skip


class MenusController(QObject):
    """The menus of `window`, each command calling its handler (see `actions.ACTIONS`)."""

    def __init__(
        self,
        window: QMainWindow,
        settings: Settings,
        handlers: Mapping[str, Callable[[], object]],
        open_path: Callable[[str], object],
        show_view: Callable[[str], object],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._open_path = open_path
        self._show_view = show_view
        self.actions_by_id = action_table.build_actions(window, handlers)
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.aboutToShow.connect(self.fill_recent_menu)
        self.menus = action_table.build_menus(
            window, self.actions_by_id, {"file:open_example": self.recent_menu}
        )
        self.view_menu = self.menus["view"]
        self._view_actions = QActionGroup(self)
        self._view_actions.setExclusive(True)
        self._view_menu_items: list[QAction] = []
        self.fill_recent_menu()
        self.follow(None)

    def add_first(self, menu_key: str, submenu: QMenu) -> None:
        """Put `submenu` at the top of menu `menu_key` (Help ▸ Examples)."""
        menu = self.menus[menu_key]
        menu.insertMenu(menu.actions()[0], submenu)

    def follow(self, tab: DocumentTab | None) -> None:
        """The current tab is now `tab`: its views in the View menu, the commands it allows."""
        self.sync_view_menu(tab)
        for key in NEED_A_DOCUMENT:
            self.actions_by_id[key].setEnabled(tab is not None)
        pstats = tab is not None and tab.document.bundle.profile is not None
        self.actions_by_id["snakeviz"].setEnabled(pstats)

    # --- view menu -------------------------------------------------------------------------
    def sync_view_menu(self, tab: DocumentTab | None) -> None:
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
            action.triggered.connect(lambda _c=False, n=name: self._show_view(n))
            self._view_actions.addAction(action)
            self.view_menu.addAction(action)
            self._view_menu_items.append(action)

    # --- recent files ----------------------------------------------------------------------
    def fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files()
        for i, path in enumerate(files):
            action = self.recent_menu.addAction(f"&{(i + 1) % 10}  {Path(path).name}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _c=False, p=path: self._open_path(p))
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear List", self._clear_recent)
        self.recent_menu.setEnabled(bool(files))

    def _clear_recent(self) -> None:
        self.settings.clear_recent()
        self.fill_recent_menu()


def show_about(parent: QWidget) -> QMessageBox:
    """Help ▸ About perfview (non-modal)."""
    box = QMessageBox(parent)
    box.setWindowTitle("About perfview")
    box.setText(
        f"<b>perfview {__version__}</b><br>A native viewer for cProfile, torch.profiler / "
        "Chrome traces, mprof and memory_profiler output."
    )
    box.open()
    return box


__all__ = ["NEED_A_DOCUMENT", "MenusController", "show_about"]
