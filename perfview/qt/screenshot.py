"""Render the main window to PNG files: `perfview --screenshot` and
`scripts/fixtures/screenshots.py`.

Everything is driven by signals: open the file, wait for `document_opened` (or
`load_failed`), switch views, let the event loop settle, then `window.grab()`. No sleeps, so the
same code works offscreen, under Xvfb and in tests.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from perfview.core.model.errors import LoadError
from perfview.documents import workspace as ws
from perfview.qt import deferred
from perfview.qt.main_window import MainWindow
from perfview.store import remote


class Shootable(Protocol):
    """What a screenshot plan reads: a document tab, or a folder's view (`FolderTab`)."""

    def view_names(self) -> list[str]: ...

    def show_view(self, name: str) -> Any: ...


Plan = Callable[[Shootable], list[tuple[str, Path]]]

SETTLE_ROUNDS = 3


def settle(rounds: int = SETTLE_ROUNDS) -> None:
    """Let the views' deferred work, layouts, resizes and pyqtgraph's range updates run."""
    app = QApplication.instance()
    deferred.flush()
    for _ in range(rounds):
        if app is not None:
            app.processEvents()


def grab(window: MainWindow, out: str | Path) -> bool:
    """Render the whole window (menus, status bar included) and save it: SVG (vector shapes
    and text, `qt/export.py`) when OUT ends in .svg, else PNG."""
    from perfview.qt.export import export_widget

    settle()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return export_widget(window, out)


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "view"


