"""File ▸ Compare… with several runs per side (tests/data/diff/runs: in `b_*` the function
`parse` does 30 % more work; see tests/core/compare/test_runs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyqtgraph")

from pytestqt.qtbot import QtBot

from perfview.qt.compare_dialog import CompareDialog
from perfview.qt.compare_runs import RunsCompareTab, split_runs
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings

RUNS = Path(__file__).resolve().parent.parent / "data" / "diff" / "runs"
pytestmark = pytest.mark.gui


def side(variant: str) -> str:
    return "; ".join(str(RUNS / f"{variant}_{i}.prof") for i in range(1, 6))


def test_split_runs() -> None:
    assert split_runs("a.prof") == ["a.prof"]
    assert split_runs(" a.prof ;b.prof; ") == ["a.prof", "b.prof"]


def test_five_runs_a_side_open_a_verdict_table(qtbot: QtBot) -> None:
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.compare_opened, timeout=60000) as blocker:
        window.open_compare(side("a"), side("b"))  # `;`-separated: several runs a side
    tab = blocker.args[0]
    assert isinstance(tab, RunsCompareTab)
    assert window.tabs.currentWidget() is tab
    assert tab.title == "5 runs ↔ 5 runs"
    assert tab.view_names() == ["functions"]
    # 5 runs a side, 6 rows tested together (one `small`): the rank test, named beside the box
    assert "Mann-Whitney rank-test interval; Benjamini-Hochberg over 6 rows" in tab.method.text()
    assert tab.confidence.currentText() == "95 %"
    model = tab.tables["functions"].model()
    frame = model.frame  # type: ignore[attr-defined]
    assert list(frame.columns[:2]) == ["verdict", "function"]
    flagged = frame[frame["verdict"].isin(["slower", "faster"])]
    assert list(flagged["function"]) == ["parse"]
    assert list(flagged["verdict"]) == ["slower"]


def test_the_confidence_box_recomputes_off_the_gui_thread(qtbot: QtBot) -> None:
    """Three runs a side (`parse` 30 % slower in B): at 95 % `parse` and the total are slower;
    at 99 % the intervals widen and the total (+7 %) becomes noise, `parse` stays slower."""
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    three = ["; ".join(str(RUNS / f"{v}_{i}.prof") for i in range(1, 4)) for v in "ab"]
    with qtbot.waitSignal(window.compare_opened, timeout=60000) as blocker:
        window.open_compare(*three)
    tab = blocker.args[0]
    assert isinstance(tab, RunsCompareTab)
    frame = tab.tables["functions"].model().frame  # type: ignore[attr-defined]
    parse = frame.set_index("function").loc["parse"]
    assert parse["verdict"] == "slower"
    assert tab.result.comparisons["functions"].total.verdict == "slower"
    assert "asked 95 %" in tab.method.text()
    with qtbot.waitSignal(tab.recomputed, timeout=60000) as done:
        tab.confidence.setCurrentIndex(tab.confidence.findText("99 %"))
    assert done.args == [0.99]
    c = tab.result.comparisons["functions"]
    assert c.confidence == 0.99
    assert c.total.verdict == "noise"
    assert "asked 99 %" in tab.method.text()
    wider = tab.tables["functions"].model().frame.set_index("function")  # type: ignore[attr-defined]
    assert wider.loc["parse", "verdict"] == "slower"
    assert wider.loc["parse", "interval"] != parse["interval"]
    assert list(wider.index) == list(frame["function"])  # the rows keep their order
    flagged = wider[wider["verdict"].isin(["slower", "faster"])]
    assert list(flagged.index) == ["parse"]


def test_dialog_takes_several_files_per_side(qtbot: QtBot) -> None:
    dialog = CompareDialog(None)
    qtbot.addWidget(dialog)
    dialog.path_a.setText(side("a"))
    dialog.path_b.setText(side("b") + "; " + str(RUNS / "missing.prof"))
    dialog.accept()
    assert "missing.prof" in dialog.error.text()
    dialog.path_b.setText(side("b"))
    with qtbot.waitSignal(dialog.compare_requested) as blocker:
        dialog.accept()
    assert split_runs(blocker.args[1]) == split_runs(side("b"))


JOBS = RUNS.parent / "jobs"  # four gloo ranks a job; in `rank/` rank 2 is slower


def test_two_job_folders_open_a_rank_by_rank_table(qtbot: QtBot) -> None:
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.compare_opened, timeout=120000) as blocker:
        window.open_compare(str(JOBS / "a"), str(JOBS / "rank"))
    tab = blocker.args[0]
    assert isinstance(tab, RunsCompareTab)
    assert tab.title == "a ↔ rank"
    assert tab.view_names() == ["ranks", "collectives", "ops"]
    assert "4 ranks" in tab.header.text()
    frame = tab.tables["ranks"].model().frame  # type: ignore[attr-defined]
    assert list(frame.columns[:2]) == ["verdict", "rank"]
    assert list(frame[frame["verdict"] == "slower"]["rank"]) == ["2"]


def test_three_runs_of_a_job_a_side_open_one_sample_per_run(qtbot: QtBot) -> None:
    """tests/data/diff/jobs, jobs_r2, jobs_r3: three recordings of the same four jobs; over
    the runs, rank 2 is the one slower rank of `rank` (see tests/core/compare/test_job_sets.py)."""
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    recordings = [JOBS, JOBS.parent / "jobs_r2", JOBS.parent / "jobs_r3"]
    a, b = ("; ".join(str(r / name) for r in recordings) for name in ("a", "rank"))
    with qtbot.waitSignal(window.compare_opened, timeout=120000) as blocker:
        window.open_compare(a, b)
    tab = blocker.args[0]
    assert isinstance(tab, RunsCompareTab)
    assert tab.title == "3 runs of a ↔ 3 of rank"
    assert tab.view_names() == ["ranks", "collectives", "ops"]
    assert "jobs_r2/a" in tab.header.text()
    frame = tab.tables["ranks"].model().frame  # type: ignore[attr-defined]
    assert list(frame[frame["verdict"].isin(["slower", "faster"])]["rank"]) == ["2"]
    with qtbot.waitSignal(tab.recomputed, timeout=60000):
        tab.confidence.setCurrentIndex(tab.confidence.findText("90 %"))
    assert tab.result.comparisons["ranks"].confidence == 0.9


def test_dialog_takes_a_job_folder_per_side(qtbot: QtBot) -> None:
    dialog = CompareDialog(None)
    qtbot.addWidget(dialog)
    dialog.path_a.setText(str(JOBS / "a"))
    # a side is all folders (runs of a job) or all files
    dialog.path_b.setText(str(JOBS / "rank") + "; " + str(RUNS / "a_1.prof"))
    dialog.accept()
    assert "file not found" in dialog.error.text()
    dialog.path_b.setText(str(JOBS / "rank"))
    with qtbot.waitSignal(dialog.compare_requested) as blocker:
        dialog.accept()
    assert blocker.args[:2] == [str(JOBS / "a"), str(JOBS / "rank")]
