"""A closed tab (or comparison) leaves nothing alive that holds its bundle: a finished task
lets go of its function, work a tab never started goes with it, and a comparison's job lets
go of both runs. Loads hold automatic collection off, and put it back as they found it."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer

from perfview.qt import let_go, tasks
from perfview.qt.document_tab import DocumentTab
from perfview.qt.main_window import MainWindow
from perfview.qt.tasks import Task
from tests.conftest import DATA

pytestmark = pytest.mark.gui


def test_paused_holds_collection_off_and_puts_it_back() -> None:
    assert gc.isenabled()
    with let_go.collector_paused(), let_go.collector_paused():  # loads nest
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with let_go.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_a_done_task_lets_go_of_its_function_on_the_gui_thread(qtbot: object) -> None:
    class Captured:
        pass

    captured = Captured()
    ref = weakref.ref(captured)
    task = Task(lambda _progress, kept=captured: kept.__class__.__name__)
    del captured
    gc.disable()  # freed by reference counting alone, not by a collection
    try:
        with qtbot.waitSignal(task.finished, timeout=10_000) as blocker:  # type: ignore[attr-defined]
            task.start()
        assert blocker.args == ["Captured"]
        qtbot.waitUntil(lambda: ref() is None and not shiboken6.isValid(task), timeout=10_000)  # type: ignore[attr-defined]
    finally:
        gc.enable()


def test_a_task_outlives_its_worker_s_last_emit(qtbot: object) -> None:
    """`_release` (the GUI thread's answer to `done`) may run while the worker is still inside
    `done.emit()`, before it has posted the later receivers' calls: the task must not be
    deleted until the worker is out, or those calls are lost (a Query page's Stop that
    never came back)."""
    released_on_gui = threading.Event()
    gui_turned = threading.Event()
    task = Task(lambda _progress: None)
    original = task._release

    def release() -> None:
        original()
        released_on_gui.set()
        QTimer.singleShot(50, gui_turned.set)  # the GUI thread went on (deferred deletes too)

    task.done.disconnect(task._release)
    task.done.connect(release)

    def hold_the_worker_inside_emit() -> None:
        released_on_gui.wait(10)
        gui_turned.wait(10)

    task.done.connect(hold_the_worker_inside_emit, Qt.ConnectionType.DirectConnection)
    later: list[bool] = []
    task.done.connect(lambda: later.append(True))
    task.start()
    qtbot.waitUntil(lambda: bool(later), timeout=20_000)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: not shiboken6.isValid(task), timeout=10_000)  # type: ignore[attr-defined]


def _open_every_page(qtbot: object, window: MainWindow, path: Path) -> weakref.ref[object]:
    """Open `path`, build every page (each view holds the document); a weak reference to
    the Document (this function's frame, which held the tab, is gone once it returns)."""
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as blocker:  # type: ignore[attr-defined]
        window.open_path(path)
    tab = blocker.args[0]
    assert isinstance(tab, DocumentTab)
    for name in tab.view_names():
        assert tab.show_view(name)
    qtbot.waitUntil(lambda: not tab.is_preparing(tab.current_view()), timeout=60_000)  # type: ignore[attr-defined]
    return weakref.ref(tab.document)


def _close_and_collect(qtbot: object, window: MainWindow) -> None:
    """Close the current tab once every task has been released (their `done` delivered),
    delete what was deleted later, and collect."""
    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=30_000)  # type: ignore[attr-defined]
    window.tabs_controller.close_current()

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def test_a_closed_tab_frees_its_document(qtbot: object) -> None:
    window = MainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    document = _open_every_page(qtbot, window, DATA / "torch_cpu_small.pt.trace.json.gz")
    assert document() is not None
    _close_and_collect(qtbot, window)
    assert document() is None


def test_a_closed_tab_is_freed_without_anyone_collecting(qtbot: object) -> None:
    """The window collects once the closed tab is deleted: automatic collection may not come
    for minutes (it is off here), and the tab's memory must not wait for it."""
    window = MainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    document = _open_every_page(qtbot, window, DATA / "torch_cpu_small.pt.trace.json.gz")
    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=30_000)  # type: ignore[attr-defined]
    gc.disable()
    try:
        window.tabs_controller.close_current()
        qtbot.waitUntil(lambda: document() is None, timeout=10_000)  # type: ignore[attr-defined]
    finally:
        gc.enable()


def test_the_kept_buffers_are_dropped_on_a_thread_of_their_own(qtbot: object) -> None:
    """What `let_go` keeps out of the collection (the args blob) is freed off the GUI thread,
    where unmapping it does not hold the window up."""
    freed_on: list[str] = []

    class Buffer:
        def __del__(self) -> None:
            freed_on.append(threading.current_thread().name)

    let_go.collect([Buffer()])
    qtbot.waitUntil(lambda: bool(freed_on), timeout=10_000)  # type: ignore[attr-defined]
    assert freed_on == ["perfview-let-go"]


def test_the_collection_waits_while_a_load_runs(
    qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full collection among a running load's objects freezes the window (100-200 ms at
    1 GB): the collection after a close waits for the load to end, then runs."""
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    with let_go.collector_paused():
        assert let_go.collector_is_paused()
        let_go.collect([])
        assert collections == []  # put off, not run
    qtbot.waitUntil(lambda: collections == [2], timeout=10_000)  # type: ignore[attr-defined]


def test_a_closed_compare_tab_frees_both_runs(qtbot: object) -> None:
    window = MainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    with qtbot.waitSignal(window.compare_opened, timeout=60_000) as blocker:  # type: ignore[attr-defined]
        window.open_compare(DATA / "diff" / "run_a.prof", DATA / "diff" / "run_b.prof")
    result = blocker.args[0].result
    runs = [weakref.ref(result.a), weakref.ref(result.b)]
    del blocker, result
    _close_and_collect(qtbot, window)
    assert all(run() is None for run in runs)
