"""Job page (issue 15, GUI): a folder of rank traces is a document of kind "job"; its tabs are
the page registry's, its tables the `perfview summary` views, and it reaches the window only by
signals (a rank to open, the opened view, a failure)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from perfview.core import pages
from perfview.core.analysis.torch.job import document, heatmap
from perfview.core.pages import summary
from perfview.jobs import open_job
from tests.conftest import sample
from tests.jobs.test_job import needs_ranks

pytestmark = pytest.mark.gui

RANK0 = "kineto_gpu/hta_sampled_rank-0.json.gz"
RANK1 = "kineto_gpu/hta_sampled_rank-1.json.gz"


def _ranks_folder(tmp_path: Path) -> Path:
    """Two ranks under names that say nothing: their ranks come from distributedInfo."""
    shutil.copy(sample(RANK0), tmp_path / "first.json.gz")
    shutil.copy(sample(RANK1), tmp_path / "second.json.gz")
    return tmp_path


def test_job_view_shows_every_page_and_the_straggler(qtbot: Any) -> None:
    from perfview.qt.views.job_view import JobView, PreparedJob

    folder = needs_ranks()[0]
    job = open_job([folder], workers=1)
    doc = document(job, Path("sample"))
    view = JobView(PreparedJob.of(doc))
    qtbot.addWidget(view)
    tabs = pages.tabs_for(doc)
    assert view.page_names() == [t.name for t in tabs]
    assert [view.pages.tabText(i) for i in range(view.pages.count())] == [t.title for t in tabs]
    assert view.tab_title == "Job: sample"
    for tab in tabs:
        if tab.table is not None:  # the same table `perfview summary FOLDER --view NAME` prints
            assert view.frames[tab.name].equals(summary.summarize(doc, tab.table)), tab.name
    assert view.tables["ranks"].model.rowCount() == len(job.ranks)
    assert view.tables["collectives"].model.rowCount() == len(view.frames["collectives"]) > 0
    worst = int(view.frames["stragglers"]["rank"].iloc[0])
    assert f"Straggler: <b>rank {worst}</b>" in view.heading.text()
    assert "absolute clocks" in view.heading.text()
    maps: Any = view.widgets["heatmap"]
    matrix = heatmap(job)
    assert maps.heat.values.shape == matrix.shape == (2, 2)
    assert maps.heat.cell_at(1.5, 0.5) == (int(matrix.index[0]), int(matrix.columns[1]))
    assert maps.heat.cell_at(-1, 0) is None
    assert maps.late.values.shape[0] == 2  # lateness per rank and step
    timeline: Any = view.widgets["job-timeline"]
    first = timeline.comms.sort_values("start_ns").iloc[0]
    row = [r.rank for r in job.ranks].index(int(first["rank"]))
    x_ms = (int(first["start_ns"]) + int(first["dur_ns"]) // 2 - timeline.origin) / 1e6
    hit = timeline.kernel_at(x_ms, row + 0.5)
    assert hit is not None
    assert hit["kind"] == first["kind"]
    assert timeline.kernel_at(-1e6, row + 0.5) is None
    assert view.show_page("job-timeline")
    assert view.pages.currentWidget() is timeline
    assert not view.show_page("functions")
    with qtbot.waitSignal(view.rank_opened) as blocker:
        view.open_rank_at(0)
    first_rank = int(view.frames["ranks"]["rank"].iloc[0])
    assert blocker.args == [job.by_rank()[first_rank].path, "timeline"]
    with qtbot.waitSignal(view.rank_opened) as blocker:  # a straggler row is a rank too
        view.open_rank_at(0, "stragglers")
    assert blocker.args[0] == job.by_rank()[worst].path


def test_job_view_flags_the_slowest_rank(qtbot: Any, tmp_path: Path) -> None:
    """What the old per-folder Ranks tab showed, on the job path: one row per rank, the rank
    from distributedInfo under neutral names, the slowest flagged, a click opens that rank."""
    from perfview.qt.views.job_view import JobView, PreparedJob

    job = open_job([_ranks_folder(tmp_path)], workers=1)
    view = JobView(PreparedJob.of(document(job, tmp_path)))
    qtbot.addWidget(view)
    table = view.frames["ranks"]
    assert view.tables["ranks"].model.rowCount() == 2
    assert table["rank"].tolist() == [0, 1]
    assert table["rank_source"].tolist() == ["distributedInfo"] * 2
    assert table["file"].tolist() == ["first.json.gz", "second.json.gz"]
    slowest = int(table["rank"].to_numpy()[int(table["step_mean_ns"].to_numpy().argmax())])
    assert table.loc[table["slowest"], "rank"].tolist() == [slowest]
    with qtbot.waitSignal(view.rank_opened) as blocker:
        view.open_rank_at(0)
    assert Path(blocker.args[0]).name == "first.json.gz"


def test_main_window_opens_a_rank_folder(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings
    from perfview.qt.views.job_view import JobView

    (tmp_path / "run").mkdir()
    folder = _ranks_folder(tmp_path / "run")
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Settings(store))
    qtbot.addWidget(window)
    task = window.open_path(folder)  # a folder: opened in a worker, shown as a Job tab
    assert task is not None
    with qtbot.waitSignal(task.done, timeout=60000):
        pass
    view = window.tabs.currentWidget()
    assert isinstance(view, JobView)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Job: run"
    assert window.tabs.tabToolTip(window.tabs.currentIndex()) == str(folder)
    with qtbot.waitSignal(window.document_opened, timeout=60000):
        view.open_rank_at(0)
    tab = window.tabs_controller.current_tab()
    assert tab is not None
    assert tab.document.path.name == "first.json.gz"
    assert tab.current_view() == "timeline"


def test_main_window_says_why_a_folder_does_not_open(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    empty = tmp_path / "empty"
    empty.mkdir()
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Settings(store))
    qtbot.addWidget(window)
    tabs = window.tabs.count()
    # An empty folder fails at once, maybe before a test could connect to the task's `done`:
    # wait for what the window shows instead.
    assert window.open_path(empty) is not None
    qtbot.waitUntil(lambda: bool(window.error_bar.label.text()), timeout=60000)
    assert window.tabs.count() == tabs
    assert window.error_bar.label.text() == (
        f"perfview: cannot open {empty}: {empty} holds no .json / .json.gz trace files"
    )


def test_step_times_are_coloured_by_their_difference_from_the_median() -> None:
    """A 3.9 % spread of step times was black against bright yellow (min-max scaling)."""
    import numpy as np

    from perfview.qt.views.rank_heatmap import MIN_SPREAD, heat_scale

    steps = np.array([[607e6, 623e6], [608e6, 631e6]])
    shown, lo, hi = heat_scale(steps, relative=True)
    median = np.median(steps)
    np.testing.assert_allclose(shown, (steps / median - 1) * 100)
    assert (lo, hi) == (-MIN_SPREAD * 100, MIN_SPREAD * 100)  # ±5 %: a 3.9 % spread stays pale
    wide = np.array([[100.0, 100.0], [100.0, 150.0]])
    _shown, lo, hi = heat_scale(wide, relative=True)
    assert (lo, hi) == (-50.0, 50.0)  # symmetric around the median
    late = np.array([[0.0, 0.0], [1.65e6, np.nan]])
    shown, lo, hi = heat_scale(late, relative=False)
    assert (lo, hi) == (0.0, 1.65e6)
