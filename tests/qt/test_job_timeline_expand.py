"""The job timeline expands a rank to its full tracks (issue 41, "jobs, every event"): the
rank's own slices, on the job's aligned clock, under its row; searchable across ranks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core.layout.timeline_layout import prepare_timeline
from perfview.documents import open_document
from perfview.jobs import open_job
from tests.jobs.test_job import needs_ranks

pytestmark = pytest.mark.gui


def _timeline(qtbot: Any) -> Any:
    from perfview.qt.views.job_timeline import JobTimeline

    job = open_job([needs_ranks()[0]], workers=1)
    view = JobTimeline(job)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_rank_expands_to_its_own_slices_on_the_jobs_clock(qtbot: Any) -> None:
    view = _timeline(qtbot)
    job = view.job
    second = job.ranks[1]
    before = view._row()[second.rank]
    first = job.ranks[0].rank
    with qtbot.waitSignal(view.expanded, timeout=60_000) as blocker:
        view.expand(first)
    assert blocker.args == [first]
    tracks, _item = view.tracks[first]
    # the reference: the rank's file opened on its own and laid out as the Timeline does
    timeline = open_document(job.by_rank()[first].path).bundle.timeline
    assert timeline is not None
    data = prepare_timeline(timeline, max_counters=0)
    assert tracks.slices == len(timeline.events)
    assert tracks.rows == data.tracks.total_rows > 0
    # the next rank's summary row moved down past the expanded tracks
    assert view._row()[second.rank] == before + tracks.rows + 1
    # the longest slice is drawn where its absolute time falls on the job's clock
    ev = timeline.events
    longest = int(np.argmax(ev["dur"].to_numpy()))
    ts, dur = int(ev["ts"].iloc[longest]), int(ev["dur"].iloc[longest])
    x_ms = (ts + dur / 2 + timeline.origin_ns + job.offsets.get(first, 0) - view.origin) / 1e6
    y = view._row()[first] + 1 + int(data.event_row[longest]) + 0.5
    view.plot.getViewBox().setRange(
        xRange=(x_ms - dur / 1e6, x_ms + dur / 1e6), yRange=(y - 5, y + 5), padding=0
    )
    view.grab()  # paint: what is hit is what was drawn
    hit = view.slice_at(x_ms, y)
    assert hit is not None
    assert hit[0] == first
    assert view.tracks[first][0].name_of(hit[1]) == str(ev["name"].iloc[longest])
    assert view.describe(*hit).startswith(f"rank {first}: {ev['name'].iloc[longest]}")


def test_expand_all_search_and_collapse(qtbot: Any) -> None:
    view = _timeline(qtbot)
    job = view.job
    with qtbot.waitSignals([view.expanded] * len(job.ranks), timeout=120_000):
        view.expand_all()
    assert sorted(view.tracks) == sorted(r.rank for r in job.ranks)
    expected = 0
    for rank in view.tracks:
        names = open_document(job.by_rank()[rank].path).bundle.timeline.events["name"]  # type: ignore[union-attr]
        expected += int(names.astype(str).str.contains("nccl", case=False, regex=False).sum())
    assert expected > 0
    assert view.find_slices("NCCL") == expected
    # a collective still answers on its rank's (moved) summary row
    c = view.comms.sort_values("start_ns").iloc[-1]
    x_ms = (int(c["start_ns"]) + int(c["dur_ns"]) // 2 - view.origin) / 1e6
    assert view.kernel_at(x_ms, view._row()[int(c["rank"])] + 0.5) is not None
    view.collapse_all()
    assert view.tracks == {}
    assert view._row() == {r.rank: i for i, r in enumerate(job.ranks)}


def test_the_timeline_draws_the_rank_that_bounds_each_step(qtbot: Any) -> None:
    """The job's critical path across ranks on the timeline: per step, the same rank as
    `perfview summary FOLDER --view critical-path-steps`."""
    from perfview.core.analysis.torch.job import document
    from perfview.core.pages import summary

    view = _timeline(qtbot)
    table = summary.summarize(document(view.job, needs_ranks()[0]), "critical-path-steps")
    assert len(table) > 0
    for step, rank in table[["step", "rank"]].itertuples(index=False):
        assert view.bound_at(int(step)) == int(rank)
    assert "bounds" in view.legend.text()


def test_collapsing_a_rank_while_it_loads_keeps_the_next_one_queued(qtbot: Any) -> None:
    view = _timeline(qtbot)
    first, second = (r.rank for r in view.job.ranks[:2])
    with qtbot.waitSignal(view.expanded, timeout=60_000) as blocker:
        view.expand(first)
        view.expand(second)
        view.collapse(first)  # still loading: its result is dropped, the second still loads
    assert blocker.args == [second]
    assert list(view.tracks) == [second]
