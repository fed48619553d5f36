"""Selecting in one view selects the same function in the others, through the Document."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings

pytestmark = pytest.mark.gui


@pytest.fixture
def example_tab(qtbot, tmp_path: Path):
    window = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.document_opened, timeout=30_000) as blocker:
        window.open_example()
    return blocker.args[0]


def _selected_icicle_node(icicle) -> int:
    x0, x1, row = icicle.batch._selected
    return icicle.batch.node_at((x0 + x1) / 2, row + 0.5)


def test_table_row_selects_icicle_node(example_tab) -> None:
    table = example_tab.view_widget("functions")
    icicle = example_tab.view_widget("icicle")
    column = table.model.column_index("function")
    labels = [str(table.model.raw(r, column)) for r in range(table.model.rowCount())]
    rows = [r for r, text in enumerate(labels) if text.endswith("(make_records)")]
    assert len(rows) == 1, "the example profile has one make_records"
    proxy_index = table.proxy.mapFromSource(table.model.index(rows[0], 0))
    table.table.selectionModel().setCurrentIndex(
        proxy_index, table.table.selectionModel().SelectionFlag.ClearAndSelect
    )
    assert example_tab.document.selection.name == "make_records"
    node = _selected_icicle_node(icicle)
    assert icicle.node_names[node] == "make_records"
    # every node of that function is highlighted, the heaviest one selected
    matches = np.flatnonzero(icicle.node_names == "make_records")
    assert node == matches[np.argmax(icicle.total[matches])]


def test_icicle_click_selects_table_row(example_tab) -> None:
    table = example_tab.view_widget("functions")
    icicle = example_tab.view_widget("icicle")
    node = int(np.flatnonzero(icicle.node_names == "tokenize")[0])
    icicle.select_node(node)
    current = table.table.currentIndex()
    assert current.isValid()
    source_row = table.proxy.mapToSource(current).row()
    function_column = table.model.column_index("function")
    assert table.model.raw(source_row, function_column) == "example_program.py:35(tokenize)"


def test_ops_row_highlights_timeline_slices(qtbot, tmp_path: Path) -> None:
    window = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    trace = Path(__file__).resolve().parents[1] / "data" / "torch_cpu_small.pt.trace.json.gz"
    with qtbot.waitSignal(window.document_opened, timeout=30_000) as blocker:
        window.open_path(trace)
    tab = blocker.args[0]
    timeline = tab.view_widget("timeline")
    ops = tab.view_widget("ops")
    name = "aten::mm"
    rows = ops.model.find_rows("name", name)
    assert rows
    ops.table.selectionModel().setCurrentIndex(
        ops.proxy.mapFromSource(ops.model.index(rows[0], 0)),
        ops.table.selectionModel().SelectionFlag.ClearAndSelect,
    )
    events = tab.document.bundle.timeline.events
    expected = int((events["name"] == name).sum())
    assert expected > 0
    assert len(timeline.batch._highlight.rects.node) == expected
