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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer, Signal

from perfview import preload
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.core.model.progress import Progress
from perfview.loaders.cache_writes import NOW, WriteGate
from perfview.qt import document_ahead, let_go
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


@dataclass
class LoadResult:
    """What a load task hands to the GUI: the bundle and tables already computed off-thread."""

    path: Path
    bundle: Bundle
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    seconds: float = 0.0
    # core.pages.prepare by page name; a `document_ahead.Pending` for a page still laid out
    pages: dict[str, Any] = field(default_factory=dict)
    # opened by the tab once it is drawn: the load's cache entries are written from then on
    writes: WriteGate = NOW


# A load's cache entries wait for its tab to be drawn (`LoadResult.writes`); a result that no
# tab took (cancelled meanwhile) lets them start after this long.
WRITE_GATE_CAP_S = 30.0
WARM_MIN_BYTES = 16_000_000  # smaller files load in well under a second: no need to warm


def _big(path: Path) -> bool:
    """True for a file whose load takes long enough that the imports a big trace needs are
    worth doing first (a small file's load would only wait for numba's import)."""
    try:
        return path.stat().st_size >= WARM_MIN_BYTES
    except OSError:
        return False


def load_and_prepare(
    path: Path,
    progress: Progress,
    views_for: Callable[[Bundle], Sequence[str]] | None = None,
    pages_for: Callable[[Bundle], Sequence[str]] | None = None,
) -> LoadResult:
    """Load `path`, then build the call tree, the summary tables its views will show and
    the data of the pages `pages_for(bundle)` names (`core.pages.prepare`).

    Doing the derived work here too (not on first display) keeps a large trace's first paint
    from freezing the window: the GUI thread then only builds widgets. The cache entries it
    makes are written once `LoadResult.writes` opens: the tab opens it when it is drawn.
    """
    started = time.perf_counter()
    if pages_for is not None and _big(path):
        warm_imports()
    writes = WriteGate(WRITE_GATE_CAP_S)
    try:
        return _load_and_prepare(path, progress, views_for, pages_for, writes, started)
    except BaseException:
        writes.open()  # no tab will: whatever the load stored is written now
        raise


def _load_and_prepare(
    path: Path,
    progress: Progress,
    views_for: Callable[[Bundle], Sequence[str]] | None,
    pages_for: Callable[[Bundle], Sequence[str]] | None,
    writes: WriteGate,
    started: float,
) -> LoadResult:
    from perfview.loaders import LoadOptions, Where, load

    try:
        bundle = preload.take(path) if preload.pending() else None  # parsed while we started
        if bundle is None:
            bundle = load(
                path,
                progress=lambda f, m: progress(0.9 * f, m),
                options=LoadOptions(where=Where.GIL_FREE, write_gate=writes),
            )
    except (LoadError, LoadCancelled):
        raise
    except Exception as exc:  # the documented last resort (loaders.internal_error)
        from perfview.loaders import internal_error

        error = LoadError(internal_error(exc))
        error.details = traceback.format_exc()  # type: ignore[attr-defined]
        raise error from exc
    with document_ahead.heap_kept(bundle):  # the first pages' temporaries reuse the heap
        tables, pages = _derived(bundle, path, views_for, pages_for, progress, writes)
    progress(1.0, "done")
    return LoadResult(Path(path), bundle, tables, time.perf_counter() - started, pages, writes)


