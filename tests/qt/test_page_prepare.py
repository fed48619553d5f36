"""Pages prepare their data off the GUI thread (document_tab + tasks + core.pages.data).

A click on a heavy page shows "Preparing…" and builds the page when the worker is done; the
load task hands the first page and the Timeline over already prepared; the synchronous API
(`view_widget`, `show_view`) still returns built widgets at once.
"""

from __future__ import annotations

import itertools
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core import pages
from perfview.core.model import Bundle
from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


@cache
def _bundle() -> Bundle:
    from perfview.loaders import load

    return load(sample(RESNET))


def _tab(pages: dict[str, Any] | None = None) -> Any:
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    return DocumentTab(Document(_bundle()), pages=pages)


def test_load_task_prepares_the_first_page_and_the_timeline(qtbot: Any) -> None:
    from perfview.core.pages import first_tables as table_views
    from perfview.core.pages import prepared_pages
    from perfview.qt.tasks import load_task

    task = load_task(sample(RESNET), table_views, prepared_pages)
    with qtbot.waitSignal(task.finished, timeout=60_000) as blocker:
        task.start()
    result = blocker.args[0]
    assert list(result.pages) == ["overview", "timeline"]
    assert result.pages["overview"].stats.count == 6
    assert len(result.pages["timeline"].event_row) == len(result.bundle.timeline.events)


def test_a_clicked_page_prepares_in_the_background(qtbot: Any) -> None:
    from perfview.qt.views.torch_kernels_view import TorchKernelsView

    tab = _tab()
    qtbot.addWidget(tab)
    assert tab.current_view() == "overview"
    index = tab.view_names().index("kernels")
    tab.tabs.setCurrentIndex(index)  # what a click on the tab bar does
    assert tab.is_preparing("kernels")
    assert "kernels" not in tab._views  # nothing heavy ran on this thread
    qtbot.waitUntil(lambda: not tab.is_preparing(), timeout=60_000)
    view = tab.view_widget("kernels")
    assert isinstance(view, TorchKernelsView)
    assert view.kernels.model.rowCount() == len(pages.prepare("kernels", _bundle()).table)


def test_show_view_stays_synchronous_and_adopts_derived_data(qtbot: Any) -> None:
    from perfview.qt.views.recommendations_view import RecommendationsView
    from perfview.qt.views.timeline_view import TimelineView

    bundle = _bundle()
    overview = pages.prepare("overview", bundle)
    timeline = pages.prepare("timeline", bundle)
    tab = _tab({"overview": overview, "timeline": timeline})
    qtbot.addWidget(tab)
    assert tab.show_view("timeline")
    view = tab.view_widget("timeline")
    assert isinstance(view, TimelineView)
    assert view.data is timeline  # the worker's layout, not a second one
    assert not tab.is_preparing()
    # The Overview's findings are the Recommendations page: no second computation.
    assert tab.tab_data.data["recommendations"] is overview.findings
    tab.tabs.setCurrentIndex(tab.view_names().index("recommendations"))
    assert not tab.is_preparing("recommendations")
    recs = tab.view_widget("recommendations")
    assert isinstance(recs, RecommendationsView)
    assert recs.titles() == [f.title for f in overview.findings]


