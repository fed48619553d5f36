"""Run slow core work (loading, aggregating) off the GUI thread, reporting through signals.

A `Task` wraps a plain function `fn(progress) -> result` and runs it in `QThreadPool`. The
function gets a Qt-free `progress(fraction, message)` callable (the same one loaders accept);
calling it from the worker emits the `progress` signal, throttled so a loader that reports every
few thousand events does not flood the GUI's event queue. `cancel()` makes the *next* progress
call raise `LoadCancelled` inside the worker, which is how loaders are interrupted cleanly: they
already let that exception propagate. Results only ever reach the GUI through queued signals.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer, Signal

from perfview import preload
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.core.model.progress import Progress
from perfview.core.pages import first_tables
from perfview.documents import OpenDocument, OpenOptions, open_document, plan
from perfview.loaders.base import Where
from perfview.qt import let_go
from perfview.qt.warmup import warm_imports

# Tasks started and not yet released (`Task._release`, on the GUI thread after `done`).
_RUNNING: set[Task] = set()


class Task(QObject):
    """One function call in the thread pool. Connect to the signals, then call `start()`.

    Signals (always delivered on the GUI thread):
        progress(float, str): fraction in [0, 1] and a short message.
        finished(object): the function's return value.
        failed(str): a user-readable sentence (LoadError text, or the exception for bugs).
        cancelled(): the user cancelled; nothing was produced.
        done(): emitted last, after exactly one of finished/failed/cancelled.
    """

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    done = Signal()

    def __init__(self, fn: Callable[[Progress], Any], name: str = "", parent: Any = None) -> None:
        super().__init__(parent)
        self.fn = fn
        self.name = name
        self.traceback = ""  # full traceback of an unexpected error, for a Details box
        self._cancel = threading.Event()
        self._last_emit = 0.0
        self._last_fraction = -1.0
        self._running = False
        self._ran = threading.Event()  # set once the worker is out of `_run` (its last emit)
        # Released on the GUI thread (queued), after the result slots ran.
        self.done.connect(self._release)

    @property
    def is_running(self) -> bool:
        return self._running

    def start(self, pool: QThreadPool | None = None) -> None:
        """Queue the function on `pool` (the global pool by default).

        A started task belongs to the application object (its Qt parent, unless it has one)
        and is deleted on the GUI thread once `done` was delivered (`_release`). Left to
        Python, its last reference could drop on any thread: the worker's, or one running a
        garbage collection, and a QObject destroyed there races the GUI thread (a deadlock
        in one suite run). It also held its function's closure, and with it the caller's
        objects: every closed tab stayed in memory with its bundle.
        """
        self._running = True
        _RUNNING.add(self)
        if self.parent() is None and (app := QCoreApplication.instance()) is not None:
            self.setParent(app)
        (pool or QThreadPool.globalInstance()).start(self._run)

    def cancel(self) -> None:
        """Ask the worker to stop at its next progress report."""
        self._cancel.set()

    def _report(self, fraction: float, message: str) -> None:
        # Runs on the worker thread, inside the loader.
        if self._cancel.is_set():
            raise LoadCancelled("cancelled by the user")
        now = time.monotonic()
        if now - self._last_emit < 0.05 and abs(fraction - self._last_fraction) < 0.01:
            return
        self._last_emit = now
        self._last_fraction = fraction
        self.progress.emit(float(fraction), str(message))

    def _run(self) -> None:
        try:
            self._call()
        finally:
            self._ran.set()

    def _call(self) -> None:
        try:
            if self._cancel.is_set():
                raise LoadCancelled("cancelled before start")
            result = self.fn(self._report)
        except LoadCancelled:
            self._finish(self.cancelled.emit)
        except LoadError as exc:
            reason = str(exc)
            self.traceback = str(getattr(exc, "details", ""))  # set by the load guard below
            self._finish(lambda: self.failed.emit(reason))
        except Exception as exc:  # a bug in a loader must not take the app down
            self.traceback = traceback.format_exc()
            message = f"unexpected error: {type(exc).__name__}: {exc}"
            self._finish(lambda: self.failed.emit(message))
        else:
            self._finish(lambda: self.finished.emit(result))

    def _finish(self, emit: Callable[[], None]) -> None:
        self._running = False
        if not shiboken6.isValid(self):  # the app quit while this ran: nobody to tell
            return
        try:
            emit()
            self.done.emit()
        except RuntimeError:  # deleted between the check and the emit (app teardown)
            pass

    def _release(self) -> None:
        self.fn = _spent  # its closure may hold a tab's bundle: not a moment longer
        _RUNNING.discard(self)
        self._delete_once_out()

    def _delete_once_out(self) -> None:
        """`deleteLater` here, on the thread that owns it (see `start`), once the worker is
        out of `_run`. `_release` is `done`'s first receiver, so it can run while the worker
        is still inside `done.emit()`, posting the calls of the receivers after it: a task
        deleted then lost them (a Query page's Stop never came back, and a test waiting for
        `done` waited forever: 1-5 runs in 20 of tests/qt/test_query_view.py)."""
        if self._ran.is_set():
            self.deleteLater()
        else:
            QTimer.singleShot(1, self._delete_once_out)


def _spent(_progress: Progress) -> None:
    raise RuntimeError("this task has run already")


# What a load task hands to the GUI: the document opened off the GUI thread.
LoadResult = OpenDocument


def load_and_prepare(
    path: Path,
    progress: Progress,
    tables: Callable[[Bundle], Sequence[str]] | None = None,
    pages: Callable[[Bundle], Sequence[str]] | None = None,
) -> OpenDocument:
    """`documents.open_document` as the window opens a file: parsed without holding the GIL
    (or in a child), the tables `tables(bundle)` and the pages `pages(bundle)` prepared with
    it, its store entries written once the tab is drawn, the bundle taken from the start-up
    preload when that parsed it meanwhile."""
    options = OpenOptions(
        where=Where.GIL_FREE,
        tables=tables,
        pages=pages,
        gated=True,
        preloaded=_preloaded,
        before_big_load=warm_imports if pages is not None else None,
    )
    try:
        return open_document(path, progress=progress, options=options)
    except (LoadError, LoadCancelled):
        raise
    except Exception as exc:  # the documented last resort (loaders.internal_error)
        from perfview.loaders import internal_error

        error = LoadError(internal_error(exc))
        error.details = traceback.format_exc()  # type: ignore[attr-defined]
        raise error from exc


def _preloaded(path: Path) -> Bundle | None:
    """The bundle the start-up preload parsed while the window started, if it did."""
    return preload.take(path) if preload.pending() else None


def load_task(
    path: str | Path,
    tables: Callable[[Bundle], Sequence[str]] | None = first_tables,
    pages: Callable[[Bundle], Sequence[str]] | None = plan.first_pages,
) -> Task:
    """A Task that opens `path` and prepares its tables and first pages (not started yet)."""
    target = Path(path)
    return Task(lambda progress: _paused_load(target, progress, tables, pages), name=str(target))


def _paused_load(
    path: Path,
    progress: Progress,
    tables: Callable[[Bundle], Sequence[str]] | None,
    pages: Callable[[Bundle], Sequence[str]] | None,
) -> OpenDocument:
    with let_go.collector_paused():
        return load_and_prepare(path, progress, tables, pages)


def cancel_all() -> None:
    """Cancel every task started and not yet released (the window is gone: see
    `app._end_workers`)."""
    for task in list(_RUNNING):
        task.cancel()


def wait_all(timeout_ms: int = 30000) -> bool:
    """Block until the global pool is idle (used at exit so no worker outlives the app)."""
    return bool(QThreadPool.globalInstance().waitForDone(timeout_ms))


__all__ = ["LoadResult", "Task", "cancel_all", "load_and_prepare", "load_task", "wait_all"]
