"""Compare tabs opened the ways a user opens them: File ▸ Compare, --compare, the Runs dialog.

Real pairs: the recorded cProfile / mprof / memory_profiler pairs in tests/data/diff (run B
made `hot` slower and allocates 3x the memory), and the two HTA rank traces from the samples.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyqtgraph")

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QStyleOptionViewItem

from perfview.qt.compare_tab import CompareDialog, CompareTab, side_labels
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.qt.views.compare_view import STATUS_COLOURS, CompareView
from tests.conftest import sample

DIFF = Path(__file__).resolve().parent.parent / "data" / "diff"
pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot) -> MainWindow:
    win = MainWindow(Settings.ephemeral())
    qtbot.addWidget(win)
    return win


def open_pair(qtbot, window: MainWindow, a: Path, b: Path) -> CompareTab:
    with qtbot.waitSignal(window.compare_opened, timeout=30000) as blocker:
        window.open_compare(a, b)
    tab = blocker.args[0]
    assert isinstance(tab, CompareTab)
    assert window.tabs.currentWidget() is tab
    return tab


def row_tint(view: CompareView, row: int) -> str:
    """The background the status delegate paints on a row's first text cell."""
    assert view.table_view is not None
    proxy = view.table_view.proxy
    option = QStyleOptionViewItem()
    index: QModelIndex = proxy.index(row, 1)
    view.status_delegate.initStyleOption(option, index)
    return option.backgroundBrush.color().name()


def cell(view: CompareView, row: int, column: str) -> str:
    assert view.table_view is not None
    model = view.table_view.model
    return model.display(row, model.column_index(column))


def test_side_labels_add_folders_only_when_names_collide() -> None:
    assert side_labels(Path("/x/a.prof"), Path("/y/b.prof")) == ("a.prof", "b.prof")
    assert side_labels(Path("/r/1/p.prof"), Path("/r/2/p.prof")) == ("1/p.prof", "2/p.prof")


def test_diff_all_builds_every_view_of_a_trace_pair() -> None:
    from perfview.core.compare.diff import diff_all
    from perfview.core.compare.diff_views import first_step_ns
    from perfview.loaders import load

    a = load(sample("kineto_gpu/hta_sampled_rank-0.json.gz"))
    b = load(sample("kineto_gpu/hta_sampled_rank-1.json.gz"))
    comparisons, errors = diff_all(a, b)
    assert list(comparisons) == ["ops", "ops-by-shape", "kernels", "steps"]
    assert errors == {}
    assert comparisons["steps"].total_a == pytest.approx(615_120_000)
    assert a.timeline is not None
    assert first_step_ns(a.timeline) == 852_545_000


def test_pstats_pair_slowed_function_first_and_red(qtbot, window: MainWindow) -> None:
    tab = open_pair(qtbot, window, DIFF / "run_a.prof", DIFF / "run_b.prof")
    assert tab.view_names() == ["functions"]
    assert "run_a.prof" in tab.header.text()
    assert "run_b.prof" in tab.header.text()
    assert not tab.match_combo.isHidden()
    view = tab.view_widget("functions")
    assert isinstance(view, CompareView)
    assert cell(view, 0, "function") == "hot"
    assert cell(view, 0, "status") == "+"
    assert cell(view, 0, "tottime_ns_pct") == "185.0 %"
    assert row_tint(view, 0) == STATUS_COLOURS["+"][0]  # red: slower
    assert view.comparison.tree is not None  # the differential icicle is there
    assert "slower" in view.legend.text()

    # Swap: B becomes the baseline, `hot` is still the largest change but now faster (blue).
    with qtbot.waitSignal(tab.updated, timeout=10000):
        tab.swap_button.click()
    assert tab.result.a.path.name == "run_b.prof"
    swapped = tab.view_widget("functions")
    assert isinstance(swapped, CompareView)
    assert cell(swapped, 0, "function") == "hot"
    assert cell(swapped, 0, "status") == "-"
    assert row_tint(swapped, 0) == STATUS_COLOURS["-"][0]

    # Matching by name only recomputes: the key is the bare function name.
    with qtbot.waitSignal(tab.updated, timeout=10000):
        tab.match_combo.setCurrentIndex(tab.match_combo.findData("name"))
    assert tab.result.match == "name"
    assert tab.result.comparisons["functions"].key == ["function"]


