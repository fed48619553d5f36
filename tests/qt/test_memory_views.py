"""Memory views: mprof runs/children/spans/peaks, torch memory curves, line report view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from perfview.core.model import MemoryProfile
from perfview.core.model.units import MIB
from tests.conftest import sample

pytestmark = pytest.mark.gui


def _load(rel: str) -> object:
    from perfview.loaders import load

    return load(sample(rel))


def _y_max(curve: object) -> float:
    _x, y = curve.getOriginalDataset()  # type: ignore[attr-defined]
    return float(np.nanmax(y))


def test_seqsharp_has_one_curve_per_run_and_child_curves(qtbot: object) -> None:
    from perfview.qt.views.memory_view import MprofMemoryView

    bundle = _load("mprof_dat/seqsharp_mprof_children.dat")
    memory = bundle.memory  # type: ignore[attr-defined]
    view = MprofMemoryView(memory)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert len(view.run_curves) == 5
    assert len(view.peak_markers) == 5
    n_children = memory.children.groupby(["run", "child"]).ngroups
    assert n_children == 8
    assert len(view.child_curves) == n_children
    # each run is aligned at its own start: every curve starts at x = 0 or later, near 0
    for curve in view.run_curves:
        x, _y = curve.getOriginalDataset()
        assert 0.0 <= float(x[0]) < 5.0
    # peak 7647 MiB (SOURCES.md) in one of the runs; y is in MiB
    peaks = [_y_max(c) for c in view.run_curves]
    assert max(peaks) == pytest.approx(7647, abs=1)
    assert sum(len(c.getOriginalDataset()[0]) for c in view.run_curves) == 159
    assert "5 runs" in view.summary.text()
    assert "7.47 GiB" in view.summary.text()


@pytest.mark.parametrize(
    ("rel", "peak_mib", "seconds"),
    [
        ("mprof_dat/ctrml_mprofile.dat", 838, 38.4),
        ("mprof_dat/montepython_mprofile_20240116233958.dat", 73, 7.8),
    ],
)
def test_single_run_curve_peak_and_duration(
    qtbot: object, rel: str, peak_mib: float, seconds: float
) -> None:
    from perfview.qt.views.memory_view import MprofMemoryView

    view = MprofMemoryView(_load(rel).memory)  # type: ignore[attr-defined]
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert len(view.run_curves) == 1
    assert view.child_curves == []
    assert _y_max(view.run_curves[0]) == pytest.approx(peak_mib, abs=1)
    x, _ = view.run_curves[0].getOriginalDataset()
    assert float(x[-1]) == pytest.approx(seconds, abs=0.2)


def test_func_spans_are_brackets_with_labels(qtbot: object) -> None:
    from perfview.qt.views.memory_view import MAX_SPAN_LABELS, MprofMemoryView

    t0 = 1_700_000_000_000_000_000
    samples = pd.DataFrame(
        {
            "run": np.zeros(11, dtype=np.int32),
            "ts_ns": t0 + np.arange(11, dtype=np.int64) * 100_000_000,
            "rss_bytes": (np.arange(11, dtype=np.int64) + 10) * MIB,
        }
    )
    n = MAX_SPAN_LABELS + 5
    spans = pd.DataFrame(
        {
            "run": np.zeros(n, dtype=np.int32),
            "name": [f"mod.f{i}" for i in range(n)],
            "start_ns": t0 + np.arange(n, dtype=np.int64) * 10_000_000,
            "end_ns": t0 + np.arange(n, dtype=np.int64) * 10_000_000 + 5_000_000,
            "mem_start": np.full(n, 10 * MIB, dtype=np.int64),
            "mem_end": np.full(n, 12 * MIB, dtype=np.int64),
            "level": np.zeros(n, dtype=np.int16),
        }
    )
    children = pd.DataFrame({"run": [], "child": [], "ts_ns": [], "rss_bytes": []}).astype(
        {"run": "int32", "child": "int32", "ts_ns": "int64", "rss_bytes": "int64"}
    )
    view = MprofMemoryView(MemoryProfile(samples, children, spans, ["python x.py"]))
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert view.span_item is not None
    xs, _ys = view.span_item.getOriginalDataset()
    assert len(xs) == 5 * n  # 4 points + a NaN break per span: one item for all spans
    assert np.isnan(xs[4])
    assert xs[0] == pytest.approx(0.0)
    assert xs[2] == pytest.approx(0.005)
    assert len(view.span_labels) == MAX_SPAN_LABELS
    assert "45 @profile calls" in view.summary.text()


def test_trace_memory_curves(qtbot: object) -> None:
    from perfview.qt.views.memory_view import TraceMemoryView

    timeline = _load("kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json").timeline  # type: ignore[attr-defined]
    mem = timeline.memory
    assert len(mem) > 0
    view = TraceMemoryView(timeline)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    devices = mem.groupby(["device_type", "device_id"]).ngroups
    assert devices <= len(view.curves) <= 2 * devices
    assert _y_max(view.curves[0]) == pytest.approx(mem["total_allocated"].max() / MIB, rel=1e-9)
    view.show_range(0, 1_000_000)
    (lo, hi) = view.plot.getPlotItem().viewRange()[0]
    assert lo == pytest.approx(0.0, abs=1e-9)
    assert hi == pytest.approx(0.001, rel=1e-6)


def test_line_report_view_titanic(qtbot: object) -> None:
    from perfview.qt.views.line_report_view import INC, LineReportView

    report = _load("memprof_text/titanic_memory_profile.txt").lines  # type: ignore[attr-defined]
    view = LineReportView(report)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert view.block_count() == len(report.blocks) == 1
    rows = report.lines[report.lines["block"] == 0].reset_index(drop=True)
    assert view.model.rowCount() == len(rows)
    # The decorator line's increment is the baseline at entry, not growth (not coloured).
    from perfview.core.analysis.profile_tables import growth_increments

    inc = growth_increments(rows).to_numpy()
    grow = int(np.nanargmax(inc))
    color = view.model.index(grow, INC).data(Qt.ItemDataRole.BackgroundRole)
    assert color is not None
    assert color.red() > color.blue()
    assert view.model.index(grow, INC).data().startswith("+")
    assert view.model.index(grow, 0).data() == int(rows["line"].iat[grow])
    never = int(np.flatnonzero(np.isnan(rows["mem_bytes"].to_numpy()))[0])
    assert view.model.index(never, 1).data() == ""
    assert view.model.index(never, INC).data(Qt.ItemDataRole.BackgroundRole) is None


def test_line_report_view_old_format_without_occurrences(qtbot: object) -> None:
    from perfview.qt.views.line_report_view import OCC, LineReportView

    report = _load("memprof_text/axelrod_memory_profiler.log").lines  # type: ignore[attr-defined]
    view = LineReportView(report)
    qtbot.addWidget(view)  # type: ignore[attr-defined]
    assert view.model.rowCount() == 49 or view.model.rowCount() == len(report.lines)
    assert all(view.model.index(r, OCC).data() == "" for r in range(view.model.rowCount()))
