"""GUI pages of CUDA memory snapshots (and memray captures): every page builds and draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.loaders import load
from perfview.qt.document import Document

MIB = 1 << 20


def test_cuda_snapshot_pages(qtbot: object, data_dir: Path) -> None:
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.cuda_memory_view import CudaTimelineView

    document = Document(load(data_dir / "cuda_snapshot_new.pickle"))
    tab = DocumentTab(document)
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    assert tab.view_names() == [
        "timeline", "segments", "allocations", "oom", "icicle", "bottom-up", "sandwich", "query"
    ]  # fmt: skip
    for name in tab.view_names():
        assert tab.show_view(name)
        assert tab.view_widget(name) is not None
    timeline = tab.view_widget("timeline")
    assert isinstance(timeline, CudaTimelineView)
    fills = timeline.chart.fills
    assert 2 <= len(fills) <= 10  # one item per site band, never one per allocation
    top = fills[-1].yData
    assert np.isclose(top.max(), 7 * MIB + 512 * 1024)
    icicle = tab.view_widget("icicle")
    assert icicle.unit == "bytes"  # type: ignore[union-attr]
    assert "MiB" in icicle.tooltip(1)  # type: ignore[union-attr]


def test_cuda_snapshot_without_history(qtbot: object, data_dir: Path) -> None:
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(data_dir / "cuda_snapshot_old.pickle.gz")))
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    assert tab.view_names() == [
        "segments", "allocations", "icicle", "bottom-up", "sandwich", "query"
    ]  # fmt: skip
    for name in tab.view_names():
        assert tab.show_view(name)


def test_memray_pages_and_range_selection(qtbot: object) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.icicle_view import IcicleView
    from perfview.qt.views.memray_pages import MemrayTemporalView
    from tests.conftest import sample

    bundle = load(sample("memray/async_analysis_linux_memray.bin"))
    tab = DocumentTab(Document(bundle))
    qtbot.addWidget(tab)  # type: ignore[attr-defined]
    assert tab.view_names() == [
        "icicle", "bottom-up", "sandwich", "timeline", "allocations", "leaks", "query"
    ]  # fmt: skip
    for name in tab.view_names():
        assert tab.show_view(name)
    peak = tab.view_widget("icicle")
    assert isinstance(peak, IcicleView)
    assert peak.total[0] == bundle.counts["peak_bytes"]
    temporal = tab.view_widget("timeline")
    assert isinstance(temporal, MemrayTemporalView)
    temporal.select_range(-1.0, 1e15)  # everything: every interval's bytes
    assert isinstance(temporal.flame, IcicleView)
    cap = bundle.memray
    assert cap is not None
    assert temporal.flame.total[0] == cap.intervals["size_bytes"].sum()
    temporal.select_range(5e9 + 0.5, 5e9 + 0.5)  # an empty range: nothing
    assert not isinstance(temporal.flame, IcicleView)


def test_compare_two_cuda_snapshots(qtbot: object, data_dir: Path, tmp_path: Path) -> None:
    import pickle

    from perfview.qt.compare_tab import CompareTab
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings
    from perfview.qt.views.compare_view import CompareView

    a = data_dir / "cuda_snapshot_new.pickle"
    data = pickle.loads(a.read_bytes())  # our own fixture: trusted
    data["segments"][0]["blocks"][0]["size"] = 9 * MIB
    b = tmp_path / "b.pickle"
    b.write_bytes(pickle.dumps(data, protocol=4))
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.compare_opened, timeout=30000) as blocker:  # type: ignore[attr-defined]
        window.open_compare(a, b)
    tab = blocker.args[0]
    assert isinstance(tab, CompareTab)
    view = tab.view_widget("live-bytes")
    assert isinstance(view, CompareView)
    assert "+4 MiB" in view.header.text() or "4 MiB" in view.header.text()


def test_run_dialog_offers_the_allocation_modes(qtbot: object, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from perfview.qt.views.run_view import RunDialog
    from perfview.runner.spec import MODES

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    dialog = RunDialog(settings=settings)
    qtbot.addWidget(dialog)  # type: ignore[attr-defined]
    script = tmp_path / "job.py"
    script.write_text("x = 1\n")
    dialog.script.setText(str(script))
    dialog.mode.setCurrentIndex(MODES.index("memray"))
    assert dialog.options.currentIndex() == MODES.index("memray")
    dialog.options.native.setChecked(True)
    spec = dialog.spec()
    assert (spec.mode, spec.options.native) == ("memray", True)
    assert "--native" in spec.record_args()
    dialog.mode.setCurrentIndex(MODES.index("cuda-memory"))
    spec = dialog.spec()
    assert spec.mode == "cuda-memory"
    assert spec.record_args()[:2] == ["--mode", "cuda-memory"]


def test_hovering_a_cuda_memory_band_shows_its_stack(qtbot: object) -> None:
    """As memory_viz shows an allocation's frames on hover: the band under the pointer names
    its site and lists the stack that allocated most under it (the model's frames)."""
    from PySide6.QtCore import QPointF

    from perfview.core.analysis.cuda_memory_views import band_stacks
    from perfview.qt.views.cuda_memory_view import HOVER_HINT, CudaTimelineView
    from tests.conftest import sample

    snap = load(sample("cuda_memory_snapshot/cs336_silmont_mem_snapshot.pickle")).cuda_snapshot
    assert snap is not None
    view = CudaTimelineView(snap)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    view.resize(1200, 700)
    found = qtbot.waitSignal(view.stacks_found, timeout=30_000)  # type: ignore[attr-defined]
    with found, qtbot.waitExposed(view):  # type: ignore[attr-defined]
        view.show()
    x, labels, bands = snap.bands[view.devices[0]]
    expected = band_stacks(snap, labels)
    # the bottom band at the sample where it is thickest, half way up it
    i = int(np.argmax(bands[0]))
    chart = view.chart
    assert chart.band_at(float(x[i]), float(bands[0][i]) / 2) == 0
    box = chart.plot.getPlotItem().vb
    point = QPointF(float(x[i]), float(bands[0][i]) / 2)
    qtbot.waitUntil(lambda: box.viewRect().contains(point))  # type: ignore[attr-defined]
    scene = box.mapViewToScene(point)
    with qtbot.waitSignal(chart.band_hovered) as blocker:  # type: ignore[attr-defined]
        chart.plot.scene().sigMouseMoved.emit(scene)
    assert blocker.args == [0]
    text = view.stack_panel.text()
    assert labels[0] in text
    frame = expected[labels[0]][0]
    assert frame.split("(")[0].strip() in text  # the innermost frame, its arguments cut
    chart.plot.scene().sigMouseMoved.emit(QPointF(-5, -5))  # off the plot: the hint again
    assert view.stack_panel.text() == HOVER_HINT
