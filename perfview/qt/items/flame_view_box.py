"""The navigation the timeline and the icicle share: a pyqtgraph ViewBox whose y never zooms.

Kept apart from `rect_batch` (what draws the rects): this is how the user moves over them.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6 import QtCore


class FlameViewBox(pg.ViewBox):
    """Navigation shared by the timeline and the icicle.

    Wheel zooms x at the cursor (Shift/Alt+wheel scrolls rows); left-drag pans; Shift+drag or
    right-drag selects an x range; click and double-click are reported in data coordinates.
    The y scale stays fixed (rows keep their pixel height), so only x ever zooms.
    """

    clicked = QtCore.Signal(float, float)
    double_clicked = QtCore.Signal(float, float)
    range_selected = QtCore.Signal(float, float)
    range_dragging = QtCore.Signal(float, float)

    def __init__(self) -> None:
        super().__init__(enableMenu=False)
        self.setMouseEnabled(x=True, y=False)
        self._sel_start: float | None = None
        self._content_rows = 1.0
        self._row_px = 18.0
        self.sigResized.connect(lambda: self.show_rows_from(None))

    def set_content_rows(self, rows: float, row_px: float) -> None:
        """Rows of content and the fixed pixel height of one row (y never zooms)."""
        self._content_rows = float(rows)
        self._row_px = float(row_px)
        self.show_rows_from(-0.5)

    def visible_rows(self) -> float:
        return max(self.height(), 1.0) / self._row_px

    def show_rows_from(self, top: float | None) -> None:
        """Scroll so row `top` is at the top (None: keep the current top), rows at row_px.

        The y limit grows with the window: pyqtgraph squeezes a range that is taller than
        its limits, which would stretch the rows of a short trace to fill the view.
        """
        if top is None:
            _, (top, _bottom) = self.viewRange()
        rows = self.visible_rows()
        self.setLimits(yMin=-0.5, yMax=max(self._content_rows + 1.0, rows - 0.5))
        top = max(min(top, self._content_rows + 1.0 - rows), -0.5)
        self.setYRange(top, top + rows, padding=0)

    def zoom_x(self, factor: float, center: float | None = None) -> None:
        """Zoom x by `factor` (< 1 zooms in) around data x `center` (default: the middle)."""
        (lo, hi), _ = self.viewRange()
        c = (lo + hi) / 2 if center is None else center
        self.setXRange(c - (c - lo) * factor, c + (hi - c) * factor, padding=0)

    def pan_x(self, fraction: float) -> None:
        (lo, hi), _ = self.viewRange()
        d = (hi - lo) * fraction
        self.setXRange(lo + d, hi + d, padding=0)

    def scroll_rows(self, rows: float) -> None:
        _, (top, bottom) = self.viewRange()
        self.setYRange(top + rows, bottom + rows, padding=0)

    def wheelEvent(self, ev: Any, axis: Any = None) -> None:
        delta = ev.delta() if hasattr(ev, "delta") else ev.angleDelta().y()
        mods = ev.modifiers()
        if mods & (
            QtCore.Qt.KeyboardModifier.ShiftModifier | QtCore.Qt.KeyboardModifier.AltModifier
        ):
            self.scroll_rows(-delta / 40.0)
        else:
            center = self.mapToView(ev.pos()).x()
            self.zoom_x(0.999**delta, center)
        ev.accept()

    def mouseClickEvent(self, ev: Any) -> None:
        if ev.button() != QtCore.Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        ev.accept()
        pos = self.mapToView(ev.pos())
        if ev.double():
            self.double_clicked.emit(pos.x(), pos.y())
        else:
            self.clicked.emit(pos.x(), pos.y())

    def mouseDragEvent(self, ev: Any, axis: Any = None) -> None:
        select = ev.button() == QtCore.Qt.MouseButton.RightButton or (
            ev.button() == QtCore.Qt.MouseButton.LeftButton
            and ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier
        )
        ev.accept()
        if select:
            x = self.mapToView(ev.pos()).x()
            if ev.isStart() or self._sel_start is None:
                self._sel_start = self.mapToView(ev.buttonDownPos()).x()
            lo, hi = sorted((self._sel_start, x))
            if ev.isFinish():
                self._sel_start = None
                self.range_selected.emit(lo, hi)
            else:
                self.range_dragging.emit(lo, hi)
            return
        if ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        delta = self.mapToView(ev.lastPos()) - self.mapToView(ev.pos())
        self.translateBy(x=delta.x(), y=delta.y())


__all__ = ["FlameViewBox"]
