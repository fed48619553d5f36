"""The main window's tabs: finding a document's tab, closing one, and what follows a switch.

Why its own module: which tab is current, and what closing or switching one changes (the
title, the View menu, which actions apply, the status line), is bookkeeping independent of how
files are opened. As a mixin of :class:`perfview.qt.main_window.MainWindow` it keeps that
module about opening files. This module never imports ``main_window``: the attributes it uses
are declared below for the type checker and set by ``MainWindow.__init__``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMainWindow, QStackedWidget, QTabWidget

from perfview.core.model.units import format_ns
from perfview.qt import let_go
from perfview.qt.document_tab import DocumentTab
from perfview.qt.snakeviz_server import SnakevizServer
from perfview.qt.tasks import Task
from perfview.qt.widgets.loading_tab import LoadingTab

# At runtime a plain mixin (MainWindow puts QMainWindow after it); the type checker sees the
# QMainWindow it is mixed into.
if TYPE_CHECKING:
    _Base = QMainWindow
else:
    _Base = object


class WindowTabsMixin(_Base):
    """The document tabs of the window (`tabs`), with the welcome page when there are none."""

    tabs: QTabWidget
    stack: QStackedWidget
    welcome: QLabel
    info_label: QLabel
    actions_by_id: dict[str, QAction]

    if TYPE_CHECKING:

        def _sync_view_menu(self, tab: DocumentTab | None) -> None: ...

    def document_tabs(self) -> list[DocumentTab]:
        tabs = (self.tabs.widget(i) for i in range(self.tabs.count()))
        return [t for t in tabs if isinstance(t, DocumentTab)]

    def current_tab(self) -> DocumentTab | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, DocumentTab) else None

    def tab_for_path(self, path: Path) -> DocumentTab | None:
        target = path.resolve() if path.exists() else path
        for tab in self.document_tabs():
            if tab.document.path.resolve() == target:
                return tab
        return None

    def _drop_placeholder(self, task: Task) -> None:
        """Remove the loading tab of a finished, failed or cancelled load."""
        for i in range(self.tabs.count()):
            widget = self.tabs.widget(i)
            if isinstance(widget, LoadingTab) and widget.task is task:
                self.tabs.removeTab(i)
                widget.deleteLater()
                break
        if not self.tabs.count():
            self.stack.setCurrentWidget(self.welcome)

    def close_tab(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if widget is None:
            return
        if isinstance(widget, LoadingTab):  # closing a file still loading cancels its load
            widget.task.cancel()
        keep: list[object] = []
        if isinstance(widget, DocumentTab):
            widget.save_state()
            for server in widget.findChildren(SnakevizServer):
                server.stop()
            keep = let_go.big_buffers(widget.document.bundle)
        self.tabs.removeTab(index)
        let_go.when_deleted(widget, keep)  # its memory returns now, not at some later collection
        widget.deleteLater()
        if not self.tabs.count():
            self.stack.setCurrentWidget(self.welcome)
        self._update_actions()

    def close_current(self) -> None:
        if self.tabs.count():
            self.close_tab(self.tabs.currentIndex())

    def _on_current_tab(self, _index: int) -> None:
        tab = self.current_tab()
        self.setWindowTitle(f"{tab.document.title} — perfview" if tab else "perfview")
        self._sync_view_menu(tab)
        self._update_actions()
        if tab is not None:
            bundle = tab.document.bundle
            span = f", {format_ns(bundle.duration_ns)}" if bundle.duration_ns else ""
            self.info_label.setText(f"{bundle.format}{span}")
        else:
            self.info_label.setText("")

    def _update_actions(self) -> None:
        tab = self.current_tab()
        keys = ("close", "reload", "copy_table", "export_table", "next_view", "prev_view", "find")
        for key in keys:
            self.actions_by_id[key].setEnabled(tab is not None)
        pstats = tab is not None and tab.document.bundle.format == "pstats"
        self.actions_by_id["snakeviz"].setEnabled(pstats)


__all__ = ["WindowTabsMixin"]
