"""The window's tabs: adding one, finding a document's tab, closing one, which is current.

Why its own object: which tab is current, and closing or adding one (the welcome page when
none is left, a closed tab's memory given back), is bookkeeping independent of how files are
opened. `TabsController` holds only the tab widget and the stack that shows it or the welcome
page; the window title, the View menu and the status line follow `current_changed`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QStackedWidget, QTabWidget, QWidget

from perfview.qt import let_go
from perfview.qt.document_tab import DocumentTab
from perfview.qt.snakeviz_server import SnakevizServer
from perfview.qt.tasks import Task
from perfview.qt.widgets.loading_tab import LoadingTab


class TabsController(QObject):
    """The document tabs of the window (`tabs`), with the welcome page when there are none.

    Signal: current_changed(DocumentTab | None), when another tab (or none) becomes current
    and after a tab is closed.
    """

    current_changed = Signal(object)

    def __init__(self, tabs: QTabWidget, stack: QStackedWidget, welcome: QWidget) -> None:
        super().__init__(tabs)
        self.tabs = tabs
        self.stack = stack
        self.welcome = welcome
        tabs.tabCloseRequested.connect(self.close_tab)
        tabs.currentChanged.connect(self._on_current)

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

    def add_tab(self, widget: QWidget, title: str, tip: str, at: int = -1) -> int:
        """Show `widget` as the current tab (inserted at `at` when given); its index."""
        tabs = self.tabs
        index = tabs.insertTab(at, widget, title) if at >= 0 else tabs.addTab(widget, title)
        self.tabs.setTabToolTip(index, tip)
        self.tabs.setCurrentIndex(index)
        self.stack.setCurrentWidget(self.tabs)
        return index

    def show(self, widget: QWidget) -> None:
        """Make the tab holding `widget` current."""
        self.tabs.setCurrentWidget(widget)

    def remove(self, widget: QWidget) -> None:
        """Take `widget`'s tab out and delete it (a loading placeholder a document replaced)."""
        self.tabs.removeTab(self.tabs.indexOf(widget))
        widget.deleteLater()
        self._welcome_when_empty()

    def drop_placeholder(self, task: Task) -> None:
        """Remove the loading tab of a finished, failed or cancelled load."""
        for i in range(self.tabs.count()):
            widget = self.tabs.widget(i)
            if isinstance(widget, LoadingTab) and widget.task is task:
                self.tabs.removeTab(i)
                widget.deleteLater()
                break
        self._welcome_when_empty()

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
        self._welcome_when_empty()
        self.current_changed.emit(self.current_tab())

    def close_current(self) -> None:
        if self.tabs.count():
            self.close_tab(self.tabs.currentIndex())

    def _welcome_when_empty(self) -> None:
        if not self.tabs.count():
            self.stack.setCurrentWidget(self.welcome)

    def _on_current(self, _index: int) -> None:
        self.current_changed.emit(self.current_tab())


__all__ = ["TabsController"]
