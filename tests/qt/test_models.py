"""Item models: Qt's model tester, unit-aware display, sorting on raw values, filter, CSV."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication

from perfview.core.model import CallTree
from perfview.qt.document import Document, Selection
from perfview.qt.file_types import example_path
from perfview.qt.models.table_model import RAW_ROLE, DataFrameModel, TableProxy
from perfview.qt.models.tree_model import CallTreeModel
from tests.conftest import sample

pytestmark = pytest.mark.gui


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": pd.Categorical(["aten::mm", "aten::add", "Conv", "aten::relu"]),
            "calls": np.array([3, 100, 20, 7], dtype=np.int64),
            "total_ns": np.array([5_000, 100, 2_000_000, 20], dtype=np.int64),
            "peak_bytes": np.array([1 << 20, 0, 3 << 30, 512], dtype=np.int64),
            "ratio": [0.5, math.nan, 1.25, 2.0],
        }
    )


def _column(model: TableProxy | DataFrameModel, column: int) -> list[object]:
    return [model.index(r, column).data(RAW_ROLE) for r in range(model.rowCount())]


def _load(path: object) -> object:
    from perfview.loaders import load

    return load(path)  # type: ignore[arg-type]


def test_table_model_passes_modeltester(qtmodeltester: object) -> None:
    model = DataFrameModel(_frame())
    proxy = TableProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    qtmodeltester.check(proxy)  # type: ignore[attr-defined]
    proxy.set_filter_text("aten")
    proxy.sort(2, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(proxy)  # type: ignore[attr-defined]


def test_display_is_unit_aware_and_headers_drop_suffix() -> None:
    model = DataFrameModel(_frame())
    assert model.headerData(2, Qt.Orientation.Horizontal) == "total"
    assert model.headerData(3, Qt.Orientation.Horizontal) == "peak"
    assert model.index(2, 2).data() == "2 ms"
    assert model.index(0, 2).data() == "5 µs"
    assert model.index(0, 3).data() == "1 MiB"
    assert model.index(2, 3).data() == "3 GiB"
    assert model.index(1, 1).data() == "100"
    assert model.index(1, 4).data() == ""  # NaN shows empty
    align = model.index(0, 2).data(Qt.ItemDataRole.TextAlignmentRole)
    assert align & int(Qt.AlignmentFlag.AlignRight)


def test_sort_uses_raw_values_not_text() -> None:
    model = DataFrameModel(_frame())
    proxy = TableProxy()
    proxy.setSourceModel(model)
    proxy.sort(2, Qt.SortOrder.DescendingOrder)  # "2 ms" > "5 µs" > "100 ns" > "20 ns"
    assert _column(proxy, 2) == [2_000_000, 5_000, 100, 20]
    proxy.sort(2, Qt.SortOrder.AscendingOrder)
    assert _column(proxy, 2) == [20, 100, 5_000, 2_000_000]
    proxy.sort(0, Qt.SortOrder.AscendingOrder)  # text: case-insensitive
    assert _column(proxy, 0) == ["aten::add", "aten::mm", "aten::relu", "Conv"]
    proxy.sort(4, Qt.SortOrder.DescendingOrder)  # NaN last in both directions
    assert _column(proxy, 4)[:3] == [2.0, 1.25, 0.5]
    assert math.isnan(_column(proxy, 4)[3])  # type: ignore[arg-type]


def test_sort_keeps_persistent_selection() -> None:
    model = DataFrameModel(_frame())
    keep = model.index(2, 0)  # "Conv"
    from PySide6.QtCore import QPersistentModelIndex

    persistent = QPersistentModelIndex(keep)
    model.sort(1, Qt.SortOrder.AscendingOrder)  # calls 3, 7, 20, 100 -> Conv is row 2
    assert persistent.row() == 2
    assert persistent.data() == "Conv"
    model.sort(1, Qt.SortOrder.DescendingOrder)
    assert persistent.row() == 1
    assert persistent.data() == "Conv"


def test_filter_is_case_insensitive_substring_of_text_columns() -> None:
    model = DataFrameModel(_frame())
    proxy = TableProxy()
    proxy.setSourceModel(model)
    proxy.set_filter_text("ATEN::")
    assert sorted(_column(proxy, 0)) == ["aten::add", "aten::mm", "aten::relu"]  # type: ignore[type-var]
    proxy.sort(1, Qt.SortOrder.DescendingOrder)  # filter survives a sort
    assert _column(proxy, 1) == [100, 7, 3]
    proxy.set_filter_text("")
    assert proxy.rowCount() == 4


def test_csv_export_has_raw_values() -> None:
    model = DataFrameModel(_frame())
    proxy = TableProxy()
    proxy.setSourceModel(model)
    proxy.sort(2, Qt.SortOrder.DescendingOrder)
    rows = list(csv.reader(io.StringIO(proxy.to_csv([0, 1], [0, 2]))))
    assert rows == [["name", "total_ns"], ["Conv", "2000000"], ["aten::mm", "5000"]]


def test_pstats_functions_table_real_data(qtbot: object) -> None:
    """Sort/filter/copy on the real 8,348-function profile; selecting a row selects in the
    document and a document selection selects the row."""
    from perfview.qt.document_tab import DocumentTab

    bundle = _load(sample("pstats/dtu_gabriellanaro_output.prof"))
    document = Document(bundle)  # type: ignore[arg-type]
    tab = DocumentTab(document)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    assert tab.show_view("functions")
    view = tab.view_widget("functions")
    functions = bundle.profile.functions  # type: ignore[attr-defined]
    assert view.proxy.rowCount() == len(functions) == 8348
    # default order: cumulative time, biggest first
    cum = _column(view.proxy, view.model.column_index("cumtime_ns"))
    assert cum == sorted(cum, reverse=True)
    # header click path: sort by tottime ascending on raw ns
    column = view.model.column_index("tottime_ns")
    view.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    tot = _column(view.proxy, column)
    assert tot == sorted(tot)
    assert tot[-1] == functions["tottime_ns"].max()
    # filter
    view.set_filter("__init__")
    from perfview.core.analysis.profile_tables import function_labels

    expected = int(function_labels(functions).str.contains("__init__", regex=False).sum())
    assert 0 < view.proxy.rowCount() == expected < len(functions)
    labels = [view.proxy.index(r, view.model.column_index("function")).data() for r in range(5)]
    assert all("__init__" in str(text) for text in labels)
    # selection -> document
    with qtbot.waitSignal(document.selection_changed, timeout=2000) as blocker:  # type: ignore[attr-defined]
        view.table.selectRow(0)
    selection = blocker.args[0]
    fid = view.model.row_id(view.proxy.mapToSource(view.proxy.index(0, 0)).row())
    assert selection.kind == "function"
    assert selection.function == fid
    assert selection.name == functions["function"].iat[fid]
    # copy selection as CSV: header + the one selected row, raw ns values
    text = view.copy_selection()
    assert QGuiApplication.clipboard().text() == text
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:2] == ["ncalls", "tottime_ns"]
    assert len(rows) == 2
    assert int(rows[1][1]) == int(functions["tottime_ns"].iat[fid])
    # document -> table (clear the filter first so the target row is visible)
    view.set_filter("")
    target = int(functions["cumtime_ns"].idxmin())
    document.select(
        Selection(kind="function", name=str(functions["function"].iat[target]), function=target)
    )
    current = view.table.currentIndex()
    assert view.model.row_id(view.proxy.mapToSource(current).row()) == target


def test_copy_table_csv_is_whole_filtered_table(qtbot: object) -> None:
    from perfview.qt.views.table_view import TableView

    view = TableView(_frame())
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    view.set_filter("aten")
    text = view.copy_table()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["name", "calls", "total_ns", "peak_bytes", "ratio"]
    assert {r[0] for r in rows[1:]} == {"aten::mm", "aten::add", "aten::relu"}
    assert view.count_label.text() == "3 of 4"


def test_no_selection_loop_between_table_and_document(qtbot: object) -> None:
    from perfview.qt.views.table_view import TableView

    bundle = _load(example_path())
    document = Document(bundle)  # type: ignore[arg-type]
    view = TableView(_frame(), document, kind="op", key_column="name")
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    emitted: list[Selection] = []
    document.selection_changed.connect(emitted.append)
    document.select(Selection(kind="op", name="aten::relu"))
    assert len(emitted) == 1  # the table followed without re-emitting
    assert view.table.currentIndex().data() == "aten::relu"
    view.table.selectRow(view.proxy.mapFromSource(view.model.index(2, 0)).row())
    assert [s.name for s in emitted] == ["aten::relu", "Conv"]


def test_tree_model_passes_modeltester_on_real_tree(qtmodeltester: object) -> None:
    bundle = _load(example_path())
    tree = bundle.tree  # type: ignore[attr-defined]
    assert tree is not None
    assert len(tree) > 5
    model = CallTreeModel(tree)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    top = model.index(0, 0)
    assert top.data() == "main"
    # children sorted by total, numbers formatted
    kids = [model.index(r, 0, top) for r in range(model.rowCount(top))]
    totals = [k.siblingAtColumn(1).data(Qt.ItemDataRole.UserRole + 2) for k in kids]
    assert totals == sorted(totals, reverse=True)
    # index_of / parent round trip for a deep node
    deepest = int(np.argmax(tree.depth))
    index = model.index_of(deepest)
    assert model.node_of(index) == deepest
    assert model.node_of(model.parent(index)) == int(tree.parent[deepest])


def test_tree_model_handles_hand_built_tree(qtmodeltester: object) -> None:
    tree = CallTree(
        parent=np.array([-1, 0, 0, 1], dtype=np.int32),
        frame=np.array([-1, 0, 1, 2], dtype=np.int32),
        frames=pd.DataFrame(
            {"name": ["a", "b", "c"], "file": ["x.py", "x.py", "y.py"], "line": [1, 2, 3]}
        ),
        metrics={
            "total_ns": np.array([10.0, 6.0, 4.0, 5.0]),
            "self_ns": np.array([0.0, 1.0, 4.0, 5.0]),
            "calls": np.array([1.0, 1.0, 2.0, 3.0]),
        },
    )
    model = CallTreeModel(tree)
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert model.rowCount() == 2
    assert model.index(0, 0).data() == "a"
    assert model.index(0, 4).data() == "60.0 %"
    assert model.rowCount(model.index(1, 0)) == 0
    assert not model.parent(QModelIndex()).isValid()


def test_line_report_model_passes_modeltester(qtmodeltester: object) -> None:
    from perfview.qt.views.line_report_view import LineReportModel

    bundle = _load(sample("memprof_text/titanic_memory_profile.txt"))
    rows = bundle.lines.lines  # type: ignore[attr-defined]
    model = LineReportModel(rows[rows["block"] == 0])
    qtmodeltester.check(model)  # type: ignore[attr-defined]
    assert model.rowCount() == int((rows["block"] == 0).sum())
