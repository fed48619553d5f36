"""The main window: composes the objects that open files into tabs and do the rest.

Loading never blocks the GUI: opening a path (`window_open.OpenController`) starts a
`tasks.Task` (loader + summary tables in a worker thread) and the status bar shows its
progress with a Cancel button. A file that cannot be loaded produces one message in the error
bar at the top of the window (non-modal, so the window stays usable and tests can read it)
and the `load_failed` signal.

The work belongs to objects the window builds and wires, each holding only what it needs:
opening files, folders, URLs and comparisons (`window_open.OpenController`, whose signals the
window passes on as its own), the tabs (`window_tabs.TabsController`: adding, finding,
closing, which is current), the status bar (`window_status.StatusController`: tasks'
progress and Cancel, messages, errors), the commands on the current tab
(`window_commands.TabCommands`), Compare… and the Profile menu (`window_runs.RunsController`)
and the menu bar (`window_menus.MenusController`, every command of `actions.ACTIONS` calling
the callable `MainWindow._handlers` gives it). Views never drive the window: a job's view
(`views/job_view.py`) asks for a rank's trace with its `rank_opened` signal, which
`OpenController` connects to `open_path_on`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from perfview.qt import export, workspace_actions
from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import example_path
from perfview.qt.settings import Settings
from perfview.qt.tasks import Task
from perfview.qt.warmup import warm_imports, warm_in_background
from perfview.qt.widgets.info_bar import InfoBar
from perfview.qt.widgets.welcome_bar import WelcomeBar
from perfview.qt.window_commands import TabCommands
from perfview.qt.window_menus import MenusController, show_about
from perfview.qt.window_open import OpenController
from perfview.qt.window_runs import RunsController
from perfview.qt.window_status import StatusController
from perfview.qt.window_tabs import TabsController

if TYPE_CHECKING:  # comparing loads its modules on first use, not at start-up
    from perfview.qt.compare_job import CompareJob
    from perfview.qt.compare_runs import JobsCompareJob, RunsCompareJob

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


class MainWindow(QMainWindow):
    """Signals: document_opened(DocumentTab), load_failed(path, message), load_cancelled(path),
    compare_opened(CompareTab), workspace_restored(Workspace).

    The window composes the objects that do the work, each holding only what it needs:
    `open_controller` (opening files, folders, URLs, comparisons; `open_path` and its kin
    here are its doors), `tabs_controller` (the tabs), `status_controller` (progress, messages),
    `commands` (what the Edit and View menus do to the current tab), `runs_controller`
    (Compare…, the Profile menu) and `menus_controller` (the menu bar, whose commands call
    the handlers of `_handlers`).
    """

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
        if warm:
            warm_imports()  # now, not on a load's worker thread, where it froze the GUI

        self.tabs = QTabWidget(self)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
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
        self._bars = layout  # the welcome bar joins under the error bar once menus exist
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        # The parts, each handed only what it needs; built in the order they depend on.
        status = self.status_controller = StatusController(self.statusBar(), self.error_bar)
        tabs = self.tabs_controller = TabsController(self.tabs, self.stack, self.welcome)
        self.commands = TabCommands(self, tabs, self.settings, status)
        opener = self.open_controller = OpenController(
            self, self.settings, tabs, status, self.error_bar, self._gone
        )
        self.runs_controller = RunsController(
            self, self.settings, tabs, opener.open_path, opener.open_compare
        )
        self.menus_controller = MenusController(
            self, self.settings, self._handlers(), opener.open_path, self.commands.show_view
        )
        from perfview.qt.views.examples_menu import examples_menu  # Help ▸ Examples (issue 21)

        self.examples_menu = examples_menu(self, self.runs_controller.run_script)
        self.menus_controller.add_first("help", self.examples_menu)
        self.welcome_bar = WelcomeBar(
            open_file=opener.open_dialog,
            open_folder=opener.open_folder_dialog,
            record=self.runs_controller.run_script,
            examples=self.examples_menu,
            parent=self,
        )
        self._bars.insertWidget(1, self.welcome_bar)
        # How they hear of each other:
        status.task_done.connect(tabs.drop_placeholder)  # a load's placeholder tab goes
        tabs.current_changed.connect(self._on_current_tab)  # title, menus, status line
        opener.document_added.connect(self._on_document_added)
        for said, passed_on in (  # what the opener says is the window's word (its API)
            (opener.document_opened, self.document_opened),
            (opener.load_failed, self.load_failed),
            (opener.load_cancelled, self.load_cancelled),
            (opener.compare_opened, self.compare_opened),
        ):
            said.connect(passed_on)
        self._restore_geometry()

    def _handlers(self) -> dict[str, Callable[[], object]]:
        """What each menu command of `actions.ACTIONS` calls, by its id."""
        tabs, commands, runs = self.tabs_controller, self.commands, self.runs_controller
        opener = self.open_controller
        return {
            "open": opener.open_dialog,
            "open_example": self.open_example,
            "open_folder": opener.open_folder_dialog,
            "open_location": opener.open_location,
            "compare": runs.compare_dialog,
            "reload": opener.reload_current,
            "export_table": commands.export_current_table,
            "export_view": partial(export.export_view, self),
            "open_workspace": partial(workspace_actions.open_workspace, self),
            "save_workspace": partial(workspace_actions.save_workspace, self),
            "close": tabs.close_current,
            "quit": self.close,
            "copy_table": commands.copy_current_table,
            "find": commands.focus_filter,
            "next_view": commands.next_view,
            "prev_view": commands.previous_view,
            "snakeviz": commands.open_in_snakeviz,
            "run_script": runs.run_script,
            "rerun_last": runs.rerun_last,
            "show_runs": runs.show_runs,
            "about": partial(show_about, self),
        }

    def _on_current_tab(self, tab: DocumentTab | None) -> None:
        self.setWindowTitle(f"{tab.document.title} — perfview" if tab else "perfview")
        self.menus_controller.follow(tab)
        self.status_controller.show_document(tab)

    def _gone(self) -> bool:
        """True once the window's C++ side (or its status bar's) is deleted: load tasks
        outlive a closed window and must then do nothing (`StatusController.gone`)."""
        return not shiboken6.isValid(self) or self.status_controller.gone()

    # --- construction ----------------------------------------------------------------------
    def warm_later(self, delay_ms: int = 300) -> None:
        """Import what big traces need (`warmup.warm_imports`) on a background thread once the
        files given at start-up are open and drawn: earlier, those imports (and loading
        numba's code) took CPU and the GIL from the first page (a 10k-function profile's
        was drawn 0.2-0.5 s later). A big trace's load warms them itself."""

        def when_idle() -> None:
            if self._gone():
                return
            if self.status_controller.is_loading():  # its first page comes first
                QTimer.singleShot(delay_ms, self, when_idle)
            else:
                warm_in_background()

        QTimer.singleShot(delay_ms, self, when_idle)
        self.status_controller.watch_compile()  # shows it if the scanner compiles meanwhile

    def _restore_geometry(self) -> None:
        geometry = self.settings.geometry("main")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.geometry("main_state")
        if state is not None:
            self.restoreState(state)

    # --- opening (window_open.OpenController does it; these are the window's own words) -----
    def open_path(self, path: str | Path, *, remember: bool = True) -> Task | None:
        """Start loading `path` in the background in a placeholder tab the document replaces;
        a URL is fetched first, a folder opens as a job or a run browser."""
        return self.open_controller.open_path(path, remember=remember)

    def open_paths(self, paths: list[str] | list[Path]) -> None:
        self.open_controller.open_paths(paths)

    def open_folder(self, folder: str | Path) -> Task:
        return self.open_controller.open_folder(folder)

    def open_compare(
        self, path_a: str | Path, path_b: str | Path, match: str = "basename"
    ) -> CompareJob | RunsCompareJob | JobsCompareJob:
        return self.open_controller.open_compare(path_a, path_b, match)

    def open_example(self, *, welcome: bool = False) -> Task | None:
        """Open the bundled example; `welcome`: a bare first start, so the welcome bar says
        what it is and offers the ways to one's own profile."""
        if welcome:
            self.welcome_bar.show()
        return self.open_path(example_path(), remember=False)

    def _on_document_added(self, tab: DocumentTab) -> None:
        """A tab built from a load: the View menu follows its page; the user's own file
        hides the example's caption."""
        menus = self.menus_controller
        tab.view_changed.connect(lambda _name, t=tab: menus.sync_view_menu(t))
        if tab.document.path != example_path():
            self.welcome_bar.hide()  # the user's own file: the example's caption is done

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
        if not self.runs_controller.may_quit():
            event.ignore()
            return
        self.status_controller.cancel_loads()
        for tab in self.tabs_controller.document_tabs():
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
