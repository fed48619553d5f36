"""Export what a view shows: SVG with real vector shapes and text, or PNG.

SVG: a `QSvgGenerator` paints the widget tree; graphics views (timeline, icicle, plots) are
painted again from their scenes with `QGraphicsView.render`, so every slice is a `<rect>` and
every label a `<text>` (a plain `QWidget.render` would embed those views as one bitmap; their
area is left out of the widget pass). Menu bars and tab bars are embedded as pixels: they
paint their background last through a clip region, which SVG output cannot express. PNG: the
widget's pixels, as the screenshot does.

File ▸ Export View… (`export_view`) also writes the view's table as CSV or Parquet and, from the
timeline, the selected (or visible) time range as a trimmed Chrome trace
(`core.trace_export`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QPainter, QRegion
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QGraphicsView, QMenuBar, QTabBar, QWidget

from perfview.core.analysis.trace_export import overlapping, write_range
from perfview.core.atomic import atomic_path, write_text
from perfview.qt.tasks import Task

# Ranges with more slices than this are written by a worker (about 0.1 s of work).
SYNC_RANGE_SLICES = 100_000

RASTER_WIDGETS = (QMenuBar, QTabBar)


def _paint_tree(painter: QPainter, widget: QWidget, top: QWidget) -> None:
    """Paint `widget` and its visible children one by one, each at its place in `top`.

    One `QWidget.render` of the whole tree is not enough: on an SVG painter Qt drops the
    children's offsets (every child lands at the top-left corner), and a graphics view's
    viewport comes out as a bitmap. So each widget is rendered alone, under a translated
    painter, and a graphics view's viewport is replaced by its scene, rendered as vectors.
    """
    origin = widget.mapTo(top, QPoint(0, 0)) if widget is not top else QPoint(0, 0)
    painter.save()
    painter.translate(origin)
    painter.setClipRect(QRect(QPoint(0, 0), widget.size()))
    # QWidget.render by name: QGraphicsView hides it behind its own render (the scene's)
    flags = QWidget.RenderFlag.DrawWindowBackground
    port = widget.viewport() if isinstance(widget, QGraphicsView) else None
    if isinstance(widget, RASTER_WIDGETS):
        # these paint their background last through a clip region, which SVG output drops
        # (it would cover their text): embedded as pixels, children included
        painter.drawPixmap(0, 0, widget.grab())
        painter.restore()
        return
    try:
        QWidget.render(widget, painter, QPoint(0, 0), QRegion(), flags)
        if isinstance(widget, QGraphicsView) and port is not None and port.isVisible():
            offset = port.mapTo(widget, QPoint(0, 0))
            target = QRectF(offset.x(), offset.y(), port.width(), port.height())
            painter.setClipRect(target)
            widget.render(painter, target, port.rect(), Qt.AspectRatioMode.IgnoreAspectRatio)
    finally:
        painter.restore()
    for child in widget.children():
        if not isinstance(child, QWidget) or child is port:
            continue
        if child.isVisible() and not child.isWindow():
            _paint_tree(painter, child, top)


def write_svg(widget: QWidget, path: str | Path, title: str = "perfview") -> bool:
    """Paint `widget` into an SVG file at its current size; True when written."""
    size = widget.size()
    # SVG 1.1: clip paths are written (SVG Tiny drops them, and widgets that paint past
    # their edges would then cover their neighbours)
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)
    generator.setFileName(str(path))
    generator.setSize(size)
    generator.setViewBox(QRect(0, 0, size.width(), size.height()))
    # SVG user units = the widget's pixels: items that paint in device pixels (the rect
    # batches reset the painter's transform) then land where the widget pass puts the rest
    generator.setResolution(widget.logicalDpiX())
    generator.setTitle(title)
    generator.setDescription("exported by perfview")
    painter = QPainter()
    if not painter.begin(generator):
        return False
    try:
        _paint_tree(painter, widget, widget)
    finally:
        painter.end()
    return Path(path).is_file()


def write_png(widget: QWidget, path: str | Path) -> bool:
    return bool(widget.grab().save(str(path)))


def export_widget(widget: QWidget, path: str | Path) -> bool:
    """Write `widget` to `path` as SVG or PNG, chosen by the suffix (anything else: PNG)."""
    if str(path).lower().endswith(".svg"):
        return write_svg(widget, path)
    return write_png(widget, path)


# ------------------------------------------------------------------------ File ▸ Export View…

PARQUET_HINT = "Parquet export needs pyarrow: pip install 'perfview[parquet]'"


def visible_frame(table: Any) -> pd.DataFrame:
    """The rows a TableView shows (filtered, in display order), with their real dtypes."""
    proxy, model = table.proxy, table.model
    source_rows = proxy.source_rows(range(proxy.rowCount()))
    positions = np.asarray(model._order, dtype=np.int64)[np.asarray(source_rows, dtype=np.int64)]
    frame: pd.DataFrame = model.frame.iloc[positions].reset_index(drop=True)
    return frame


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    """Parquet through pandas (pyarrow, optional); ImportError carries PARQUET_HINT."""
    if importlib.util.find_spec("pyarrow") is None:
        raise ImportError(PARQUET_HINT)
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def _filters(widget: QWidget | None) -> list[str]:
    filters = ["SVG image (*.svg)", "PNG image (*.png)"]
    if _find(widget, "table_csv") is not None:
        filters += ["CSV table (*.csv)", "Parquet table (*.parquet)"]
    if _find(widget, "x_range") is not None:
        filters.append("Chrome trace JSON, selected or visible range (*.json)")
    return filters


def _find(widget: QWidget | None, method: str) -> Any:
    if widget is None:
        return None
    if hasattr(widget, method):
        return widget
    return next((c for c in widget.findChildren(QWidget) if hasattr(c, method)), None)


def export_view(window: Any, path: str | Path | None = None) -> Path | None:
    """Write the current view to `path` (asking where when None); the suffix picks the form:
    .svg/.png the view's picture, .csv/.parquet its table, .json the timeline's range."""
    tab = window.tabs_controller.current_tab()
    widget = tab.view_widget(tab.current_view()) if tab is not None else None
    if widget is None:
        window.statusBar().showMessage("Nothing to export", 5000)
        return None
    if path is None:
        name = f"{tab.document.path.stem}-{tab.current_view()}.svg"
        start = str(Path(window.settings.last_folder()) / name)
        path, _ = QFileDialog.getSaveFileName(
            window, "Export view", start, ";;".join(_filters(widget))
        )
        if not path:
            return None
    target = Path(path)
    try:
        if _write(widget, tab, target, window):
            return target  # written by a worker; it reports when done
    except (OSError, ImportError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        window.error_bar.show_message(f"perfview: cannot export {target}: {reason}", "error")
        return None
    window.statusBar().showMessage(f"Exported to {target}", 5000)
    return target


def _write(widget: QWidget, tab: Any, target: Path, window: Any = None) -> bool:
    """Write `target`; True when a worker was started to do it (a big trace range)."""
    suffix = target.suffix.lower()
    if suffix in (".csv", ".parquet"):
        table = _find(widget, "table_csv")
        if table is None:
            raise ValueError("this view has no table")
        if suffix == ".csv":
            write_text(target, str(table.table_csv()))
        else:
            write_parquet(visible_frame(table), target)
    elif suffix == ".json":
        timeline_view = _find(widget, "x_range")
        if timeline_view is None:
            raise ValueError("only the timeline exports a trace range")
        lo, hi = (int(v) for v in (tab.document.range or timeline_view.x_range()))
        timeline, name = timeline_view.timeline, tab.document.path.name
        if window is not None and len(overlapping(timeline, lo, hi)) > SYNC_RANGE_SLICES:
            _write_range_in_worker(window, timeline, target, lo, hi, name)
            return True
        write_range(timeline, target, lo, hi, name)
    elif suffix == ".svg":
        with atomic_path(target) as tmp:
            if not write_svg(widget, tmp):
                raise OSError(f"cannot write {target}")
    elif not write_png(widget, target):
        raise OSError(f"cannot write {target}")
    return False


def _write_range_in_worker(
    window: Any, timeline: Any, target: Path, lo: int, hi: int, name: str
) -> Task:
    """A big range (a whole 1 GB trace is ~10 s of formatting) is written off the GUI thread."""
    window.statusBar().showMessage(f"Exporting the range to {target}…")
    task = Task(lambda _p: write_range(timeline, target, lo, hi, name), name="export")
    task.finished.connect(
        lambda n: window.statusBar().showMessage(f"Exported {n:,} slices to {target}", 5000)
    )
    task.failed.connect(
        lambda message: window.error_bar.show_message(
            f"perfview: cannot export {target}: {message}", "error"
        )
    )
    window._export_task = task  # a reference while it runs
    task.start()
    return task


__all__ = ["export_view", "export_widget", "visible_frame", "write_png", "write_svg"]
