"""The window's garbage collector: cycles are freed on the GUI thread, never on a worker that
happened to allocate; loads pause it; a closed tab's bundle is freed within a tick; a task
lets go of its function (and what it captured) once done."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import shiboken6
from PySide6.QtCore import QObject

from perfview.qt import collector
from perfview.qt.document_tab import DocumentTab
from perfview.qt.main_window import MainWindow
from perfview.qt.tasks import Task
from tests.conftest import DATA

pytestmark = pytest.mark.gui
TICKS_MS = 20 * collector.TICK_MS  # a few ticks, with room for a busy machine


class _Cycle:
    """A plain reference cycle holding a QObject: only the cyclic collector frees it."""

    def __init__(self, obj: QObject) -> None:
        self.obj = obj
        self.me = self


def test_a_cycle_holding_a_qobject_is_freed_on_the_gui_thread(qtbot: object) -> None:
    assert collector.installed()
    assert not gc.isenabled()
    destroyed_on: list[threading.Thread] = []
    obj = QObject()
    obj.destroyed.connect(lambda *_: destroyed_on.append(threading.current_thread()))
    _Cycle(obj)
    del obj

    kept: list[list[int]] = []  # far past every threshold: automatic collection would run
    worker = threading.Thread(target=lambda: kept.extend([i] for i in range(200_000)))
    worker.start()
    worker.join()
    assert destroyed_on == []  # the worker collected nothing
    qtbot.waitUntil(lambda: bool(destroyed_on), timeout=TICKS_MS)  # type: ignore[attr-defined]
    assert destroyed_on == [threading.main_thread()]


def test_paused_holds_collection_off_and_leaves_it_as_found() -> None:
    assert not gc.isenabled()  # installed: automatic collection stays off after a load
    with collector.paused(), collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    collector.uninstall()
    try:
        assert gc.isenabled()  # without the window's collector: a load pauses it, then on
        with collector.paused():
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        collector.install()


def test_a_done_task_lets_go_of_its_function_on_the_gui_thread(qtbot: object) -> None:
    class Captured:
        pass

    captured = Captured()
    ref = weakref.ref(captured)
    task = Task(lambda _progress, kept=captured: kept.__class__.__name__)
    del captured
    with qtbot.waitSignal(task.finished, timeout=10_000) as blocker:  # type: ignore[attr-defined]
        task.start()
    assert blocker.args == ["Captured"]
    # no collection runs meanwhile (installed): freed by reference counting alone
    qtbot.waitUntil(lambda: ref() is None and not shiboken6.isValid(task), timeout=10_000)  # type: ignore[attr-defined]


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


def test_a_closed_tab_frees_its_document(qtbot: object) -> None:
    window = MainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    document = _open_every_page(qtbot, window, DATA / "torch_cpu_small.pt.trace.json.gz")
    assert document() is not None
    gc.collect()  # as in a tab open for a while: its objects are in the oldest generation
    window.close_current()
    qtbot.waitUntil(lambda: document() is None, timeout=TICKS_MS)  # type: ignore[attr-defined]


def _compare(qtbot: object, window: MainWindow, a: Path, b: Path) -> list[weakref.ref[object]]:
    with qtbot.waitSignal(window.compare_opened, timeout=60_000) as blocker:  # type: ignore[attr-defined]
        window.open_compare(a, b)
    result = blocker.args[0].result
    return [weakref.ref(result.a), weakref.ref(result.b)]


def test_a_closed_compare_tab_frees_both_runs(qtbot: object) -> None:
    window = MainWindow()
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    runs = _compare(qtbot, window, DATA / "diff" / "run_a.prof", DATA / "diff" / "run_b.prof")
    gc.collect()
    window.close_current()
    qtbot.waitUntil(lambda: all(run() is None for run in runs), timeout=TICKS_MS)  # type: ignore[attr-defined]
