"""Text for rectangles wide enough to hold it, elided to fit. Drawn in device pixels.

Labels are the slowest part of a flame frame (text shaping), so they are only attempted on
rects at least `MIN_LABEL_PX` wide, and elided strings are cached by (text, width): panning
reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui

from perfview.core.model import units
from perfview.qt.items.quick_axis import QuickAxis

MIN_LABEL_PX = 40.0
PAD_PX = 4.0
TEXT_COLOUR = QtGui.QColor(20, 20, 24)


class LabelPainter:
    """Draws elided names inside device-pixel rects; keeps a small elision cache."""

    def __init__(self, font: QtGui.QFont | None = None, min_px: float = MIN_LABEL_PX) -> None:
        self.font = font or QtGui.QFont()
        self.min_px = min_px
        self._metrics = QtGui.QFontMetricsF(self.font)
        self._cache: dict[tuple[str, int], str] = {}

    def set_font(self, font: QtGui.QFont) -> None:
        self.font = font
        self._metrics = QtGui.QFontMetricsF(font)
        self._cache.clear()

    @property
    def line_height(self) -> float:
        return float(self._metrics.height())

    def elide(self, text: str, width_px: float) -> str:
        key = (text, int(width_px))
        got = self._cache.get(key)
        if got is None:
            if len(self._cache) > 20_000:
                self._cache.clear()
            got = self._metrics.elidedText(text, QtCore.Qt.TextElideMode.ElideRight, key[1])
            self._cache[key] = got
        return got

    def draw(
        self,
        painter: QtGui.QPainter,
        px0: np.ndarray,
        px1: np.ndarray,
        py0: np.ndarray,
        height: float,
        nodes: np.ndarray,
        names: Callable[[np.ndarray], Sequence[str]],
    ) -> int:
        """Label every rect wider than `min_px` (and tall enough for a line); returns how many.

        `px0/px1/py0` are device-pixel left, right and top edges; `names(nodes)` gives texts.
        """
        if height < self._metrics.height() * 0.8 or not len(px0):
            return 0
        wide = np.flatnonzero((px1 - px0) >= self.min_px)
        if not len(wide):
            return 0
        texts = names(nodes[wide])
        painter.setFont(self.font)
        painter.setPen(TEXT_COLOUR)
        ascent = self._metrics.ascent()
        baseline = (height - self._metrics.height()) / 2.0 + ascent
        drawn = 0
        for i, text in zip(wide.tolist(), texts, strict=True):
            room = float(px1[i] - px0[i]) - 2 * PAD_PX
            shown = self.elide(text, room)
            if not shown or shown == "…":
                continue
            painter.drawText(
                QtCore.QPointF(float(px0[i]) + PAD_PX, float(py0[i]) + baseline), shown
            )
            drawn += 1
        return drawn


__all__ = ["MIN_LABEL_PX", "LabelPainter"]


def _time_unit(span_ns: float) -> tuple[float, str]:
    for scale, suffix in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if span_ns >= scale:
            return scale, suffix
    return 1.0, "ns"


class TimeAxis(QuickAxis):
    """Time axis for int64-ns data: ticks read '12.5 ms', one unit chosen from the tick spacing.

    pyqtgraph's SI prefixes would print '1.25e+07 ns'-style labels for nanosecond data; here
    the unit follows the zoom (s → ms → µs → ns), with just enough decimals to tell ticks apart.
    """

    def __init__(self, orientation: str = "top", **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        unit_scale, suffix = _time_unit(max(spacing * 10, 1.0))
        step = spacing / unit_scale
        decimals = max(0, min(6, int(np.ceil(-np.log10(step))) if step > 0 else 0))
        return [f"{v / unit_scale:.{decimals}f} {suffix}" for v in values]


class BytesAxis(QuickAxis):
    """THE byte axis of every memory plot: ticks at 1, 2 or 5 × a power of ten of the unit
    shown (0, 512 KiB, 1 MiB, 1.5 MiB; never 977 KiB, 1.91 MiB), labelled by
    `units.format_byte_tick` (`core.model.units.byte_ticks`). `per_unit`: bytes per data unit,
    for a plot whose data are in MiB (mprof): the ticks are still round in bytes."""

    def __init__(self, orientation: str = "left", per_unit: float = 1.0, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.per_unit = per_unit
        self.enableAutoSIPrefix(False)
        if orientation in ("left", "right"):
            self.setWidth(74)  # '1023 MiB' fits; auto-expansion misses the first layout

    def _count(self, size: float) -> int:
        return max(2, min(8, int(size / (40 if self.orientation in ("left", "right") else 90))))

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        lo, hi = sorted((minVal * self.per_unit, maxVal * self.per_unit))
        ticks = units.byte_ticks(lo, hi, self._count(size))
        self._range = (lo, hi, self._count(size))  # the labels' unit and step follow it
        step = (ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
        return [(step / self.per_unit, [t / self.per_unit for t in ticks])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        lo, hi, count = getattr(self, "_range", (0.0, 0.0, 5))
        in_bytes = [v * self.per_unit for v in values]
        if not hi > lo:
            lo, hi = min(in_bytes, default=0.0), max(in_bytes, default=0.0)
        return units.byte_tick_labels(in_bytes, lo, hi, count)


class TrackAxis(QuickAxis):
    """Left column naming the tracks. Ticks sit at row centres; each line of a label (a
    process over its first thread) is elided to the column on its own.

    The column is as wide as its longest label up to `MAX_FIT`, at least `MIN_WIDTH`, and the
    user drags its right edge to widen or narrow it (the cursor says where)."""

    MIN_WIDTH = 90
    MAX_FIT = 340  # px: past this a label is elided until the user widens the column
    GRIP = 6  # px left of the right edge that start a resize

    def __init__(self, width: int = 190) -> None:
        super().__init__("left")
        self.setWidth(width)
        self.setStyle(tickLength=0, autoExpandTextSpace=False, hideOverlappingLabels=False)
        self._labels: list[tuple[float, str]] = []
        self._resizing = False
        self._user_width = False
        self.setAcceptHoverEvents(True)

    def _metrics(self) -> QtGui.QFontMetricsF:
        return QtGui.QFontMetricsF(self.style.get("tickFont") or QtGui.QFont())

    def set_tracks(self, labels: list[tuple[float, str]]) -> None:
        """`labels`: (row centre, text) pairs; a text may hold two lines."""
        self._labels = labels
        metrics = self._metrics()
        if not self._user_width and labels:
            widest = max(
                metrics.horizontalAdvance(line) for _y, t in labels for line in t.split("\n")
            )
            self.setWidth(int(min(max(widest + 16, self.MIN_WIDTH), self.MAX_FIT)))
        self._elide()

    def _elide(self) -> None:
        metrics = self._metrics()
        room = self.width() - 12
        mode = QtCore.Qt.TextElideMode.ElideMiddle
        ticks = [
            (y, "\n".join(metrics.elidedText(line, mode, room) for line in text.split("\n")))
            for y, text in self._labels
        ]
        self.setTicks([ticks, []])

    def set_label_width(self, width: int) -> None:
        """The user's width for the column (kept over a re-layout)."""
        self._user_width = True
        self.setWidth(int(max(width, self.MIN_WIDTH)))
        self._elide()

    def _on_grip(self, x: float) -> bool:
        return self.width() - self.GRIP <= x <= self.width() + 2

    def hoverEvent(self, ev: Any) -> None:
        if ev.isExit() or not self._on_grip(ev.pos().x()):
            self.unsetCursor()
        else:
            self.setCursor(QtCore.Qt.CursorShape.SplitHCursor)

    def mouseDragEvent(self, ev: Any) -> None:
        if ev.button() != QtCore.Qt.MouseButton.LeftButton:
            super().mouseDragEvent(ev)
            return
        if ev.isStart():
            self._resizing = self._on_grip(ev.buttonDownPos().x())
        if not self._resizing:
            super().mouseDragEvent(ev)  # a drag elsewhere pans, as before
            return
        ev.accept()
        self.set_label_width(int(ev.pos().x()))
        if ev.isFinish():
            self._resizing = False


__all__ += ["TimeAxis", "TrackAxis"]
