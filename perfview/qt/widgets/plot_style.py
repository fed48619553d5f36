"""Palette-aware pyqtgraph styling, so plots follow the system's light or dark theme.

pyqtgraph defaults to a black background with grey axes regardless of the desktop theme; the
app instead takes the background and text colours from the widget's QPalette.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette

# A qualitative palette readable on light and dark backgrounds (Tableau 10).
SERIES_COLORS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)


def series_color(i: int) -> QColor:
    return QColor(SERIES_COLORS[i % len(SERIES_COLORS)])


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def style_plot(plot: pg.PlotWidget) -> None:
    """Background, axes and grid from the widget's palette."""
    palette = plot.palette()
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    plot.setBackground(base)
    item = plot.getPlotItem()
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(text))
        axis.setTextPen(pg.mkPen(text))
    item.showGrid(x=True, y=True, alpha=0.15)


def muted(palette: QPalette) -> QColor:
    """A colour for secondary marks (brackets, annotations) that reads on the base colour."""
    color = QColor(palette.color(QPalette.ColorRole.Text))
    color.setAlpha(150)
    return color


__all__ = ["SERIES_COLORS", "is_dark", "muted", "series_color", "style_plot"]
