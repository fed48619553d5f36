"""A table's name column takes the room the numbers leave (qt/views/table_view.py with
core/layout/columns.py), on the real kernel names of a ResNet-50 trace."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


def test_kernel_names_get_the_width_and_numbers_stay_narrow(qtbot: Any) -> None:
    from PySide6.QtCore import Qt

    from perfview.core.analysis.torch.kernels import kernels_table
    from perfview.loaders import load
    from perfview.qt.views.table_view import TableView

    timeline = load(sample(RESNET)).timeline
    assert timeline is not None
    frame = kernels_table(timeline)
    view = TableView(frame, stretch_column="name")
    qtbot.addWidget(view)
    view.resize(2400, 600)
    view.show()
    qtbot.waitExposed(view)
    header = view.table.horizontalHeader()
    names = view.model.column_names()
    name = names.index("name")
    widths = [header.sectionSize(i) for i in range(len(names))]
    viewport = view.table.viewport().width()
    assert sum(widths) == viewport  # the name column fills the rest, no blank band
    assert widths[name] == max(widths)
    assert all(widths[i] < 200 for i, c in enumerate(names) if view.model.is_numeric(i)), widths
    longest = int(frame["name"].map(len).to_numpy().argmax())
    row = next(
        r for r in range(view.model.rowCount()) if view.model.row_id(r) == frame.index[longest]
    )
    tip = view.model.data(view.model.index(row, name), Qt.ItemDataRole.ToolTipRole)
    assert tip == frame["name"].iloc[longest]  # the whole name, however it is elided
    # narrower: the name column gives way, the numbers keep their width
    before = widths
    view.resize(1400, 600)
    qtbot.waitUntil(lambda: header.sectionSize(name) < before[name])
    assert [header.sectionSize(i) for i in range(len(names)) if i != name] == [
        w for i, w in enumerate(before) if i != name
    ]
    # a column the user drags stays as dragged
    header.resizeSection(name, 900)
    view.resize(1800, 600)
    qtbot.wait(0)
    assert header.sectionSize(name) == 900
