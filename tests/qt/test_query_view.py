"""The Query page: runs SQL in a worker, shows the rows, reports errors, stops on request."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core.analysis import query
from perfview.core.model import Bundle
from tests.conftest import sample

pytestmark = pytest.mark.gui

TRACE = "kineto_gpu/hta_nccl_data.json.gz"


@cache
def _bundle() -> Bundle:
    from perfview.loaders import load

    return load(sample(TRACE))


def _view(qtbot: Any) -> Any:
    from perfview.qt.views.query_view import QueryView

    view = QueryView(_bundle())
    qtbot.addWidget(view)
    view.resize(1100, 700)
    return view


def _run(qtbot: Any, view: Any, sql: str) -> None:
    view.set_sql(sql)
    with qtbot.waitSignal(view.run_button.clicked, timeout=1000):
        view.run_button.click()
    task = view.task
    assert task is not None
    assert view.is_running()
    assert not view.run_button.isEnabled()
    with qtbot.waitSignal(task.done, timeout=60_000):
        pass


def test_query_runs_and_shows_rows(qtbot: Any) -> None:
    pytest.importorskip("duckdb")
    view = _view(qtbot)
    _run(qtbot, view, "SELECT kind, count(*) AS n FROM slices GROUP BY 1 ORDER BY 2 DESC")
    events = _bundle().timeline.events  # type: ignore[union-attr]
    want = events["kind"].value_counts()
    want = want[want > 0]
    assert view.result["n"].tolist() == want.tolist()
    assert view.status.text().startswith(f"{len(want)} rows in ")
    assert view.result_view.model.rowCount() == len(want)
    assert view.run_button.isEnabled()
    if os.environ.get("PERFVIEW_SHOT"):
        view.grab().save(os.environ["PERFVIEW_SHOT"])


def test_bad_query_is_reported_in_the_status_line(qtbot: Any) -> None:
    pytest.importorskip("duckdb")
    view = _view(qtbot)
    _run(qtbot, view, "SELEC 1")
    assert view.status.text().startswith("Query failed: Parser Error: syntax error")
    assert view.result_view is None


def test_stop_interrupts_a_running_query(qtbot: Any) -> None:
    pytest.importorskip("duckdb")
    view = _view(qtbot)
    view.set_sql("SELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3")
    task = view.run_query()
    assert task is not None
    with qtbot.waitSignal(task.done, timeout=60_000):
        qtbot.waitUntil(lambda: view._sessions.session is not None, timeout=30_000)
        # the query may not have started when Stop is first pressed: press until it ends

        def stopped() -> bool:
            view.stop()
            return not view.is_running()

        qtbot.waitUntil(stopped, timeout=30_000)
    assert "nterrupt" in view.status.text() or view.status.text() == "Stopped."
    assert view.stop_button.isEnabled() is False


def test_examples_menu_offers_the_trace_examples(qtbot: Any) -> None:
    pytest.importorskip("duckdb")
    view = _view(qtbot)
    titles = [a.text() for a in view.examples_button.menu().actions()]
    assert "Top kernels inside a user annotation" in titles
    assert "Longest gaps on a GPU stream" in titles
    assert "Slowest functions (cProfile)" not in titles
    view.examples_button.menu().actions()[1].trigger()
    assert "instants" in view.editor.toPlainText()


def test_without_duckdb_the_page_says_how_to_get_it(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(query, "available", lambda: False)
    view = _view(qtbot)
    assert view.editor is None
    assert view.run_query() is None


def test_document_tab_has_a_query_page(qtbot: Any) -> None:
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.query_view import QueryView

    tab = DocumentTab(Document(_bundle()))
    qtbot.addWidget(tab)
    assert tab.view_names()[-1] == "query"
    assert isinstance(tab.view_widget("query"), QueryView)
