"""`Bars` answers for its bounds what pyqtgraph's `BarGraphItem` answers, after the view
zooms, pans, is resized and the data change, while working them out once per scale."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication

from perfview.qt.items.bars import Bars

pytestmark = pytest.mark.gui


def _bars(cls: type[pg.BarGraphItem], n: int) -> pg.BarGraphItem:
    x0 = np.arange(n, dtype=float) * 3.0
    return cls(x0=x0, y0=np.zeros(n) + 0.05, width=np.full(n, 2.0), height=0.18, pen=None)


def test_bars_give_pyqtgraphs_bounds_through_view_changes_and_new_data(qtbot: Any) -> None:
    plot = pg.PlotWidget(background="w")
    qtbot.addWidget(plot)
    plot.resize(800, 400)
    plot.show()
    qtbot.waitExposed(plot)
    ours, theirs = _bars(Bars, 50), _bars(pg.BarGraphItem, 50)
    for item in (ours, theirs):
        plot.addItem(item)
    box = plot.getViewBox()
    asked = 0
    base = pg.BarGraphItem.boundingRect

    def counted(item: pg.BarGraphItem) -> Any:
        nonlocal asked
        asked += item is ours
        return base(item)

    pg.BarGraphItem.boundingRect = counted  # type: ignore[method-assign]
    try:
        for x, y, size in [
            ((0, 150), (0, 1), (800, 400)),
            ((10, 12), (0, 1), (800, 400)),  # zoomed in: the padding is a smaller span
            ((110, 112), (0, 1), (800, 400)),  # panned
            ((110, 112), (0, 1), (500, 300)),  # resized
        ]:
            plot.resize(*size)
            box.setRange(xRange=x, yRange=y, padding=0)
            QApplication.processEvents()
            plot.grab()
            asked = 0
            for _ in range(5):
                assert ours.boundingRect() == base(theirs)
            assert asked == 0  # kept since the frame was painted
        for item in (ours, theirs):
            item.setOpts(
                x0=np.arange(10, dtype=float) * 40.0,
                y0=np.full(10, 0.5),
                width=np.full(10, 5.0),
            )
        assert ours.boundingRect() == base(theirs)
    finally:
        pg.BarGraphItem.boundingRect = base  # type: ignore[method-assign]