def _derived(
    bundle: Bundle,
    path: Path,
    views_for: Callable[[Bundle], Sequence[str]] | None,
    pages_for: Callable[[Bundle], Sequence[str]] | None,
    progress: Progress,
    writes: WriteGate,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """What the tab shows first, derived from the loaded `bundle`: the call tree when the
    first page draws from it, the summary tables of its views and its first pages' data (the
    Timeline's on a thread of its own, `document_ahead`)."""
    tables: dict[str, pd.DataFrame] = {}
    first = list(pages_for(bundle)) if pages_for is not None else []
    # the Timeline is laid out on a thread of its own from now on, beside the first page
    big = pages_for is not None and _big(path)
    ahead = document_ahead.start(bundle, first, writes) if big else {}
    if bundle.format == "trace" and bundle.tree is None and _tree_first(bundle, first):
        progress(0.92, "building the call tree")
        try:
            from perfview.core.analysis import bundle_tree

            bundle_tree.tree_for(bundle)
        except ImportError:
            pass
    names = list(views_for(bundle)) if views_for is not None else []
    for i, view in enumerate(names):
        progress(0.93 + 0.04 * i / max(len(names), 1), f"summarising {view}")
        try:
            from perfview.core.pages import summary

            tables[view] = summary.summarize(bundle, view)
        except (ImportError, LoadError, ValueError, KeyError):
            continue  # the tab computes (and reports) it again when shown
    pages: dict[str, Any] = {**ahead, **prepare_pages(bundle, tables, first, progress, writes)}
    return tables, pages


def first_page(bundle: Bundle) -> list[str]:
    """The pages whose data the load task prepares: the one the tab opens on. The Timeline
    is laid out beside it on a thread of its own (`document_ahead`, a big file) or by the
    tab once it is drawn, so a reopened 1 GB trace's first page does not wait for it."""
    from perfview.core import pages as page_registry

    tabs = page_registry.tabs_for(bundle)
    names = [tabs[0].name] if tabs else []
    return [n for n in names if page_registry.needs_data(n, bundle)]


# Page widgets drawn from the document's call tree (`Document.tree`).
TREE_WIDGETS = frozenset({"icicle", "tree", "bottom-up", "sandwich", "callers"})


def uses_tree(name: str) -> bool:
    """True when page `name`'s widget is drawn from the call tree."""
    from perfview.core import pages as page_registry

    page = page_registry.PAGES.get(name)
    return page is not None and (page.widget or "") in TREE_WIDGETS


def _tree_first(bundle: Bundle, prepared: Sequence[str]) -> bool:
    """True when the page a trace's tab opens on is drawn from its call tree. Otherwise the
    tree (a second on a 1 GB trace) waits until a page that needs it is shown: the first
    page is drawn that much sooner, on the first open and on every reopen."""
    from perfview.core import pages as page_registry

    tabs = page_registry.tabs_for(bundle)
    return bool(tabs) and (uses_tree(tabs[0].name) or any(uses_tree(n) for n in prepared))


def prepare_pages(
    bundle: Bundle,
    tables: dict[str, pd.DataFrame],
    names: Sequence[str],
    progress: Progress,
    writes: WriteGate = NOW,
) -> dict[str, Any]:
    """`core.pages.prepare_first` for each page in `names`; a page that fails is left out (its
    tab computes it again when shown, and reports the error in place)."""
    from perfview.core import pages as page_registry

    pages: dict[str, Any] = {}
    for i, name in enumerate(names):
        progress(0.97 + 0.03 * i / max(len(names), 1), f"preparing the {name} page")
        try:
            if name == "overview" and page_registry.needs_data(name, bundle):
                # a reopened big trace's Overview comes from the cache (its tables cost
                # 0.2-1.5 s at 1 GB); a first open stores them once the tab is drawn
                from perfview.loaders import page_cache

                pages[name] = page_cache.overview_data(bundle, writes)
                continue
            pages[name] = page_registry.prepare_first(name, bundle, tables)
        except (LoadCancelled, KeyboardInterrupt):
            raise
        except Exception:  # shown in place by the tab, not fatal to the load
            continue
    return pages


def load_task(
    path: str | Path,
    views_for: Callable[[Bundle], Sequence[str]] | None = None,
    pages_for: Callable[[Bundle], Sequence[str]] | None = None,
) -> Task:
    """A Task that loads `path` and prepares its tables and first pages (not started yet)."""
    target = Path(path)
    return Task(
        lambda progress: _paused_load(target, progress, views_for, pages_for),
        name=str(target),
    )


def _paused_load(
    path: Path,
    progress: Progress,
    views_for: Callable[[Bundle], Sequence[str]] | None,
    pages_for: Callable[[Bundle], Sequence[str]] | None,
) -> LoadResult:
    with let_go.collector_paused():
        return load_and_prepare(path, progress, views_for, pages_for)


def wait_all(timeout_ms: int = 30000) -> bool:
    """Block until the global pool is idle (used at exit so no worker outlives the app)."""
    return bool(QThreadPool.globalInstance().waitForDone(timeout_ms))


__all__ = [
    "LoadResult",
    "Task",
    "first_page",
    "load_and_prepare",
    "load_task",
    "prepare_pages",
    "uses_tree",
    "wait_all",
]
