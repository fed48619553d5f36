"""Job page (issue 15, GUI): tables of a multi-rank job and the rank × step heat map."""

from __future__ import annotations

from typing import Any

import pytest

from perfview.core.analysis.torch.job import heatmap
from perfview.jobs import open_job
from tests.jobs.test_job import needs_ranks

pytestmark = pytest.mark.gui


def test_job_view_shows_every_page_and_the_straggler(qtbot: Any) -> None:
    from perfview.qt.views.job_view import PAGES, JobView

    job = open_job([needs_ranks()[0]], workers=1)
    view = JobView(job, "sample")
    qtbot.addWidget(view)
    assert view.pages.count() == len(PAGES) + 2  # + heat maps, timeline
    assert view.tables["ranks"].model.rowCount() == len(job.ranks)
    assert view.tables["collectives"].model.rowCount() == len(view.frames["collectives"]) > 0
    worst = int(view.frames["stragglers"]["rank"].iloc[0])
    assert f"Straggler: <b>rank {worst}</b>" in view.heading.text()
    assert "absolute clocks" in view.heading.text()
    matrix = heatmap(job)
    assert view.heat.values.shape == matrix.shape == (2, 2)
    assert view.heat.cell_at(1.5, 0.5) == (int(matrix.index[0]), int(matrix.columns[1]))
    assert view.heat.cell_at(-1, 0) is None
    assert view.late.values.shape[0] == 2  # lateness per rank and step
    first = view.timeline.comms.sort_values("start_ns").iloc[0]
    row = [r.rank for r in job.ranks].index(int(first["rank"]))
    x_ms = (int(first["start_ns"]) + int(first["dur_ns"]) // 2 - view.timeline.origin) / 1e6
    hit = view.timeline.kernel_at(x_ms, row + 0.5)
    assert hit is not None
    assert hit["kind"] == first["kind"]
    assert view.timeline.kernel_at(-1e6, row + 0.5) is None
    with qtbot.waitSignal(view.rank_opened) as blocker:
        view.open_rank_at(0)
    assert blocker.args[0] == job.by_rank()[int(view.frames["ranks"]["rank"].iloc[0])].path