class ScreenshotJob(QObject):
    """Open `path` in `window`, then for each requested view grab the window to a PNG.

    `views` None means the first view of the file's format; "all" every view. `outputs`
    maps a view name to the output path (see `single` / `every`). `finished(code)` fires once:
    0 on success, 2 when the file cannot be opened or a view does not exist.
    """

    finished = Signal(int)

    def __init__(
        self,
        window: MainWindow,
        path: str | Path,
        outputs: Plan,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.url = str(path) if remote.is_url(path) else None  # fetched first (`_fetch`)
        self.path = Path(path)
        self.outputs = outputs
        self.log = log or (lambda text: print(text, file=sys.stderr))
        self.written: list[Path] = []
        self.code: int | None = None

    def start(self) -> None:
        if self.url is not None:
            self._fetch(self.url)
            return
        if self.path.is_dir():  # a Job tab or a run browser, not a document (FolderTab)
            self._open_folder()
            return
        if self.path.suffix == ws.SUFFIX and not self._workspace_opens():
            self._done(2)
            return
        self.window.document_opened.connect(self._on_opened)
        self.window.load_failed.connect(self._on_failed)
        self.window.load_cancelled.connect(lambda _p: self._done(2))
        if self.window.open_path(self.path, remember=False) is None and self.code is None:
            tab = self.window.tabs_controller.tab_for_path(self.path)
            if tab is not None:  # already open (document_opened was emitted synchronously)
                self._on_opened(tab)

    def _fetch(self, url: str) -> None:
        """A URL: its file or folder fetched into the cache in a worker, then pictured as the
        local path it became."""
        from perfview.qt.remote_open import fetch_task

        task = fetch_task(url)

        def fetched(local: Path) -> None:
            self.url, self.path = None, local
            self.start()

        def failed(message: str) -> None:
            self.log(f"perfview: cannot open {url}: {message}")
            self._done(2)

        task.finished.connect(fetched)
        task.failed.connect(failed)
        task.start()

    def _workspace_opens(self) -> bool:
        """Whether the workspace has a file to picture; else say why (the window would only
        show its error bar, and no document would ever open to end the job)."""
        try:
            workspace = ws.read(self.path)
        except LoadError as exc:
            self.log(f"perfview: cannot open workspace {self.path}: {exc}")
            return False
        if not workspace.tabs or len(ws.missing(workspace)) == len(workspace.tabs):
            self.log(f"perfview: cannot take a screenshot of {self.path}: none of its files exist")
            return False
        return True

    def _open_folder(self) -> None:
        from perfview.qt.views.job_view import JobOpening

        self.window.open_folder(self.path)
        # The opening's signals, not its task's: a task that fails at once (an empty folder)
        # has emitted from its worker before anyone here could connect, while the opening
        # emits on the GUI thread, from the event loop that has not turned yet.
        for opening in self.window.findChildren(JobOpening):  # after the window's own slot
            opening.opened.connect(lambda view: self._on_opened(FolderTab(view)))
            opening.failed.connect(lambda text, _details: self._folder_failed(text))

    def _folder_failed(self, text: str) -> None:
        self.log(text)  # the opening's sentence names the folder already
        self._done(2)

    def _on_failed(self, path: str, message: str) -> None:
        self.log(f"perfview: cannot open {path}: {message}")
        self._done(2)

    def _on_opened(self, tab: Shootable) -> None:
        if self.code is not None:
            return
        try:
            plan = self.outputs(tab)
        except ValueError as exc:
            self.log(f"perfview: {exc}")
            self._done(2)
            return
        # Grab on the next event-loop turns so the new tab is laid out and painted first.
        QTimer.singleShot(0, lambda: self._shoot(tab, plan))

    def _shoot(self, tab: Shootable, plan: list[tuple[str, Path]]) -> None:
        for view, out in plan:
            tab.show_view(view)
            if not grab(self.window, out):
                self.log(f"perfview: cannot write {out}")
                self._done(2)
                return
            self.written.append(out)
        self._done(0)

    def _done(self, code: int) -> None:
        if self.code is None:
            self.code = code
            self.finished.emit(code)


class FolderTab:
    """A folder's view (a Job tab's `JobView`, a log directory's `RunBrowser`) seen as a
    document tab by the screenshot plans: its pages by name, one brought to front."""

    def __init__(self, view: Any) -> None:
        self.view = view

    def view_names(self) -> list[str]:
        names = getattr(self.view, "page_names", None)
        return list(names()) if names is not None else ["runs"]

    def show_view(self, name: str) -> None:
        show = getattr(self.view, "show_page", None)
        if show is not None:
            show(name)


def single(out: str | Path, view: str | None) -> Plan:
    """Plan for `--screenshot OUT [--view VIEW]`: one picture of VIEW (default: the first)."""

    def plan(tab: Shootable) -> list[tuple[str, Path]]:
        names = tab.view_names()
        if not names:
            raise ValueError("this file has no views to show")
        name = view or names[0]
        if name not in names:
            raise ValueError(f"no view {name!r} for this file (views: {', '.join(names)})")
        return [(name, Path(out))]

    return plan


def every(outdir: str | Path, stem: str) -> Plan:
    """Plan for scripts/fixtures/screenshots.py: OUTDIR/STEM-VIEW.png for every view of the file."""

    def plan(tab: Shootable) -> list[tuple[str, Path]]:
        return [
            (n, Path(outdir) / f"{safe_name(stem)}-{safe_name(n)}.png") for n in tab.view_names()
        ]

    return plan


def run(
    window: MainWindow,
    path: str | Path,
    outputs: Plan,
) -> tuple[int, list[Path]]:
    """Open `path`, take the planned screenshots, return (exit code, files written).

    Runs the application's event loop until the job finishes.
    """
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    job = ScreenshotJob(window, path, outputs)
    job.finished.connect(lambda code: app.exit(code))
    window.show()
    QTimer.singleShot(0, job.start)
    code = app.exec()
    return (job.code if job.code is not None else code), job.written


def screenshot_compare(
    window: MainWindow, path_a: str, path_b: str, out: str | Path, view: str | None = None
) -> int:
    """`perfview --screenshot OUT --compare A B [--view V]`: 0 when written, 2 on failure.

    Signal-driven like `screenshot.run`: open the comparison, wait for `compare_opened`,
    switch to the sub-tab, grab the window on the next event-loop turn.
    """
    app = QApplication.instance()
    assert app is not None
    codes: list[int] = []

    def finish(code: int) -> None:
        if not codes:
            codes.append(code)
            app.exit(code)

    def shoot(tab: Any) -> None:
        if view is not None and not tab.show_view(view):
            views = ", ".join(tab.view_names())
            print(f"perfview: no compare view {view!r} (views: {views})", file=sys.stderr)
            finish(2)
            return
        finish(0 if grab(window, out) else 2)

    def failed(path: str, message: str) -> None:
        print(f"perfview: cannot compare {path}: {message}", file=sys.stderr)
        finish(2)

    window.compare_opened.connect(lambda tab: QTimer.singleShot(0, lambda: shoot(tab)))
    window.load_failed.connect(failed)
    window.load_cancelled.connect(lambda _path: finish(2))
    window.show()
    QTimer.singleShot(0, lambda: window.open_compare(path_a, path_b))
    code = app.exec()
    return codes[0] if codes else int(code)


__all__ = [
    "ScreenshotJob",
    "every",
    "grab",
    "run",
    "safe_name",
    "screenshot_compare",
    "settle",
    "single",
]
