"""The main window: opens files into tabs, and composes the objects that do the rest.

Loading never blocks the GUI: `open_path` starts a `tasks.Task` (loader + summary tables in a
worker thread) and the status bar shows its progress with a Cancel button. A file that cannot
be loaded produces one message in the error bar at the top of the window (non-modal, so the
window stays usable and tests can read it) and the `load_failed` signal.

The rest belongs to objects the window builds and wires, each holding only what it needs:
the tabs (`window_tabs.TabsController`: adding, finding, closing, which is current), the
status bar (`window_status.StatusController`: tasks' progress and Cancel, messages, errors),
the commands on the current tab (`window_commands.TabCommands`), Compare… and the Profile menu
(`window_runs.RunsController`) and the menu bar (`window_menus.MenusController`, every
command of `actions.ACTIONS` calling the callable `MainWindow._handlers` gives it).
Views never drive the window: a job's view (`views/job_view.py`) asks for a rank's trace with
its `rank_opened` signal, which `open_folder` connects to `open_path_on`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from perfview import startup_stamps
from perfview.qt import export, remote_open, workspace_actions
from perfview.qt.document import Document
from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import example_path, name_filters
from perfview.qt.settings import Settings
from perfview.qt.tasks import LoadResult, Task, load_task
from perfview.qt.warmup import warm_imports, warm_in_background
from perfview.qt.widgets.info_bar import InfoBar
from perfview.qt.widgets.loading_tab import LoadingTab
from perfview.qt.widgets.welcome_bar import WelcomeBar
from perfview.qt.window_commands import TabCommands
from perfview.qt.window_menus import MenusController, show_about
from perfview.qt.window_runs import RunsController
from perfview.qt.window_status import StatusController
from perfview.qt.window_tabs import TabsController
from perfview.store import remote

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

    The window opens files and composes the objects that do the rest, each holding only what
    it needs: `tabs_controller` (the tabs), `status_controller` (progress, messages),
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
        self.runs_controller = RunsController(
            self, self.settings, tabs, self.open_path, self.open_compare
        )
        self.menus_controller = MenusController(
            self, self.settings, self._handlers(), self.open_path, self.commands.show_view
        )
        from perfview.qt.views.examples_menu import examples_menu  # Help ▸ Examples (issue 21)

        self.examples_menu = examples_menu(self, self.runs_controller.run_script)
        self.menus_controller.add_first("help", self.examples_menu)
        self.welcome_bar = WelcomeBar(
            open_file=self.open_dialog,
            open_folder=self.open_folder_dialog,
            record=self.runs_controller.run_script,
            examples=self.examples_menu,
            parent=self,
        )
        self._bars.insertWidget(1, self.welcome_bar)
        # How they hear of each other:
        status.task_done.connect(tabs.drop_placeholder)  # a load's placeholder tab goes
        tabs.current_changed.connect(self._on_current_tab)  # title, menus, status line
        self._restore_geometry()

    def _handlers(self) -> dict[str, Callable[[], object]]:
        """What each menu command of `actions.ACTIONS` calls, by its id."""
        tabs, commands, runs = self.tabs_controller, self.commands, self.runs_controller
        return {
            "open": self.open_dialog,
            "open_example": self.open_example,
            "open_folder": self.open_folder_dialog,
            "open_location": self.open_location,
            "compare": runs.compare_dialog,
            "reload": self.reload_current,
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

    # --- opening ---------------------------------------------------------------------------
    def open_dialog(self) -> None:
        """Files, or a URL typed in a platform dialog's location field (`s3://…`)."""
        urls, _filter = QFileDialog.getOpenFileUrls(
            self,
            "Open profile",
            QUrl.fromLocalFile(self.settings.last_folder()),
            ";;".join(name_filters()),
            supportedSchemes=remote_open.SCHEMES,
        )
        self.open_paths(remote_open.chosen(urls))

    def open_location(self) -> None:
        location = remote_open.ask_location(self)
        if location is not None:
            self.open_path(location)

    def open_paths(self, paths: list[str] | list[Path]) -> None:
        for path in paths:
            self.open_path(path)

    def open_example(self, *, welcome: bool = False) -> Task | None:
        """Open the bundled example; `welcome`: a bare first start, so the welcome bar says
        what it is and offers the ways to one's own profile."""
        if welcome:
            self.welcome_bar.show()
        return self.open_path(example_path(), remember=False)

    def open_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Open a log directory or a folder of per-rank traces", self.settings.last_folder()
        )
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> Task:
        """Open `folder` in the background: one multi-rank run as a Job tab, any other log
        directory (runs, workers, spans) in a run browser; the tab comes when ready."""
        from perfview.qt.views.job_view import JobOpening

        opening = JobOpening(folder, self)
        opening.opened.connect(self._add_job_tab)
        opening.failed.connect(
            lambda text, details: self.error_bar.show_message(text, "error", details)
        )
        self.status_controller.track_task(opening.task, opening.folder, opening.status)
        return opening.start()

    def _add_job_tab(self, view: Any) -> None:
        """Show a job's view (job_view.JobView) or a log directory's run browser in a tab; a
        rank or span it asks for opens as a file, a job run as a Job tab, two spans compared."""
        from perfview.qt.views.run_browser import RunBrowser

        self.tabs_controller.add_tab(view, view.tab_title, str(view.document.path))
        view.rank_opened.connect(self.open_path_on)
        if isinstance(view, RunBrowser):
            view.folder_opened.connect(self.open_folder)
            view.compare_requested.connect(self.open_compare)

    def open_path_on(self, path: str | Path, page: str) -> None:
        """Open `path` like any file, then show its page `page` (a job's rank: its Timeline)."""
        target = Path(path)

        def on_open(tab: Any) -> None:
            if Path(tab.document.path) == target:
                self.document_opened.disconnect(on_open)
                tab.show_view(page)

        self.document_opened.connect(on_open)
        self.open_path(target, remember=False)

    def open_compare(
        self, path_a: str | Path, path_b: str | Path, match: str = "basename"
    ) -> CompareJob | RunsCompareJob | JobsCompareJob:
        """Load two runs concurrently and show them in a compare tab (`compare_opened`); with
        several runs on a side (`;`-separated, File ▸ Compare…), a tab of verdicts per row."""
        from perfview.job_cli import is_job_source
        from perfview.qt.compare_runs import (
            JobsCompareJob,
            RunsCompareJob,
            RunsCompareTab,
            split_runs,
        )
        from perfview.qt.compare_tab import CompareJob, CompareTab

        track = self.status_controller.track_task
        runs_a, runs_b = split_runs(path_a), split_runs(path_b)
        if all(map(is_job_source, (*runs_a, *runs_b))):  # jobs: one, or several runs a side
            jobs = JobsCompareJob(runs_a, runs_b, track=track, parent=self)
            return self._show_comparison(
                jobs, RunsCompareTab, lambda _r: f"A: {path_a}\nB: {path_b}"
            )
        if len(runs_a) > 1 or len(runs_b) > 1:
            tip = "\n".join([*(f"A: {p}" for p in runs_a), *(f"B: {p}" for p in runs_b)])
            runs = RunsCompareJob(runs_a, runs_b, match, track=track, parent=self)
            return self._show_comparison(runs, RunsCompareTab, lambda _result: tip)
        job = CompareJob(path_a, path_b, match, track=track, parent=self)
        return self._show_comparison(job, CompareTab, lambda r: f"A: {r.a.path}\nB: {r.b.path}")

    def _show_comparison(self, job: Any, make_tab: Any, tip: Any) -> Any:
        """Start a comparison's job (two runs, or several a side): its tab once it is done
        (`compare_opened`), one sentence when a run cannot be read (`load_failed`)."""

        def done(result: Any) -> None:
            tab = make_tab(result)
            self.tabs_controller.add_tab(tab, tab.title, tip(result))
            self.status_controller.say(f"Compared {tab.title}", 8000)
            self.compare_opened.emit(tab)

        def failed(path: str, message: str) -> None:
            self.status_controller.error(f"perfview: cannot compare {path}: {message}")
            self.load_failed.emit(path, message)

        job.finished.connect(done)
        job.failed.connect(failed)
        job.cancelled.connect(lambda: self.load_cancelled.emit(str(job.paths[0])))
        job.start()
        return job

    def open_path(self, path: str | Path, *, remember: bool = True) -> Task | None:
        """Start loading `path` in the background in a placeholder tab the document replaces;
        a URL is fetched first (`_open_url`)."""
        if remote.is_url(path):
            return self._open_url(str(path), remember)
        path = Path(path)
        if path.suffix == ".perfview" and path.is_file():  # a workspace: its files and views
            workspace_actions.open_workspace(self, path)
            return None
        if path.is_dir():  # a run folder of per-rank traces (File ▸ Open Folder…, `perfview DIR`)
            return self.open_folder(path)
        existing = self.tabs_controller.tab_for_path(path)
        if existing is not None:
            self.tabs_controller.show(existing)
            self.document_opened.emit(existing)
            return None
        task = load_task(path)
        placeholder = LoadingTab(path, task)
        self.tabs_controller.add_tab(placeholder, path.name, str(path))
        task.progress.connect(placeholder.set_progress)
        task.finished.connect(lambda result, r=remember: self._on_loaded(result, r, placeholder))
        task.failed.connect(lambda message, t=task, p=path: self._on_failed(p, message, t))
        task.cancelled.connect(lambda p=path: self._on_cancelled(p))
        self.status_controller.track_task(task, path, f"Loading {path.name}…")
        task.start()
        return task

    def _open_url(self, url: str, remember: bool) -> Task:
        """Fetch a URL's file or folder into the cache in a worker, then open the local copy
        as any path (a folder: the run browser or a Job tab)."""
        task = remote_open.fetch_task(url)
        task.finished.connect(lambda local, r=remember: self.open_path(local, remember=r))
        task.failed.connect(lambda message, t=task: self._on_failed(url, message, t))
        task.cancelled.connect(lambda: self.load_cancelled.emit(url))
        self.status_controller.track_task(task, Path(url), f"Fetching {url}…")
        task.start()
        return task

    def reload_current(self) -> None:
        tab = self.tabs_controller.current_tab()
        if tab is None:
            return
        path = tab.document.path
        self.tabs_controller.close_current()
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
        document = Document(result)
        tab = DocumentTab(
            document, result.tables, self.settings, pages=result.pages, writes=result.writes
        )
        startup_stamps.stamp("tab_built")
        self.tabs_controller.add_tab(tab, document.title, str(document.path), at)
        if placeholder is not None:  # the document takes its place before anyone hears of it
            self.tabs_controller.remove(placeholder)
        menus = self.menus_controller
        tab.view_changed.connect(lambda _name, t=tab: menus.sync_view_menu(t))
        if remember:
            self.settings.add_recent(document.path)
            self.settings.set_last_folder(document.path.parent)
        if document.path != example_path():
            self.welcome_bar.hide()  # the user's own file: the example's caption is done
        from perfview.core.pages.summary import count_text, shown_counts

        nonzero = shown_counts(dict(result.bundle.counts))[:4]
        counts = ", ".join(count_text(k, v, note) for k, v, note in nonzero)
        self.status_controller.say(
            f"Loaded {document.title} in {result.seconds:.2f} s"
            + (f" ({counts})" if counts else ""),
            8000,
        )
        self.document_opened.emit(tab)

    def _on_failed(self, path: Path | str, message: str, task: Task) -> None:
        if self._gone():
            return
        self.status_controller.error(f"perfview: cannot open {path}: {message}", task.traceback)
        self.load_failed.emit(str(path), message)

    def _on_cancelled(self, path: Path) -> None:
        if self._gone():
            return
        self.status_controller.say(f"Loading {path.name} was cancelled", 5000)
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