def test_a_reopened_trace_shows_its_findings_at_once(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The findings a worker found after the first open's Overview was drawn are stored: the
    reopen's Overview has them when its tab is built, and no worker searches again."""
    from perfview.core.pages import first_tables as table_views
    from perfview.core.pages import prepared_pages
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.tasks import load_task
    from perfview.qt.views.torch_overview_view import TorchOverviewView
    from perfview.store import overview_entries, parsed_columns
    from tests.loaders.cache_setup import sample_copy, use_cache_dir

    use_cache_dir(tmp_path, monkeypatch, max_mb=500)
    path = sample_copy(RESNET, tmp_path)

    def opened() -> Any:
        task = load_task(path, table_views, prepared_pages)
        with qtbot.waitSignal(task.finished, timeout=60_000) as blocker:
            task.start()
        result = blocker.args[0]
        tab = DocumentTab(Document(result.bundle), result.tables, pages=result.pages)
        qtbot.addWidget(tab)
        return result, tab

    first, tab = opened()
    assert first.pages["overview"].findings is None  # found by a worker once drawn
    qtbot.waitUntil(lambda: tab.tab_data.data["overview"].findings is not None, timeout=60_000)
    found = tab.tab_data.data["overview"].findings
    assert found  # resnet50's trace has findings, so the test shows them coming back
    parsed_columns.flush()
    overview_entries.flush()
    again, tab = opened()
    assert again.pages["overview"].findings == found
    view = tab.view_widget("overview")
    assert isinstance(view, TorchOverviewView)
    # no findings task held back (the other pages' prefetch is the only work waiting)
    assert [s for s in tab._after_ahead.starts if s != tab._prefetch.start] == []
    assert not tab.is_preparing()
    qtbot.waitUntil(lambda: getattr(view, "findings", None) is not None, timeout=10_000)
    assert view._finding_label is None  # built with them: never "Looking for…"
    assert len(view.findings.cards) == len(found)


def test_a_table_page_computes_its_table_in_the_background(qtbot: Any) -> None:
    """Only the first page's table is precomputed by a load; a table page shown later gets
    its summary from a worker, not from the GUI thread."""
    from perfview.core.pages import first_tables as table_views
    from perfview.core.pages import summary
    from perfview.qt.views.table_view import TableView

    bundle = _bundle()
    assert table_views(bundle) == []  # a torch trace opens on the Overview
    tab = _tab()
    qtbot.addWidget(tab)
    table_page = next(s for s in tab.page_tabs if s.table == "ops")
    tab.tabs.setCurrentIndex(tab.view_names().index(table_page.name))
    assert tab.is_preparing(table_page.name)
    assert not tab.document.has_table("ops")
    qtbot.waitUntil(lambda: not tab.is_preparing(), timeout=60_000)
    assert tab.document.has_table("ops")
    view = tab.view_widget(table_page.name)
    assert isinstance(view, TableView)
    assert view.model.rowCount() == len(summary.summarize(bundle, "ops"))


def test_the_other_pages_are_prepared_ahead_once_the_window_is_quiet(qtbot: Any) -> None:
    """Once the tab's first pages are built and the window is quiet, the pages that lack
    data are prepared one by one in a worker (qt/page_prefetch.py): a click on Kernels then
    builds it from data in hand, with no "Preparing…" and no second worker."""
    from perfview.core.pages.data import KernelsData
    from perfview.qt.views.torch_kernels_view import TorchKernelsView

    tab = _tab()
    qtbot.addWidget(tab)
    qtbot.waitUntil(
        lambda: isinstance(tab.tab_data.data.get("kernels"), KernelsData), timeout=120_000
    )
    assert "kernels" not in tab._views  # prepared, not built: widgets wait for the click
    tab.tabs.setCurrentIndex(tab.view_names().index("kernels"))
    assert not tab.is_preparing("kernels")
    assert isinstance(tab.built_view("kernels"), TorchKernelsView)


def test_a_page_clicked_while_prepared_ahead_waits_for_that_task(qtbot: Any) -> None:
    tab = _tab()
    qtbot.addWidget(tab)
    qtbot.waitUntil(lambda: tab._prefetch._task is not None, timeout=60_000)
    name = tab._prefetch._name
    running = tab._prefetch._task
    tab.tabs.setCurrentIndex(tab.view_names().index(name))
    if tab.built_view(name) is None:  # still running: the click shares its task
        assert tab._preparing[name][0] is running
        qtbot.waitUntil(lambda: tab.built_view(name) is not None, timeout=60_000)
    assert not tab.is_preparing(name)


def test_nothing_is_prepared_ahead_while_a_clicked_page_prepares(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page clicked right after the load is prepared alone: the pages prepared ahead (and
    the Overview's findings) wait until it is built and the window is quiet again, as a second
    worker would share the GIL with the clicked page's (issue 37: Operators 2 s after the load
    with the Kernels table prepared beside it)."""
    from perfview.core.pages.data import OpsData
    from perfview.qt import tab_data
    from perfview.qt.document_tab import DocumentTab

    made: list[tuple[str, set[str]]] = []
    original = DocumentTab._prefetch_task

    def record(self: DocumentTab, name: str) -> Any:
        made.append((name, set(self._preparing)))
        return original(self, name)

    monkeypatch.setattr(DocumentTab, "_prefetch_task", record)
    # the clicked page's worker holds on until the window has had its quiet moments
    release = threading.Event()
    page_data = tab_data.page_data

    def held(name: str, *args: Any) -> Any:
        if name == "operators":
            release.wait(60)
        return page_data(name, *args)

    monkeypatch.setattr(tab_data, "page_data", held)
    tab = _tab()
    qtbot.addWidget(tab)
    tab.tabs.setCurrentIndex(tab.view_names().index("operators"))
    assert tab.is_preparing("operators")
    try:
        for _ in range(2):  # the quiet timer runs out twice while Operators is prepared
            with qtbot.waitSignal(tab._after_ahead._timer.timeout, timeout=60_000):
                pass
        assert made == []
    finally:
        release.set()
    qtbot.waitUntil(lambda: tab.built_view("operators") is not None, timeout=60_000)
    assert isinstance(tab.tab_data.data["operators"], OpsData)
    qtbot.waitUntil(lambda: len(made) >= 2, timeout=60_000)  # the prefetch goes on after it
    assert [preparing for _name, preparing in made if preparing] == []
    assert "operators" not in [name for name, _ in made]


def test_the_quiet_work_runs_one_worker_at_a_time(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Overview's findings and the pages prepared ahead start from the quiet work one at a
    time: each once the one before is done (issue 37: started together, they shared the GIL
    with each other and with the page clicked next)."""
    from PySide6.QtCore import QThreadPool

    from perfview.qt import document_tab, tab_data
    from tests.loaders.cache_setup import use_cache_dir

    use_cache_dir(tmp_path, monkeypatch, max_mb=500)  # the findings found, not read back
    pool = QThreadPool.globalInstance()
    threads = pool.maxThreadCount()
    pool.setMaxThreadCount(max(threads, 4))  # a free thread for each: the order is the tab's
    spans: list[tuple[str, float, float]] = []
    lock = threading.Lock()

    def timed(kind: str, fn: Any) -> Any:
        def run(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args)
            finally:
                with lock:
                    spans.append((kind, start, time.perf_counter()))

        return run

    monkeypatch.setattr(document_tab, "completed", timed("findings", document_tab.completed))
    monkeypatch.setattr(tab_data, "with_tree", timed("page", tab_data.with_tree))
    bundle = _bundle()
    overview = pages.prepare_first("overview", bundle)
    assert overview.findings is None  # drawn first, its findings found by a worker
    try:
        tab = _tab({"overview": overview})
        qtbot.waitUntil(lambda: tab.tab_data.data["overview"].findings is not None, timeout=60_000)
        qtbot.waitUntil(lambda: sum(k == "page" for k, _, _ in spans) >= 2, timeout=60_000)
        qtbot.waitUntil(lambda: not tab._busy(), timeout=60_000)
    finally:
        pool.setMaxThreadCount(threads)
    ordered = sorted(spans, key=lambda span: span[1])
    assert [k for k, _, _ in ordered].count("findings") == 1
    for (_, _, end), (_, start, _) in itertools.pairwise(ordered):
        assert start >= end  # never two at once
