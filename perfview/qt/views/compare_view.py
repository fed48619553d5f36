"""Two runs side by side: totals header, swap button, delta table and a differential icicle.

Built from a `core.compare.diff.Comparison` only (never from paths): the core did the joining,
this view only shows it. The icicle is the differential flame graph convention: widths are run
B's costs (`total_ns` of the merged tree is B's), colours say what changed in each frame's *own*
time (self delta when the tree has it, else total delta): red slower, blue faster, grey within
a tenth of the largest change. Hover text gives both runs' values.

Rows are shown by the size of their change, |Δ| largest first, whichever way it went: a big
speed-up matters as much as a slowdown when reading a diff. A delegate tints each row by its
status (red slower, blue faster, green new, grey gone) without touching the shared table model.
`compact=True` drops the header and swap button, for the compare tab that owns one of each.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QPointF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from perfview.core.compare import diff_views
from perfview.core.compare.diff import (
    STATUS_DOWN,
    STATUS_GONE,
    STATUS_NEW,
    STATUS_UP,
    Comparison,
    pct_change,
    unit_of,
)
from perfview.core.layout import colors, flame
from perfview.core.model.units import Unit, format_value
from perfview.qt.items.rect_batch import RectBatchItem
from perfview.qt.models.table_model import RAW_ROLE
from perfview.qt.views.table_view import TableView

STEPS = 11  # diverging palette size (odd: the middle bucket is "unchanged")
MIN_ROWS = 14.0


def _rgb_hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _signed(value: float, unit: Unit) -> str:
    if math.isnan(value):
        return ""
    sign = "+" if value > 0 else "-" if value < 0 else "±"
    return sign + format_value(abs(value), unit)


def _pct(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "new" if value > 0 else "-inf %"
    return f"{value:+.1f} %"


# (row tint, status-cell colour, text colour or None) per status; "=" keeps the plain row.
STATUS_COLOURS: dict[str, tuple[str, str, str | None]] = {
    STATUS_UP: ("#fdecea", "#f5b7b1", None),
    STATUS_DOWN: ("#e8f0fb", "#aecbf0", None),
    STATUS_NEW: ("#e9f7ec", "#a9dfb5", None),
    STATUS_GONE: ("#f2f2f2", "#d5d5d5", "#7a7a7a"),
}
STATUS_TEXT = {STATUS_UP: "▲ +", STATUS_DOWN: "▼ −", STATUS_NEW: "new", STATUS_GONE: "gone"}


class StatusDelegate(QStyledItemDelegate):
    """Tints a row by the raw value of its `status` column: the colour says what changed."""

    def __init__(self, status_column: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status_column = status_column

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        status = index.sibling(index.row(), self.status_column).data(RAW_ROLE)
        is_status = index.column() == self.status_column
        if is_status:
            option.displayAlignment = Qt.AlignmentFlag.AlignCenter  # type: ignore[attr-defined]
        colours = STATUS_COLOURS.get(str(status))
        if colours is None:
            return
        row_tint, cell, text = colours
        option.backgroundBrush = QBrush(QColor(cell if is_status else row_tint))
        if text is not None:
            option.palette.setColor(QPalette.ColorRole.Text, QColor(text))
        if is_status:
            option.text = STATUS_TEXT.get(str(status), str(status))  # type: ignore[attr-defined]


def table_frame(comparison: Comparison) -> tuple[pd.DataFrame, dict[str, str], dict[str, Any]]:
    """The delta table for display (status first), with headers and units per column.

    `<m>_delta` and `<m>_pct` have no unit suffix of their own, so units are given explicitly.
    """
    table = comparison.table
    text = [c for c in [*comparison.key, *comparison.info] if c != "nth"]
    ordered = [comparison.metric, *[m for m in comparison.metrics if m != comparison.metric]]
    cols = ["status", *text]
    headers: dict[str, str] = {}
    units: dict[str, Any] = {}
    for m in ordered:
        short = m.removesuffix("_ns").removesuffix("_bytes").replace("_", " ")
        for suffix, label in (("a", f"{short} A"), ("b", f"{short} B"), ("delta", f"Δ {short}")):
            cols.append(f"{m}_{suffix}")
            headers[f"{m}_{suffix}"] = label
            units[f"{m}_{suffix}"] = unit_of(m)
        cols.append(f"{m}_pct")
        headers[f"{m}_pct"] = f"Δ% {short}"
        units[f"{m}_pct"] = Unit.PERCENT
    headers["status"] = "status"
    frame = table[cols]
    spec = diff_views.VIEWS.get(comparison.view)
    if spec is None or spec.sort:  # by |Δ|, largest change first (ordered views keep order)
        size = np.abs(np.nan_to_num(table[f"{comparison.metric}_delta"].to_numpy(np.float64)))
        frame = frame.iloc[np.argsort(-size, kind="stable")]
    return frame.reset_index(drop=True), headers, units


def summary_html(comparison: Comparison) -> str:
    """One line: what the total means, A and B, and the change (coloured like the icicle)."""
    c = comparison
    unit = c.total_unit
    pct = c.total_delta_pct
    colour = _rgb_hex(colors.diverging_palette(STEPS)[-1 if pct > 0 else 0 if pct < 0 else 5])
    return (
        f"{c.total_label}: <b>A</b> {format_value(c.total_a, unit)} → "
        f"<b>B</b> {format_value(c.total_b, unit)} "
        f"<b style='color:{colour}'>{_pct(pct)}</b> ({_signed(c.total_b - c.total_a, unit)})"
    )


class CompareView(QWidget):
    """Shows one Comparison; `swap()` exchanges A and B (recomputed by the core)."""

    swapped = Signal(object)  # the new Comparison

    def __init__(
        self, comparison: Comparison, parent: QWidget | None = None, *, compact: bool = False
    ) -> None:
        super().__init__(parent)
        self.compact = compact
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.swap_button = QToolButton(self)
        self.swap_button.setText("Swap A ↔ B")
        self.swap_button.setToolTip("Use B as the baseline and A as the new run")
        self.swap_button.clicked.connect(self.swap)
        self.legend = QLabel(self)
        self.legend.setTextFormat(Qt.TextFormat.RichText)

        self.plot = pg.PlotWidget(parent=self)
        self.plot.setBackground("w")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")  # raw ns ticks say little; hover text gives the values
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().invertY(True)
        self.plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.icicle = RectBatchItem(names=self._node_names, palette=colors.diverging_palette(STEPS))
        self.plot.addItem(self.icicle)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)

        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.swap_button, 0, Qt.AlignmentFlag.AlignTop)
        self.swap_button.setVisible(not compact)
        self.icicle_box = QWidget(self)
        box = QVBoxLayout(self.icicle_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.legend)
        box.addWidget(self.plot, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self.table_view: TableView | None = None
        self.comparison = comparison
        self._colour_values = np.zeros(0)
        self.set_comparison(comparison)

    # --- content ---------------------------------------------------------------------------
    def set_comparison(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.header.setText(summary_html(comparison) if self.compact else self.header_html())
        frame, headers, units = table_frame(comparison)
        if self.table_view is not None:
            self.table_view.setParent(None)
            self.table_view.deleteLater()
        self.table_view = TableView(
            frame, kind="compare", headers=headers, units=units, stretch_column=None
        )
        self.status_delegate = StatusDelegate(0, self.table_view.table)
        self.table_view.table.setItemDelegate(self.status_delegate)
        self.splitter.insertWidget(0, self.table_view)
        if self.splitter.indexOf(self.icicle_box) < 0:
            self.splitter.addWidget(self.icicle_box)
            self.splitter.setSizes([1000, 1000])  # proportions: table and icicle share the tab
        self._set_tree()

    def swap(self) -> None:
        """Exchange A and B: the table re-sorts, statuses and icicle colours flip."""
        self.set_comparison(self.comparison.swapped())
        self.swapped.emit(self.comparison)

    def header_html(self) -> str:
        c = self.comparison
        return (
            f"<b>A</b> {c.path_a.name} &nbsp;·&nbsp; <b>B</b> {c.path_b.name} &nbsp;·&nbsp; "
            f"{summary_html(c)}<br>"
            f"<small>view {c.view}, rows sorted by |Δ {c.metric}|; "
            f"A = {c.path_a}, B = {c.path_b}</small>"
        )

    def _set_tree(self) -> None:
        tree = self.comparison.tree
        self.icicle_box.setVisible(tree is not None)
        if tree is None:
            self.icicle.set_rects(flame.Rects.empty())
            return
        key = "self_delta" if "self_delta" in tree.metrics else "delta"
        values = np.asarray(tree.metrics[key], dtype=np.float64)
        limit = float(np.abs(values[1:]).max(initial=0.0)) if len(values) > 1 else 0.0
        self._colour_values = values
        buckets = colors.diverging_buckets(values, limit, STEPS)
        rects = flame.layout(tree, "total_ns", buckets=buckets)
        self.icicle.set_rects(rects)
        if len(rects):
            self.plot.setXRange(float(rects.x0.min()), float(rects.x1.max()), padding=0)
            # At least MIN_ROWS rows of height, so a shallow tree keeps readable bar heights.
            self.plot.setYRange(0, max(float(rects.row.max()) + 1, MIN_ROWS), padding=0)
        self.legend.setText(self.legend_html(limit, key))

    def legend_html(self, limit: float, key: str) -> str:
        palette = colors.diverging_palette(STEPS)
        unit = unit_of("total_ns")
        what = "own time" if key == "self_delta" else "total time"
        swatch = "<span style='background:{};'>&nbsp;&nbsp;&nbsp;&nbsp;</span>"
        return (
            f"Colour = change in {what} (B − A), width = B. "
            f"{swatch.format(_rgb_hex(palette[-1]))} slower &nbsp; "
            f"{swatch.format(_rgb_hex(palette[STEPS // 2]))} unchanged &nbsp; "
            f"{swatch.format(_rgb_hex(palette[0]))} faster &nbsp; "
            f"(full colour at ±{format_value(limit, unit)})"
        )

    # --- hover -----------------------------------------------------------------------------
    def _node_names(self, nodes: np.ndarray) -> list[str]:
        tree = self.comparison.tree
        if tree is None:
            return []
        return [tree.name(int(n)) for n in nodes.tolist()]

    def hover_text(self, node: int) -> str:
        """Tooltip of an icicle node: its name, both runs' totals, delta and Δ%."""
        tree = self.comparison.tree
        if tree is None or not 0 <= node < len(tree):
            return ""
        m = tree.metrics
        a, b = float(m["total_a"][node]), float(m["total_b"][node])
        lines = [
            tree.name(node),
            f"A: {format_value(a, Unit.NS)}   B: {format_value(b, Unit.NS)}",
            f"Δ {_signed(b - a, Unit.NS)} ({_pct(pct_change(a, b))})",
        ]
        if "self_a" in m:
            sa, sb = float(m["self_a"][node]), float(m["self_b"][node])
            lines.append(f"self A: {format_value(sa, Unit.NS)}   B: {format_value(sb, Unit.NS)}")
        return "\n".join(lines)

    def _on_mouse_moved(self, pos: QPointF) -> None:
        point = self.plot.getViewBox().mapSceneToView(pos)
        node = self.icicle.node_at(point.x(), point.y())
        text = self.hover_text(node) if node >= 0 else ""
        self.plot.setToolTip(text)
        if text:
            QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(pos)), text, self.plot)


__all__ = ["STATUS_COLOURS", "CompareView", "StatusDelegate", "summary_html", "table_frame"]
