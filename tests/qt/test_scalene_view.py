"""The Lines page of a Scalene profile: Scalene's columns, its numbers, a file per block."""

from __future__ import annotations

from typing import Any

from perfview.loaders import FRESH, load
from tests.conftest import DATA

PROFILE = DATA / "scalene" / "multi_file.json"


def test_line_view_shows_scalenes_columns(qtbot: object) -> None:
    from perfview.qt.views.line_report_view import LineReportView

    bundle = load(PROFILE, options=FRESH)
    assert bundle.lines is not None
    view = LineReportView(bundle.lines)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    model = view.model
    headers = [model.headerData(i, _horizontal()) for i in range(model.columnCount())]
    assert headers[:4] == ["Line #", "Python", "native", "system"]
    assert "Mem peak" in headers
    assert headers[-1] == "Line Contents"
    assert view.block_count() == 2
    view.show_block(1)  # mem_work.py
    row = next(
        r
        for r in range(model.rowCount())
        if "kept.append" in str(model.index(r, 0).siblingAtColumn(model.content).data())
    )
    peak = headers.index("Mem peak")
    lines = bundle.lines.lines
    want = lines.loc[lines["content"].str.contains("kept.append"), "mem_peak_bytes"].iat[0]
    assert model.data(model.index(row, peak), _raw_role()) == want
    assert "most Python" in view.summary.text()


def _horizontal() -> Any:
    from PySide6.QtCore import Qt

    return Qt.Orientation.Horizontal


def _raw_role() -> int:
    from perfview.qt.views.line_report_view import RAW_ROLE

    return int(RAW_ROLE)
