"""The span selector of a Job tab (issue 36): a log directory's job run whose workers wrote
several schedule cycles opens as a job with every worker's spans pooled, and a combo box shows
one cycle instead, its pages prepared off the GUI thread.

The run is made of real files named as `tensorboard_trace_handler` names them: two workers,
each with two spans. The first span of each is a rank of the real two-rank sample (it states
its rank in `distributedInfo`); the second is a cycle of the real CPU log directory
(tests/data/tb_logdir). Expected values come from other paths: the two rank files opened as a
plain job by `perfview summary`, and the step durations read from the JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview import cli
from tests.conftest import SAMPLES
from tests.jobs.test_logdir import LOGDIR, step_durations_ns

pytestmark = pytest.mark.gui
RANKS = SAMPLES / "ranks" / "hta_sampled_2of128"


def _run(tmp_path: Path) -> tuple[Path, list[Path]]:
    """run/host_10N.<ms>.pt.trace.json.gz: span 1 = rank N of the sample, span 2 = a CPU cycle."""
    if not RANKS.is_dir():
        pytest.skip(f"the real rank sample {RANKS} is absent")
    run = tmp_path / "run"
    run.mkdir()
    cycles = sorted(LOGDIR.glob("run1/*.gz"))
    for n in (0, 1):
        shutil.copy(RANKS / f"rank-{n}.json.gz", run / f"host_10{n}.1795828098000.pt.trace.json.gz")
        shutil.copy(cycles[n], run / f"host_10{n}.1795828099000.pt.trace.json.gz")
    return run, cycles


def _ranks_of(capsys: pytest.CaptureFixture[str], *files: Path) -> list[dict[str, Any]]:
    code = cli.main(["summary", *map(str, files), "--view", "ranks", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["rows"]
    return rows


def test_a_job_run_of_several_spans_opens_with_a_span_selector(
    qtbot: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfview.qt.views.job_view import JobOpening, JobView
    from perfview.qt.views.span_selector import POOLED

    run, cycles = _run(tmp_path)
    opening = JobOpening(run)
    with qtbot.waitSignal(opening.opened, timeout=120000) as got:
        opening.start()
    view = got.args[0]
    qtbot.addWidget(view)
    assert isinstance(view, JobView)
    selector = view.span_selector
    assert selector is not None
    labels = [selector.combo.itemText(i) for i in range(selector.combo.count())]
    assert labels[0] == "All 2 spans, pooled"
    assert [t.split(" · ")[0] for t in labels[1:]] == ["Span 1", "Span 2"]
    assert selector.combo.currentData() == POOLED
    assert view.frames["ranks"]["steps"].tolist() == [4, 4]  # each rank's two cycles pooled

    with qtbot.waitSignal(selector.loaded, timeout=60000):
        selector.choose(0)
    expected = _ranks_of(capsys, RANKS / "rank-0.json.gz", RANKS / "rank-1.json.gz")
    ranks = view.frames["ranks"]
    assert ranks["steps"].tolist() == [r["steps"] for r in expected]
    assert ranks["step_mean_ns"].tolist() == pytest.approx([r["step_mean_ns"] for r in expected])
    assert view.tables["ranks"].model.rowCount() == 2  # the page itself was rebuilt
    assert "2 ranks" in view.heading.text()

    with qtbot.waitSignal(selector.loaded, timeout=60000):
        selector.choose(1)
    means = [float(np.mean(step_durations_ns(c))) for c in cycles]
    assert view.frames["ranks"]["step_mean_ns"].tolist() == pytest.approx(means)
    assert view.pages.count() == len(view.tabs)

    with qtbot.waitSignal(selector.loaded, timeout=60000):
        selector.choose(POOLED)
    assert view.frames["ranks"]["steps"].tolist() == [4, 4]


def test_a_job_run_of_one_span_each_has_no_selector(qtbot: Any) -> None:
    from perfview.qt.views.job_view import JobOpening, JobView

    if not RANKS.is_dir():
        pytest.skip(f"the real rank sample {RANKS} is absent")
    opening = JobOpening(RANKS)
    with qtbot.waitSignal(opening.opened, timeout=120000) as got:
        opening.start()
    view = got.args[0]
    qtbot.addWidget(view)
    assert isinstance(view, JobView)
    assert view.span_selector is None
