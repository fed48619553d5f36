"""The main window: one tab per open document, menus, background loading, drag and drop.

Loading never blocks the GUI: `open_path` starts a `tasks.Task` (loader + summary tables in a
worker thread) and the status bar shows its progress with a Cancel button. A file that cannot
be loaded produces one message in the error bar at the top of the window (non-modal, so the
window stays usable and tests can read it) and the `load_failed` signal.

Menu commands on the current tab (`window_menus.py`), Compare and the Profile menu
(`window_runs.py`), the status bar's task tracking (`window_status.py`) and the tabs' own
bookkeeping (finding, closing, switching: `window_tabs.py`) are mixins in their own modules,
so this one stays about opening files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from perfview import startup_stamps
from perfview.core.pages import first_tables
from perfview.qt import actions as action_table
from perfview.qt import export, workspace_actions
from perfview.qt.document import Document
from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import example_path, name_filters
from perfview.qt.settings import Settings
from perfview.qt.tasks import LoadResult, Task, first_page, load_task
from perfview.qt.warmup import warm_imports, warm_in_background
from perfview.qt.widgets.info_bar import InfoBar
from perfview.qt.widgets.loading_tab import LoadingTab
from perfview.qt.window_menus import WindowMenusMixin
from perfview.qt.window_runs import WindowRunsMixin
from perfview.qt.window_status import StatusTasksMixin
from perfview.qt.window_tabs import WindowTabsMixin

if TYPE_CHECKING:
    from perfview.qt.run_dock import RunDock

# The window's GIL switch interval: a worker running Python keeps the GIL that long each time
# the GUI thread asks for it (a plot built beside one: 3.4x its time at 5 ms, 2.1x at 1 ms).
GUI_SWITCH_INTERVAL_S = 0.001

WELCOME = (
    "<h2>perfview</h2><p>Open a cProfile <code>.prof</code>, a torch.profiler / Chrome trace "
    "<code>.json(.gz)</code>, an mprof <code>.dat</code>, a memory_profiler report, a speedscope "
    "or collapsed-stacks profile, a pyinstrument session, a memray capture, a CUDA memory "
    "snapshot, or a folder of per-rank traces.</p>"
    "<p><b>File ▸ Open…</b> (Ctrl+O) or drop files on this window.</p>"
)


class MainWindow(WindowTabsMixin, WindowMenusMixin, WindowRunsMixin, StatusTasksMixin, QMainWindow):
    """Signals: document_opened(DocumentTab), load_failed(path, message), load_cancelled(path)."""

    document_opened = Signal(object)
    workspace_restored = Signal(object)  # every tab of a workspace is back (workspace_actions)
    load_failed = Signal(str, str)
    load_cancelled = Signal(str)
    compare_opened = Signal(object)  # a compare_tab.CompareTab

    def __init__(
        self, settings: Settings | None = None, parent: QWidget | None = None, *, warm: bool = True
    ) -> None:
        """`warm=False` leaves the big modules' import to `warm_later` (the start-up path)."""
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), GUI_SWITCH_INTERVAL_S))
        self.settings = settings if settings is not None else Settings()
        self.setWindowTitle("perfview")
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        self._tasks: dict[Task, str] = {}
        self._run_dock: RunDock | None = None  # built on first use (window_runs.run_dock)
        if warm:
            warm_imports()  # now, not on a load's worker thread, where it froze the GUI

        self.tabs = QTabWidget(self)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_current_tab)
        self.welcome = QLabel(WELCOME, self)
        self.welcome.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.welcome.setWordWrap(True)  # the list of formats must never widen the window
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.error_bar = InfoBar(self)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.error_bar)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self._build_status_bar()
        self.actions_by_id = action_table.build_actions(self)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.menus = action_table.build_menus(
            self, self.actions_by_id, {"file:open_example": self.recent_menu}
        )
        self.view_menu = self.menus["view"]
        from perfview.qt.views.examples_menu import examples_menu  # Help ▸ Examples (issue 21)

        self.examples_menu = examples_menu(
            self, lambda: self.run_dock().controller.run_script(self)
        )
        self.menus["help"].insertMenu(self.menus["help"].actions()[0], self.examples_menu)
        self._add_export_action()
        export.install(self)  # File ▸ Export View… (qt/export.py)
        workspace_actions.install(self)  # File ▸ Open/Save Workspace…
        self._view_actions = QActionGroup(self)
        self._view_actions.setExclusive(True)
        self._view_menu_items: list[QAction] = []
        self._fill_recent_menu()
        self._update_actions()
        self._restore_geometry()

    # --- construction ----------------------------------------------------------------------
    def warm_later(self, delay_ms: int = 300) -> None:
        """Import what big traces need (`warmup.warm_imports`) on a background thread once the
        files given at start-up are open and drawn: earlier, those imports (and loading
        numba's code) took CPU and the GIL from the first page (a 10k-function profile's
        was drawn 0.2-0.5 s later). A big trace's load warms them itself."""

        def when_idle() -> None:
            if self._gone():
                return
            if self._tasks:  # a load is running: its first page comes first
                QTimer.singleShot(delay_ms, self, when_idle)
            else:
                warm_in_background()

        QTimer.singleShot(delay_ms, self, when_idle)
        self.watch_compile()  # says so in the status bar if the scanner compiles meanwhile

    def _restore_geometry(self) -> None:
        geometry = self.settings.geometry("main")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.geometry("main_state")
        if state is not None:
            self.restoreState(state)

    # --- opening ---------------------------------------------------------------------------
    def open_dialog(self) -> None:
        paths, _filter = QFileDialog.getOpenFileNames(
            self, "Open profile", self.settings.last_folder(), ";;".join(name_filters())
        )
        self.open_paths(paths)

    def open_paths(self, paths: list[str] | list[Path]) -> None:
        for path in paths:
            self.open_path(path)

    def open_example(self) -> Task | None:
        return self.open_path(example_path(), remember=False)

    def open_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Open a folder of per-rank traces", self.settings.last_folder()
        )
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> Task:
        """Open `folder` as a multi-rank job in the background and show the Job tab."""
        from perfview.qt.views.job_view import open_job_folder

        return open_job_folder(self, folder)

    def open_bundle(self, bundle: Any) -> DocumentTab:
        """Show an already loaded bundle (a rank of a Ranks tab) in its own tab, on its Timeline."""
        existing = self.tab_for_path(Path(bundle.path))
        if existing is None:
            self._on_loaded(LoadResult(Path(bundle.path), bundle), remember=False)
            existing = self.tab_for_path(Path(bundle.path))
        assert existing is not None
        self.tabs.setCurrentWidget(existing)
        existing.show_view("timeline")
        return existing

    def open_path(self, path: str | Path, *, remember: bool = True) -> Task | None:
        """Start loading `path` in the background in a placeholder tab the document replaces."""
        path = Path(path)
        if path.suffix == ".perfview" and path.is_file():  # a workspace: its files and views
            workspace_actions.open_workspace(self, path)
            return None
        if path.is_dir():  # a run folder of per-rank traces (File ▸ Open Folder…, `perfview DIR`)
            return self.open_folder(path)
        existing = self.tab_for_path(path)
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            self.document_opened.emit(existing)
            return None
        task = load_task(path, first_tables, first_page)
        self._tasks[task] = str(path)
        placeholder = LoadingTab(path, task)
        index = self.tabs.addTab(placeholder, path.name)
        self.tabs.setTabToolTip(index, str(path))
        self.tabs.setCurrentIndex(index)
        self.stack.setCurrentWidget(self.tabs)
        task.progress.connect(placeholder.set_progress)
        task.progress.connect(lambda f, m, p=path: self._on_progress(p, f, m))
        task.finished.connect(lambda result, r=remember: self._on_loaded(result, r, placeholder))
        task.failed.connect(lambda message, t=task, p=path: self._on_failed(p, message, t))
        task.cancelled.connect(lambda p=path: self._on_cancelled(p))
        task.done.connect(lambda t=task: self._on_task_done(t))
        self._set_busy(True, f"Loading {path.name}…")
        task.start()
        return task

    def reload_current(self) -> None:
        tab = self.current_tab()
        if tab is None:
            return
        path = tab.document.path
        self.close_tab(self.tabs.indexOf(tab))
        self.open_path(path)

    def _on_loaded(
        self, result: LoadResult, remember: bool, placeholder: LoadingTab | None = None
    ) -> None:
        if self._gone():
            result.writes.open()
            return
        at = -1
        if placeholder is not None:
            at = self.tabs.indexOf(placeholder) if shiboken6.isValid(placeholder) else -1
            if at < 0:
                result.writes.open()
                return  # the user closed the loading tab just as the load finished
        startup_stamps.stamp("loaded")
        document = Document(result.bundle)
        tab = DocumentTab(
            document, result.tables, self.settings, pages=result.pages, writes=result.writes
        )
        startup_stamps.stamp("tab_built")
        index = (
            self.tabs.insertTab(at, tab, document.title)
            if at >= 0
            else self.tabs.addTab(tab, document.title)
        )
        self.tabs.setTabToolTip(index, str(document.path))
        self.tabs.setCurrentIndex(index)
        if placeholder is not None:  # the document takes its place before anyone hears of it
            self.tabs.removeTab(self.tabs.indexOf(placeholder))
            placeholder.deleteLater()
        self.stack.setCurrentWidget(self.tabs)
        tab.view_changed.connect(lambda _name, t=tab: self._sync_view_menu(t))
        if remember:
            self.settings.add_recent(document.path)
            self.settings.set_last_folder(document.path.parent)
        from perfview.core.pages.summary import shown_counts

        nonzero = shown_counts(dict(result.bundle.counts))[:4]
        counts = ", ".join(
            f"{v:,} {k.replace('_', ' ')}" + (f" ({note})" if note else "")
            for k, v, note in nonzero
        )
        self.statusBar().showMessage(
            f"Loaded {document.title} in {result.seconds:.2f} s"
            + (f" ({counts})" if counts else ""),
            8000,
        )
        self.document_opened.emit(tab)

    def _on_failed(self, path: Path, message: str, task: Task) -> None:
        if self._gone():
            return
        text = f"perfview: cannot open {path}: {message}"
        self.error_bar.show_message(text, "error", task.traceback)
        self.statusBar().showMessage(text, 10000)
        self.load_failed.emit(str(path), message)

    def _on_cancelled(self, path: Path) -> None:
        if self._gone():
            return
        self.statusBar().showMessage(f"Loading {path.name} was cancelled", 5000)
        self.load_cancelled.emit(str(path))

    # --- drag and drop ---------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _local_paths(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:
        if _local_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = _local_paths(event)
        if paths:
            event.acceptProposedAction()
            self.open_paths(paths)

    # --- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self._run_dock is not None and self._run_dock.is_running():
            if not self.confirm_quit_during_run():
                event.ignore()
                return
            self._run_dock.stop_for_quit()
        self.cancel_loads()
        for tab in self.document_tabs():
            tab.save_state()
        self.settings.set_geometry("main", self.saveGeometry())
        self.settings.set_geometry("main_state", self.saveState())
        self.settings.sync()
        super().closeEvent(event)


def _local_paths(event: Any) -> list[str]:
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


__all__ = ["MainWindow"]
