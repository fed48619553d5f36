"""Export: SVG with one <rect> per drawn slice and <text> labels, PNG, CSV/Parquet, trace range."""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from perfview.core.layout import colors
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from tests.conftest import sample

pytestmark = pytest.mark.gui

SVG = "{http://www.w3.org/2000/svg}"
ROCM = "kineto_gpu/hta_mi250_rocm6.2.json.gz"
NCCL = "kineto_gpu/hta_nccl_data.json.gz"


def _palette_rects(root: ET.Element, palette: set[str]) -> int:
    """<rect>s whose fill (inherited from the enclosing <g>) is a slice colour."""
    count = 0

    def walk(el: ET.Element, fill: str | None) -> None:
        nonlocal count
        fill = el.get("fill", fill)
        for child in el:
            if child.tag == SVG + "rect" and child.get("fill", fill) in palette:
                count += 1
            walk(child, fill)

    walk(root, None)
    return count


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("PERFVIEW_SETTINGS", str(path))
    win = MainWindow(Settings(QSettings(str(path), QSettings.Format.IniFormat)))
    qtbot.addWidget(win)
    win.resize(1300, 800)
    win.show()
    return win


def _open(qtbot: Any, window: MainWindow, rel: str, view: str) -> Any:
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as blocker:
        window.open_path(sample(rel))
    tab = blocker.args[0]
    assert tab.show_view(view)
    from perfview.qt.screenshot import settle

    settle()
    return tab


def test_timeline_svg_has_a_rect_per_drawn_slice_and_text_labels(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.qt.export import export_widget
    from perfview.qt.items.labels import LabelPainter

    tab = _open(qtbot, window, ROCM, "timeline")
    view = tab.view_widget("timeline")
    labels: list[str] = []
    elide = LabelPainter.elide

    def record(self: LabelPainter, text: str, width_px: float) -> str:
        shown = elide(self, text, width_px)
        if shown and shown != "…":
            labels.append(shown)
        return shown

    monkeypatch.setattr(LabelPainter, "elide", record)
    out = tmp_path / "timeline.svg"
    assert export_widget(view, out)
    root = ET.parse(out).getroot()  # well-formed XML
    drawn = int(view.batch.stats["visible"])  # rects the export's paint drew
    assert drawn > 50
    palette = {"#{:02x}{:02x}{:02x}".format(*c) for c in colors.PALETTE}
    assert _palette_rects(root, palette) == drawn
    texts = [t.text for t in root.iter(SVG + "text")]
    assert labels
    assert "ProfilerStep#1" in labels
    assert all(label in texts for label in labels)
    # vectors, not a bitmap of the plot: the only pixels are tab bars (a few rows high)
    assert all(float(im.get("height", 0)) < 60 for im in root.iter(SVG + "image"))


def test_screenshot_svg_by_suffix(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt.app import main

    out = tmp_path / "shot.svg"
    assert main(["--screenshot", str(out), "--view", "timeline", str(sample(ROCM))]) == 0
    root = ET.parse(out).getroot()
    assert root.tag == SVG + "svg"
    assert root.get("viewBox") == "0 0 1400 900"
    assert len(list(root.iter(SVG + "rect"))) > 100
    assert "ProfilerStep#1" in [t.text for t in root.iter(SVG + "text")]


def test_export_view_png_csv_parquet(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    from perfview.qt.export import PARQUET_HINT, export_view

    tab = _open(qtbot, window, NCCL, "lanes")
    assert export_view(window, tmp_path / "k.png") is not None
    assert not QImage(str(tmp_path / "k.png")).isNull()
    assert export_view(window, tmp_path / "k.csv") is not None
    header = (tmp_path / "k.csv").read_text().splitlines()[0]
    assert "busy_ns" in header
    target = tmp_path / "k.parquet"
    if importlib.util.find_spec("pyarrow") is None:
        assert export_view(window, target) is None
        assert PARQUET_HINT in window.error_bar.label.text()
        assert not target.exists()
    else:
        import pandas as pd

        assert export_view(window, target) is not None
        assert len(pd.read_parquet(target)) == len(tab.document.table("lanes"))
    assert export_view(window, tmp_path / "k.json") is None  # a table has no trace range


def test_export_timeline_range_as_chrome_trace(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    from perfview.core.analysis.trace_export import overlapping
    from perfview.loaders import FRESH, load
    from perfview.qt.export import export_view

    tab = _open(qtbot, window, NCCL, "timeline")
    view = tab.view_widget("timeline")
    timeline = view.timeline
    lo, hi = timeline.duration_ns // 3, timeline.duration_ns // 2
    view.select_range(lo, hi)
    out = export_view(window, tmp_path / "cut.json")
    assert out is not None
    doc = json.loads(out.read_text())
    assert doc["otherData"]["range_ns"] == [lo, hi]
    back = load(out, options=FRESH)
    assert back.counts["slices"] == len(overlapping(timeline, lo, hi))


def test_big_range_is_written_by_a_worker(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.loaders import FRESH, load
    from perfview.qt import export

    monkeypatch.setattr(export, "SYNC_RANGE_SLICES", 0)
    tab = _open(qtbot, window, NCCL, "timeline")
    view = tab.view_widget("timeline")
    view.fit_all()
    out = export.export_view(window, tmp_path / "all.json")
    assert out == tmp_path / "all.json"
    task = window._export_task
    qtbot.waitUntil(lambda: not task.is_running, timeout=60_000)
    qtbot.waitUntil(lambda: "Exported" in window.statusBar().currentMessage(), timeout=10_000)
    assert load(out, options=FRESH).counts["slices"] == len(view.timeline.events)