def test_trace_pair_tables_and_linked_timelines(qtbot, window: MainWindow) -> None:
    a = sample("kineto_gpu/hta_sampled_rank-0.json.gz")
    b = sample("kineto_gpu/hta_sampled_rank-1.json.gz")
    tab = open_pair(qtbot, window, a, b)
    assert tab.view_names() == ["ops", "ops-by-shape", "kernels", "steps", "timelines", "structure"]
    assert tab.match_combo.isHidden()  # trace keys do not depend on the match rule
    for name in ("ops", "ops-by-shape", "kernels"):
        view = tab.view_widget(name)
        assert isinstance(view, CompareView)
        assert view.table_view is not None
        assert view.table_view.model.rowCount() > 100
    steps = tab.view_widget("steps")
    assert isinstance(steps, CompareView)
    assert [cell(steps, i, "step") for i in range(4)] == ["#0", "#1", "mean", "median"]
    assert cell(steps, 0, "label") == "ProfilerStep#551"

    assert tab.show_view("timelines")
    pair = tab.view_widget("timelines")
    from perfview.qt.views.compare_timelines import CompareTimelines

    assert isinstance(pair, CompareTimelines)
    assert pair.step_a == 852_545_000  # first ProfilerStep#551 of each rank
    assert pair.step_b == 852_184_000
    assert pair.view_a.timeline is not pair.view_b.timeline
    # Zoom A: B follows, shifted so the first steps stay on top of each other.
    pair.view_a.viewbox.setXRange(1.0e9, 1.2e9, padding=0)
    lo_b, hi_b = pair.view_b.x_range()
    assert lo_b == pytest.approx(1.0e9 - pair.offset, abs=1.0)
    assert hi_b == pytest.approx(1.2e9 - pair.offset, abs=1.0)
    # And the other way round.
    pair.view_b.viewbox.setXRange(0.9e9, 1.0e9, padding=0)
    lo_a, hi_a = pair.view_a.x_range()
    assert lo_a == pytest.approx(0.9e9 + pair.offset, abs=1.0)
    assert hi_a == pytest.approx(1.0e9 + pair.offset, abs=1.0)


def test_mprof_pair_overlays_two_curves(qtbot, window: MainWindow) -> None:
    tab = open_pair(qtbot, window, DIFF / "run_a.dat", DIFF / "run_b.dat")
    assert tab.view_names() == ["memory"]
    from perfview.qt.views.compare_memory import CompareMemoryView

    view = tab.view_widget("memory")
    assert isinstance(view, CompareMemoryView)
    assert view.curve_count() == 2
    assert len(view.curves["A"]) == len(view.curves["B"]) == 1
    assert view.curves["B"][0].opts["pen"].style() != view.curves["A"][0].opts["pen"].style()
    # B's curve starts at 0 s like A's: aligned at each run's start.
    assert view.curves["B"][0].xData[0] == 0.0
    assert "peak" in view.header.text()
    assert "+107.7 %" in view.header.text()
    assert view.peaks == (52854784.0, 109760512.0)


def test_line_reports_pair(qtbot, window: MainWindow) -> None:
    tab = open_pair(qtbot, window, DIFF / "run_a_lines.txt", DIFF / "run_b_lines.txt")
    view = tab.view_widget("lines")
    assert isinstance(view, CompareView)
    assert cell(view, 0, "content") == "blocks.append(bytearray(1 << 20))"
    assert cell(view, 0, "status") == "+"


def test_mismatched_formats_report_an_error(qtbot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.load_failed, timeout=30000) as blocker:
        window.open_compare(DIFF / "run_a.prof", DIFF / "run_a.dat")
    assert "cannot compare a pstats file with a mprof file" in blocker.args[1]
    assert window.tabs.count() == 0


def test_compare_dialog_prefills_current_file(qtbot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.document_opened, timeout=30000):
        window.open_path(DIFF / "run_a.prof")
    dialog = window.runs_controller.compare_dialog()
    assert isinstance(dialog, CompareDialog)
    assert dialog.path_a.text() == str(DIFF / "run_a.prof")
    dialog.path_b.setText(str(DIFF / "missing.prof"))
    dialog.compare_button.click()
    assert "file not found" in dialog.error.text()
    dialog.path_b.setText(str(DIFF / "run_b.prof"))
    with qtbot.waitSignal(window.compare_opened, timeout=30000) as blocker:
        dialog.compare_button.click()
    assert blocker.args[0].result.b.path.name == "run_b.prof"


def test_screenshot_of_a_comparison(qtbot, tmp_path: Path) -> None:
    from perfview.qt.app import main

    out = tmp_path / "compare.png"
    args = [
        "--screenshot",
        str(out),
        "--compare",
        str(DIFF / "run_a.prof"),
        str(DIFF / "run_b.prof"),
    ]
    assert main(args) == 0
    assert out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_runs_dialog_compare_opens_a_tab(qtbot, window: MainWindow, tmp_path: Path) -> None:
    from perfview.runner.spec import RunRecord, RunSpec, prepare_output

    outputs = []
    for name in ("run_a.prof", "run_b.prof"):
        spec, folder = prepare_output(RunSpec("cprofile", str(DIFF / "diffwork.py")), tmp_path)
        assert folder is not None
        assert spec.output is not None
        shutil.copy(DIFF / name, spec.output)
        RunRecord.start(spec, folder).finish("ok", 0)
        outputs.append(spec.output)
    controller = window.runs_controller.run_dock().controller
    controller.runs_root = tmp_path
    window.runs_controller.show_runs()
    dialog = controller.runs_dialog
    assert dialog is not None
    assert not dialog.compare_button.isEnabled()  # one row selected
    dialog.table.selectAll()
    assert dialog.compare_button.isEnabled()
    with qtbot.waitSignal(window.compare_opened, timeout=30000) as blocker:
        dialog.compare_button.click()
    tab = blocker.args[0]
    assert str(tab.result.a.path) == outputs[0]  # the older run is the baseline
    assert str(tab.result.b.path) == outputs[1]
    view = tab.view_widget("functions")
    assert cell(view, 0, "function") == "hot"
