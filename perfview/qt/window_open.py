"""Opening into the window: files, folders, URLs, workspaces and comparisons, each into a tab.

Why its own object: how a path becomes a tab (a placeholder while a worker loads it, a URL
fetched first, a folder opened as a job or a run browser, a workspace's files, two runs
compared) is the window's one long job, and it is independent of the menus, the status line
and which tab is current. `OpenController` holds the window (the dialogs' and background
jobs' parent), the settings (recent files, last folder), the tabs and the status bar, and
says what happened through its signals, which the window passes on as its own
(`MainWindow.document_opened`, …). Loading never blocks the GUI: `open_path` starts a
`tasks.Task` (loader + summary tables in a worker thread) and the status bar shows its
progress with a Cancel button; a file that cannot be loaded is one message in the error bar
and `load_failed`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtWidgets import QFileDialog, QMainWindow

from perfview import startup_stamps
from perfview.qt import remote_open, workspace_actions
from perfview.qt.document import Document
from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import name_filters
from perfview.qt.settings import Settings
from perfview.qt.tasks import LoadResult, Task, load_task
from perfview.qt.widgets.info_bar import InfoBar
from perfview.qt.widgets.loading_tab import LoadingTab
from perfview.qt.window_status import StatusController
from perfview.qt.window_tabs import TabsController
from perfview.store import remote

if TYPE_CHECKING:  # comparing loads its modules on first use, not at start-up
    from perfview.qt.compare_job import CompareJob
    from perfview.qt.compare_runs import JobsCompareJob, RunsCompareJob


class OpenController(QObject):
    """Opens paths, URLs, folders and comparisons into the tabs of `window`.

    Signals: document_opened(DocumentTab) (a new tab, or the one already showing the path),
    document_added(DocumentTab) (a tab just built from a load, before document_opened),
    load_failed(path, message), load_cancelled(path), compare_opened(CompareTab).
    `gone()` says the window is deleted: load tasks outlive a closed window and must then do
    nothing.
    """

    document_opened = Signal(object)
    document_added = Signal(object)
    load_failed = Signal(str, str)
    load_cancelled = Signal(str)
    compare_opened = Signal(object)

    def __init__(
        self,
        window: QMainWindow,
        settings: Settings,
        tabs: TabsController,
        status: StatusController,
        error_bar: InfoBar,
        gone: Callable[[], bool],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.tabs = tabs
        self.status = status
        self.error_bar = error_bar
        self.gone = gone

    def open_dialog(self) -> None:
        """Files, or a URL typed in a platform dialog's location field (`s3://…`)."""
        urls, _filter = QFileDialog.getOpenFileUrls(
            self.window,
            "Open profile",
            QUrl.fromLocalFile(self.settings.last_folder()),
            ";;".join(name_filters()),
            supportedSchemes=remote_open.SCHEMES,
        )
        self.open_paths(remote_open.chosen(urls))

    def open_location(self) -> None:
        location = remote_open.ask_location(self.window)
        if location is not None:
            self.open_path(location)

    def open_paths(self, paths: list[str] | list[Path]) -> None:
        for path in paths:
            self.open_path(path)

    def open_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self.window,
            "Open a log directory or a folder of per-rank traces",
            self.settings.last_folder(),
        )
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str | Path) -> Task:
        """Open `folder` in the background: one multi-rank run as a Job tab, any other log
        directory (runs, workers, spans) in a run browser; the tab comes when ready."""
        from perfview.qt.views.job_view import JobOpening

        opening = JobOpening(folder, self.window)
        opening.opened.connect(self._add_job_tab)
        opening.failed.connect(
            lambda text, details: self.error_bar.show_message(text, "error", details)
        )
        self.status.track_task(opening.task, opening.folder, opening.status)
        return opening.start()

    def _add_job_tab(self, view: Any) -> None:
        """Show a job's view (job_view.JobView) or a log directory's run browser in a tab; a
        rank or span it asks for opens as a file, a job run as a Job tab, two spans compared."""
        from perfview.qt.views.run_browser import RunBrowser

        self.tabs.add_tab(view, view.tab_title, str(view.document.path))
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

        track = self.status.track_task
        runs_a, runs_b = split_runs(path_a), split_runs(path_b)
        if all(map(is_job_source, (*runs_a, *runs_b))):  # jobs: one, or several runs a side
            jobs = JobsCompareJob(runs_a, runs_b, track=track, parent=self.window)
            return self._show_comparison(
                jobs, RunsCompareTab, lambda _r: f"A: {path_a}\nB: {path_b}"
            )
        if len(runs_a) > 1 or len(runs_b) > 1:
            tip = "\n".join([*(f"A: {p}" for p in runs_a), *(f"B: {p}" for p in runs_b)])
            runs = RunsCompareJob(runs_a, runs_b, match, track=track, parent=self.window)
            return self._show_comparison(runs, RunsCompareTab, lambda _result: tip)
        job = CompareJob(path_a, path_b, match, track=track, parent=self.window)
        return self._show_comparison(job, CompareTab, lambda r: f"A: {r.a.path}\nB: {r.b.path}")

    def _show_comparison(self, job: Any, make_tab: Any, tip: Any) -> Any:
        """Start a comparison's job (two runs, or several a side): its tab once it is done
        (`compare_opened`), one sentence when a run cannot be read (`load_failed`)."""

        def done(result: Any) -> None:
            tab = make_tab(result)
            self.tabs.add_tab(tab, tab.title, tip(result))
            self.status.say(f"Compared {tab.title}", 8000)
            self.compare_opened.emit(tab)

        def failed(path: str, message: str) -> None:
            self.status.error(f"perfview: cannot compare {path}: {message}")
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
            workspace_actions.open_workspace(self.window, path)
            return None
        if path.is_dir():  # a run folder of per-rank traces (File ▸ Open Folder…, `perfview DIR`)
            return self.open_folder(path)
        existing = self.tabs.tab_for_path(path)
        if existing is not None:
            self.tabs.show(existing)
            self.document_opened.emit(existing)
            return None
        task = load_task(path)
        placeholder = LoadingTab(path, task)
        self.tabs.add_tab(placeholder, path.name, str(path))
        task.progress.connect(placeholder.set_progress)
        task.finished.connect(lambda result, r=remember: self._on_loaded(result, r, placeholder))
        task.failed.connect(lambda message, t=task, p=path: self._on_failed(p, message, t))
        task.cancelled.connect(lambda p=path: self._on_cancelled(p))
        self.status.track_task(task, path, f"Loading {path.name}…")
        task.start()
        return task

    def _open_url(self, url: str, remember: bool) -> Task:
        """Fetch a URL's file or folder into the cache in a worker, then open the local copy
        as any path (a folder: the run browser or a Job tab)."""
        task = remote_open.fetch_task(url)
        task.finished.connect(lambda local, r=remember: self.open_path(local, remember=r))
        task.failed.connect(lambda message, t=task: self._on_failed(url, message, t))
        task.cancelled.connect(lambda: self.load_cancelled.emit(url))
        self.status.track_task(task, Path(url), f"Fetching {url}…")
        task.start()
        return task

    def reload_current(self) -> None:
        tab = self.tabs.current_tab()
        if tab is None:
            return
        path = tab.document.path
        self.tabs.close_current()
        self.open_path(path)

    def _on_loaded(
        self, result: LoadResult, remember: bool, placeholder: LoadingTab | None = None
    ) -> None:
        if self.gone():
            result.writes.open()
            return
        at = -1
        if placeholder is not None:
            at = self.tabs.tabs.indexOf(placeholder) if shiboken6.isValid(placeholder) else -1
            if at < 0:
                result.writes.open()
                return  # the user closed the loading tab just as the load finished
        startup_stamps.stamp("loaded")
        document = Document(result)
        tab = DocumentTab(
            document, result.tables, self.settings, pages=result.pages, writes=result.writes
        )
        startup_stamps.stamp("tab_built")
        self.tabs.add_tab(tab, document.title, str(document.path), at)
        if placeholder is not None:  # the document takes its place before anyone hears of it
            self.tabs.remove(placeholder)
        self.document_added.emit(tab)  # the window's menus and welcome bar follow it
        if remember:
            self.settings.add_recent(document.path)
            self.settings.set_last_folder(document.path.parent)
        from perfview.core.pages.summary import count_text, shown_counts

        nonzero = shown_counts(dict(result.bundle.counts))[:4]
        counts = ", ".join(count_text(k, v, note) for k, v, note in nonzero)
        self.status.say(
            f"Loaded {document.title} in {result.seconds:.2f} s"
            + (f" ({counts})" if counts else ""),
            8000,
        )
        self.document_opened.emit(tab)

    def _on_failed(self, path: Path | str, message: str, task: Task) -> None:
        if self.gone():
            return
        self.status.error(f"perfview: cannot open {path}: {message}", task.traceback)
        self.load_failed.emit(str(path), message)

    def _on_cancelled(self, path: Path) -> None:
        if self.gone():
            return
        self.status.say(f"Loading {path.name} was cancelled", 5000)
        self.load_cancelled.emit(str(path))


__all__ = ["OpenController"]
