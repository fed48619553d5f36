"""Horizontal rules across the whole view: the line above each rank of a job's timeline.

A `PlotDataItem` of line pairs drew them before, and pyqtgraph worked its bounds out again
at each move of the view (the data's minimum and maximum, padded by a pixel: ~0.3 ms an
ask, four asks a frame). Rules span every x, so their bounds are known once, in data
units, and a frame draws only the rules in view, across it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

_WIDE = 1e18  # data units either side: as wide as any view


class Rules(pg.GraphicsObject):
    """Horizontal lines at heights `ys`, across the whole view, in `pen`."""

    def __init__(self, ys: Sequence[float] | np.ndarray, pen: QtGui.QPen) -> None:
        super().__init__()
        self._ys = np.sort(np.asarray(ys, dtype=np.float64))
        self._pen = QtGui.QPen(pen)
        if len(self._ys):
            lo, hi = float(self._ys[0]), float(self._ys[-1])
            self._bounds = QtCore.QRectF(-_WIDE, lo - 1.0, 2 * _WIDE, hi - lo + 2.0)
        else:
            self._bounds = QtCore.QRectF()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(self, painter: QtGui.QPainter, *_args: Any) -> None:
        view = self.viewRect()
        if view is None or not len(self._ys):
            return
        top, bottom = sorted((view.top(), view.bottom()))
        first = int(np.searchsorted(self._ys, top - 1.0))
        last = int(np.searchsorted(self._ys, bottom + 1.0, side="right"))
        # past both edges: a line's last pixel is not drawn, and the view's edge must be
        left, right = view.left() - view.width(), view.right() + view.width()
        painter.setPen(self._pen)
        painter.drawLines([QtCore.QLineF(left, y, right, y) for y in self._ys[first:last].tolist()])


__all__ = ["Rules"]
