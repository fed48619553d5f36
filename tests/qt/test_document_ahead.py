"""A big trace's Timeline is laid out on its own thread as soon as the load has built the
bundle (`documents/ahead.py`), and the tab uses that layout instead of laying it out again."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.documents import document as document_module
from perfview.documents import plan
from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


@pytest.fixture
def counted_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every Timeline layout computed from now on (one entry each); a private cache."""
    from perfview.core.layout import timeline_layout

    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[int] = []
    real = timeline_layout.prepare_timeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(timeline_layout, "prepare_timeline", counted)
    return calls


def test_the_load_lays_out_the_timeline_and_the_tab_uses_it(
    qtbot: Any, counted_layouts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.core.layout import timeline_layout
    from perfview.core.pages import first_tables
    from perfview.documents.ahead import Pending
    from perfview.qt import tasks
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    monkeypatch.setattr(document_module, "BIG_BYTES", 0)  # the sample counts as big
    result = tasks.load_and_prepare(
        sample(RESNET), lambda f, m: None, first_tables, plan.first_pages
    )
    pending = result.pages["timeline"]
    assert isinstance(pending, Pending)
    assert "overview" in result.pages  # the first page, prepared as before
    data = pending.result()
    assert counted_layouts == [1]

    tab = DocumentTab(Document(result.bundle), result.tables, pages=result.pages)
    qtbot.addWidget(tab)
    qtbot.waitUntil(
        lambda: "timeline" in tab.tab_data.data and not tab.is_preparing(), timeout=60_000
    )
    assert tab.tab_data.data["timeline"] is data  # the load's layout, not a second one
    assert counted_layouts == [1]
    assert tab.show_view("timeline")
    view = tab.view_widget("timeline")
    assert view is not None
    assert view.grab().width() > 0
    assert result.bundle.timeline is not None
    fresh = timeline_layout.prepare_timeline(result.bundle.timeline)
    assert np.array_equal(data.event_row, fresh.event_row)


def test_a_small_file_leaves_the_timeline_to_the_tab(counted_layouts: list[int]) -> None:
    from perfview.core.pages import first_tables
    from perfview.qt import tasks

    result = tasks.load_and_prepare(
        sample(RESNET), lambda f, m: None, first_tables, plan.first_pages
    )
    assert "timeline" not in result.pages
    assert counted_layouts == []


def test_a_layout_done_before_the_tab_is_adopted_at_once(qtbot: Any) -> None:
    from perfview.core.layout import timeline_layout
    from perfview.documents.ahead import Pending
    from perfview.loaders import FRESH, load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    bundle = load(sample(RESNET), options=FRESH)
    assert bundle.timeline is not None
    done: Future[Any] = Future()
    data = timeline_layout.prepare_timeline(bundle.timeline)
    done.set_result(data)
    tab = DocumentTab(Document(bundle), pages={"timeline": Pending("timeline", done)})
    qtbot.addWidget(tab)
    assert tab.tab_data.data["timeline"] is data  # no worker, no "Preparing…"
    assert not tab.is_preparing("timeline")
    qtbot.waitUntil(lambda: "timeline" in tab._views, timeout=10_000)  # built on a later turn
    assert tab.current_view() != "timeline"
    assert tab.show_view("timeline")


def test_a_layout_still_running_is_waited_for_off_the_gui_thread(qtbot: Any) -> None:
    import threading

    from perfview.core.layout import timeline_layout
    from perfview.documents.ahead import Pending
    from perfview.loaders import FRESH, load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    bundle = load(sample(RESNET), options=FRESH)
    assert bundle.timeline is not None
    data = timeline_layout.prepare_timeline(bundle.timeline)
    running: Future[Any] = Future()
    tab = DocumentTab(Document(bundle), pages={"timeline": Pending("timeline", running)})
    qtbot.addWidget(tab)
    qtbot.waitUntil(lambda: tab.is_preparing("timeline"), timeout=10_000)  # "Preparing…"
    assert "timeline" not in tab.tab_data.data
    threading.Thread(target=running.set_result, args=(data,)).start()  # the layout ends
    qtbot.waitUntil(lambda: "timeline" in tab._views and not tab.is_preparing(), timeout=60_000)
    assert tab.tab_data.data["timeline"] is data


def test_a_layout_that_failed_is_shown_in_place(qtbot: Any) -> None:
    from perfview.documents.ahead import Pending
    from perfview.loaders import FRESH, load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    failed: Future[Any] = Future()
    failed.set_exception(ValueError("no room for the rows"))
    bundle = load(sample(RESNET), options=FRESH)
    tab = DocumentTab(Document(bundle), pages={"timeline": Pending("timeline", failed)})
    qtbot.addWidget(tab)
    qtbot.waitUntil(lambda: "timeline" in tab._views and not tab.is_preparing(), timeout=60_000)
    shown: Any = tab._views["timeline"]  # the placeholder label
    text = shown.text()
    assert "could not be built" in text
    assert "no room for the rows" in text


def test_a_page_registry_error_never_fails_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfview.core import pages as page_registry
    from perfview.documents import ahead as document_ahead
    from perfview.loaders import FRESH, load

    bundle = load(sample(RESNET), options=FRESH)

    def broken(_bundle: Any) -> Any:
        raise KeyError("no such page")

    monkeypatch.setattr(page_registry, "tabs_for", broken)
    assert document_ahead.start(bundle) == {}


def test_wanted_names_only_pages_the_tab_shows_and_lacks() -> None:
    from perfview.loaders import FRESH, load

    bundle = load(sample(RESNET), options=FRESH)
    assert plan.ahead_pages(bundle) == ["timeline"]
    assert plan.ahead_pages(bundle, skip=["timeline"]) == []


def test_the_loads_cache_entries_wait_until_its_tab_is_drawn(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parsed columns, the Timeline's layout and the Overview's tables are stored once
    the new tab has been built and the window was quiet (`LoadResult.writes`), not beside the
    tab's first pages: on a busy 2-core machine the writers took the GUI thread's share of a
    core just as the Timeline was clicked."""
    from perfview.core.pages import first_tables
    from perfview.qt import tasks
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.store import layout_entries, overview_entries, parsed_columns

    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")
    monkeypatch.setattr(document_module, "BIG_BYTES", 0)  # the sample counts as big
    path = tmp_path / "resnet.pt.trace.json.gz"
    path.write_bytes(sample(RESNET).read_bytes())
    result = tasks.load_and_prepare(path, lambda f, m: None, first_tables, plan.first_pages)
    result.pages["timeline"].result()  # laid out: its writer waits too
    entries = [
        parsed_columns.cache_dir() / parsed_columns.key(path),
        layout_entries.entry_for(path),
        overview_entries.entry_for(path),
    ]
    assert not result.writes.is_open()
    assert not any(entry.exists() for entry in entries)

    tab = DocumentTab(
        Document(result.bundle), result.tables, pages=result.pages, writes=result.writes
    )
    qtbot.addWidget(tab)
    assert not result.writes.is_open()  # not while the tab is being built
    qtbot.waitUntil(result.writes.is_open, timeout=60_000)
    parsed_columns.flush()
    assert all(entry.is_dir() for entry in entries)


def test_a_tab_closed_before_it_was_quiet_lets_its_writes_start(qtbot: Any) -> None:
    import shiboken6

    from perfview.loaders import FRESH, load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.store.write_gates import WriteGate

    gate = WriteGate(cap_s=None)
    tab = DocumentTab(Document(load(sample(RESNET), options=FRESH)), writes=gate)
    assert not gate.is_open()
    shiboken6.delete(tab)  # as a closed tab goes (`destroyed`), before the window was quiet
    assert gate.is_open()
