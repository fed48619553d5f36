"""A job's Timeline with every rank expanded and rows thinner than a pixel: one layer draws all
ranks' rows (`SubPixelRows`), and hover, selection and search still find the right slice of
the right rank; zoomed in, the ranks draw themselves and hit exactly."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.jobs import open_job
from tests.jobs.test_job import needs_ranks

pytestmark = pytest.mark.gui


def _expanded(qtbot: Any) -> Any:
    from perfview.qt.views.job_timeline import JobTimeline

    job = open_job([needs_ranks()[0]], workers=1)
    view = JobTimeline(job)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignals([view.expanded] * len(job.ranks), timeout=120_000):
        view.expand_all()
    return view


def _widest(view: Any, rank: int) -> tuple[int, float, float]:
    """(node, x in ms, view row) of the middle of rank's widest slice."""
    tracks, item = view.tracks[rank]
    rects = tracks.index.rects
    pos = int(np.argmax(rects.x1 - rects.x0))
    place = item.transform()  # rank ns → job ms, the rank's rows under its summary row
    x_ms = (float(rects.x0[pos] + rects.x1[pos]) / 2) * place.m11() + place.dx()
    y = place.dy() + float(rects.row[pos]) + 0.5
    return int(rects.node[pos]), x_ms, y


def test_every_ranks_sub_pixel_rows_are_one_layer_and_hits_find_their_rank(qtbot: Any) -> None:
    view = _expanded(qtbot)
    box = view.plot.getViewBox()
    rows = view._rows_total()
    (x_lo, x_hi), _ = box.viewRange()
    box.setRange(xRange=(x_lo, x_hi), yRange=(0, max(rows, 2_000)), padding=0)
    view.plot.viewport().grab()
    layer = view.sub_pixel
    assert layer.stats["tiles"] > 0
    for _tracks, item in view.tracks.values():
        assert item.stats == {"raster": 1.0, "delegated": 1.0}
    for rank in view.tracks:
        node, x_ms, y = _widest(view, rank)
        hit = view.slice_at(x_ms, y)
        assert hit == (rank, node), (rank, hit)
    # selection outlines the slice in its rank only; a search redraws the tiles
    rank = list(view.tracks)[-1]
    node, x_ms, y = _widest(view, rank)
    view.tracks[rank][1].set_selected(node)
    version = layer._version
    name = view.tracks[rank][0].name_of(node)
    assert view.find_slices(name[:6]) > 0
    assert layer._version > version, "a highlight change drops the cached tiles"
    view.plot.viewport().grab()
    assert view.slice_at(x_ms, y) == (rank, node)


def test_zoomed_in_each_rank_draws_and_hits_exactly(qtbot: Any) -> None:
    view = _expanded(qtbot)
    rank = list(view.tracks)[-1]
    node, x_ms, y = _widest(view, rank)
    tracks, item = view.tracks[rank]
    pos = tracks.index.position_of(node)
    width_ms = float(tracks.index.rects.x1[pos] - tracks.index.rects.x0[pos]) * 1e-6
    view.plot.getViewBox().setRange(
        xRange=(x_ms - width_ms, x_ms + width_ms), yRange=(y - 10, y + 10), padding=0
    )
    view.plot.viewport().grab()
    assert item.stats["raster"] == 0.0
    assert view.slice_at(x_ms, y) == (rank, node)
    place = item.transform()
    assert item.node_at((x_ms - place.dx()) / place.m11(), y - place.dy()) == node
