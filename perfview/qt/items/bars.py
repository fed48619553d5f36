"""Bars whose bounds are worked out once for each scale of the view, not at every ask.

Qt asks an item for its bounds several times a frame (to clip, to find what the exposed
region holds, to index the scene); pyqtgraph's `BarGraphItem` answers each time by padding
its data's bounds with half a pixel, which costs it the item's device transform and pixel
vectors: 13 asks a frame of a job's timeline took 0.75 ms. The answer changes only with the
data or the view's scale (pyqtgraph reports the latter through `viewTransformChanged`, before
the frame is painted), so it is kept between them.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF


class Bars(pg.BarGraphItem):
    """`pg.BarGraphItem`, its bounding rectangle kept until its data or the view's scale
    change."""

    def __init__(self, **opts: Any) -> None:
        self._bounds: QRectF | None = None
        super().__init__(**opts)

    def setOpts(self, **opts: Any) -> None:
        self._bounds = None
        super().setOpts(**opts)

    def viewTransformChanged(self) -> None:
        self._bounds = None
        super().viewTransformChanged()

    def boundingRect(self) -> QRectF:
        if self._bounds is None:
            self._bounds = super().boundingRect()
        return QRectF(self._bounds)


__all__ = ["Bars"]
