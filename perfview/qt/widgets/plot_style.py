"""Palette-aware pyqtgraph styling, so plots follow the system's light or dark theme.

pyqtgraph defaults to a black background with grey axes regardless of the desktop theme; the
app instead takes the background and text colours from the widget's QPalette.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QSizePolicy

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


def side_legend(plot: pg.PlotWidget) -> pg.LegendItem:
    """The plot's legend in a column of its own right of the data, never over it (a legend
    inside the view box hid the first seconds of every memory curve). Named items added to
    the plot join it as with pyqtgraph's `addLegend`. Palette text: pyqtgraph's default grey
    is unreadable on a light background."""
    palette = plot.palette()
    item = plot.getPlotItem()
    legend = pg.LegendItem(labelTextColor=palette.color(QPalette.ColorRole.Text))
    legend.setParentItem(item)
    # its own height, at the top: stretched to the view box's, its rows drifted apart
    legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
    item.layout.addItem(legend, 2, 3)  # row 2: the view box's; column 3: right of the right axis
    item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
    item.layout.setColumnStretchFactor(3, 0)
    item.legend = legend  # named items added from now on are listed, as addLegend does
    return legend


def muted(palette: QPalette) -> QColor:
    """A colour for secondary marks (brackets, annotations) that reads on the base colour."""
    color = QColor(palette.color(QPalette.ColorRole.Text))
    color.setAlpha(150)
    return color


__all__ = ["SERIES_COLORS", "is_dark", "muted", "series_color", "side_legend", "style_plot"]
