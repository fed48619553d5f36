"""Page data computed off the GUI thread (core/page_data.py, timeline_layout.prepare_timeline,
FlameIndex.build_levels): the same numbers the pages computed for themselves before."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from perfview.core import pages
from perfview.core.analysis.torch import kernels, memory_alloc, op_kernels, overview, recommend
from perfview.core.layout import colors, flame, flame_cull, timeline_layout, track_arrange
from perfview.core.model import Bundle
from perfview.core.pages import data as page_data
from tests.conftest import sample

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


@cache
def _bundle(rel: str) -> Bundle:
    from perfview.loaders import load

    return load(sample(rel))


def _arrays(rects: flame.Rects) -> list[list[float]]:
    return [list(map(float, a)) for a in (rects.x0, rects.x1, rects.row, rects.node, rects.count)]


def test_build_levels_gives_the_same_answers_as_lazy_levels() -> None:
    rng = np.random.default_rng(7)
    n = 60_000
    ts = np.sort(rng.integers(0, 10_000_000, n))
    dur = rng.integers(1, 2_000, n)
    row = rng.integers(0, 4, n)
    rects = flame.layout_events(ts, dur, row, rng.integers(0, 5, n))
    eager, lazy = flame_cull.FlameIndex(rects), flame_cull.FlameIndex(rects)
    built = eager.build_levels()
    assert built == eager.max_level + 1  # the whole chain, level 0 included
    for px in (1e-6, 1e-5, 1e-4, 1e-2):  # zoomed out .. deep
        a = eager.query(0.0, 10_000_000.0, px)
        b = lazy.query(0.0, 10_000_000.0, px)
        assert _arrays(a) == _arrays(b)
        assert int(a.count.sum()) == n  # nothing lost to merging


def test_prepare_timeline_matches_the_layout_it_replaces() -> None:
    tl = _bundle(RESNET).timeline
    assert tl is not None
    data = timeline_layout.prepare_timeline(tl)
    ev = tl.events
    lanes = tl.lanes.sort_values("lane", kind="stable")
    tracks = timeline_layout.track_layout(
        lanes["lane"].to_numpy(), lanes["max_depth"].to_numpy().clip(0), gap=1
    )
    rows = timeline_layout.event_rows(ev["lane"].to_numpy(), ev["depth"].to_numpy(), tracks)
    assert data.tracks.offset.tolist() == tracks.offset.tolist()
    assert data.event_row.tolist() == rows.tolist()
    expected = flame.layout_events(
        ev["ts"].to_numpy(), ev["dur"].to_numpy(), rows, colors.bucket_codes(ev["name"])
    )
    assert _arrays(data.index.rects) == _arrays(expected)
    assert data.index.rects.bucket.tolist() == expected.bucket.tolist()
    # Built now, not left to the first paint (small traces are drawn from level 0 only).
    levels = 1 if data.index._direct else data.index.max_level + 1
    assert len(data.index._levels) == levels
    # the axis names a process once, then its threads alone (track_arrange.axis_labels)
    axis = track_arrange.arrange_tracks(lanes).axis_label
    assert [text for _y, text in data.labels[: len(lanes)]] == axis
    for text, label in zip(axis, lanes["label"], strict=True):  # every track's thread named
        assert str(label).endswith(text.split("\n")[-1])
    curves = timeline_layout.curve_tracks(tl)
    assert [c[0] for c in data.curves] == [c[0] for c in curves]
    assert data.total_rows == tracks.total_rows + 1 + 4 * len(curves)
    assert data.span == (float(ev["ts"].min()), float((ev["ts"] + ev["dur"]).max()))
    assert str(data.categories[data.codes[0]]) == str(ev["name"].iloc[0])


def test_curve_rows_scale_into_the_track() -> None:
    ys = timeline_layout.curve_rows(np.array([0.0, 5.0, 10.0]), row=10, rows=3)
    assert ys.tolist() == pytest.approx([13.0, 13.0 - 1.4, 13.0 - 2.8])


def test_torch_pages_data_equals_the_core_functions() -> None:
    bundle = _bundle(RESNET)
    tl = bundle.timeline
    assert tl is not None
    assert pages.needs_data("overview", bundle)
    ov = pages.prepare("overview", bundle)
    assert isinstance(ov, page_data.OverviewData)
    assert ov.stats.count == overview.step_stats(tl).count == 6
    assert [f.title for f in ov.findings] == [f.title for f in recommend.recommendations(tl)]
    assert pages.derived("overview", ov) == {"recommendations": ov.findings}

    kd = pages.prepare("kernels", bundle)
    assert isinstance(kd, page_data.KernelsData)
    assert len(kd.rows) == len(kernels.kernel_rows(tl))
    assert kd.table["calls"].sum() == kernels.kernels_table(tl)["calls"].sum()
    assert len(kd.op_kernels) == len(op_kernels.op_kernels_table(tl))

    ops = pages.prepare("operators", bundle)
    assert isinstance(ops, page_data.OpsData)
    assert ops.busiest is not None
    frame = op_kernels.ops_table(tl)
    assert ops.busiest.name == str(frame["name"].iloc[int(np.argmax(frame["device_self_ns"]))])
    expected = op_kernels.op_kernels_table(tl, ops.busiest.name)
    assert ops.busiest.kernels["calls"].tolist() == expected["calls"].tolist()
    assert list(ops.kernel_columns.columns) == [c for c in expected.columns if c != "op"]

    if pages.needs_data("memory", bundle):
        md = pages.prepare("memory", bundle)
        assert isinstance(md, page_data.MemoryData)
        assert len(md.allocations) == len(memory_alloc.allocations_table(tl))
        recorded = (md.shown["freed"] != "not recorded").to_numpy()
        assert (md.shown["freed"] == "no").sum() == (
            ~md.allocations["freed"].to_numpy() & recorded
        ).sum()


def test_pages_without_heavy_data_prepare_nothing() -> None:
    bundle = _bundle(RESNET)
    assert pages.prepare("icicle", bundle) is None  # built straight away by the tab
    assert not pages.needs_data("tree", bundle)
