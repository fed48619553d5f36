"""Run browser (issue 36, GUI): a log directory opens as runs → workers → spans with their
dates, steps and mean step time; a span opens like any file; new spans appear while the
training writes them, a half-written file never read early."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from perfview.core.model.units import format_ns
from tests.jobs.test_logdir import LOGDIR, step_durations_ns

pytestmark = pytest.mark.gui


def _window(qtbot: Any, tmp_path: Path) -> Any:
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Settings(store))
    qtbot.addWidget(window)
    return window


def _open(qtbot: Any, window: Any, folder: Path) -> Any:
    from perfview.qt.views.run_browser import RunBrowser

    task = window.open_path(folder)  # the window's one folder path (File ▸ Open Folder…)
    with qtbot.waitSignal(task.done, timeout=60000):
        pass
    view = window.tabs.currentWidget()
    assert isinstance(view, RunBrowser)
    return view


def test_a_log_directory_opens_in_the_run_browser(qtbot: Any, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    view = _open(qtbot, window, LOGDIR)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Runs: tb_logdir"
    runs = [view.tree.topLevelItem(i) for i in range(view.tree.topLevelItemCount())]
    assert [r.text(0) for r in runs] == ["run1", "run2"]
    spans = view.span_items()
    assert len(spans) == 4
    files = sorted(LOGDIR.glob("*/*.pt.trace.json.gz"))
    for item, path in zip(spans, files, strict=True):
        assert item.text(0).endswith(path.name)
        durs = step_durations_ns(path)
        assert item.text(3) == str(len(durs))
        assert item.text(4) == format_ns(float(np.mean(durs)))
    assert len(view.trend.values) == 4  # the step-time-over-spans chart: one point per span
    # run2's first span compares with run1's last: the previous span of "the" process.
    assert view.previous_span(spans[2]) == str(files[1])
    view.tree.setCurrentItem(spans[2])
    with qtbot.waitSignal(view.compare_requested) as compare:
        view.compare_button.click()
    assert compare.args == [str(files[1]), str(files[2])]
    with qtbot.waitSignal(window.document_opened, timeout=60000):
        view.open_item(spans[0])  # a span opens like any file, on its Overview
    tab = window.tabs_controller.current_tab()
    assert tab is not None
    assert tab.document.path == files[0]


def test_new_spans_appear_once_whole(qtbot: Any, tmp_path: Path) -> None:
    live = tmp_path / "log" / "run1"
    shutil.copytree(LOGDIR / "run1", live)
    window = _window(qtbot, tmp_path)
    view = _open(qtbot, window, tmp_path / "log")
    assert len(view.span_items()) == 2
    source = sorted((LOGDIR / "run2").iterdir())[0]
    data = source.read_bytes()
    target = live / "vm_4080.1795828099000000000.pt.trace.json.gz"  # a later cycle
    with qtbot.waitSignal(view.watch.read, timeout=30000):
        target.write_bytes(data[: len(data) // 2])  # the training is still writing it
    assert target in view.watch.logdir.pending
    assert len(view.span_items()) == 2  # not read early
    with qtbot.waitSignal(view.watch.updated, timeout=30000), target.open("ab") as f:
        f.write(data[len(data) // 2 :])
    assert len(view.span_items()) == 3
    assert view.span_items()[-1].text(0).endswith(target.name)
    assert "1 new span(s) written" in view.heading.text()
    assert len(view.trend.values) == 3


def test_a_job_run_of_the_log_directory_opens_as_a_job(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt.views.job_view import JobView
    from tests.conftest import sample

    ranks = sample("ranks/hta_sampled_2of128")
    shutil.copytree(ranks, tmp_path / "log" / "ddp")
    shutil.copytree(LOGDIR / "run1", tmp_path / "log" / "run1")
    window = _window(qtbot, tmp_path)
    view = _open(qtbot, window, tmp_path / "log")
    job_item = view.tree.topLevelItem(0)
    assert job_item.text(0) == "ddp (job of 2 ranks)"
    assert [job_item.child(i).text(1) for i in range(job_item.childCount())] == ["0", "1"]
    view.tree.setCurrentItem(job_item)
    assert view.open_button.isEnabled()
    with qtbot.waitSignal(view.folder_opened) as opened:
        view.open_button.click()
    assert opened.args == [str(tmp_path / "log" / "ddp")]
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), JobView), timeout=60000)
    job_view = window.tabs.currentWidget()
    assert [int(r.rank) for r in job_view.job.ranks] == [0, 1]
