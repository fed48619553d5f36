"""TimelineView: navigation changes the ViewBox range, clicks select, ranges aggregate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis import aggregate
from perfview.core.model import ArgsStore, Timeline, schema

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

NAMES = ("aten::conv2d", "aten::mm", "aten::relu", "aten::add", "cudaLaunchKernel", "sgemm")


def make_timeline(n_top: int = 50, n_lanes: int = 3, fanout: int = 3, levels: int = 3) -> Timeline:
    """A synthetic, well-nested trace: on every lane, `n_top` top slices of 1 ms each split
    into `fanout` children per level. Event names cycle through NAMES; every slice has args."""
    frames = []
    period = 1_000_000
    for lane in range(n_lanes):
        ts = np.arange(n_top, dtype=np.int64) * period
        dur = np.full(n_top, int(period * 0.9), dtype=np.int64)
        parent = np.full(n_top, -1, dtype=np.int64)
        base = 0
        parts = []
        for depth in range(levels):
            parts.append((ts, dur, np.full(len(ts), depth), parent))
            child_dur = dur // fanout
            idx = np.repeat(np.arange(len(ts)), fanout)
            k = np.tile(np.arange(fanout), len(ts))
            parent = base + idx
            base += len(ts)
            ts = ts[idx] + k * child_dur[idx]
            dur = (child_dur[idx] * 0.8).astype(np.int64)
        lane_frame = pd.DataFrame(
            {
                "ts": np.concatenate([p[0] for p in parts]),
                "dur": np.concatenate([p[1] for p in parts]),
                "depth": np.concatenate([p[2] for p in parts]),
                "parent_local": np.concatenate([p[3] for p in parts]),
            }
        )
        lane_frame["lane"] = lane
        frames.append(lane_frame)
    offsets = np.cumsum([0] + [len(f) for f in frames[:-1]])
    for off, f in zip(offsets, frames, strict=True):
        f["parent"] = np.where(f["parent_local"] >= 0, f["parent_local"] + off, -1)
    ev = pd.concat(frames, ignore_index=True)
    n = len(ev)
    names = np.array(NAMES, dtype=object)[(np.arange(n) + ev["depth"].to_numpy()) % len(NAMES)]
    events = pd.DataFrame(
        {
            "ts": ev["ts"].to_numpy(np.int64),
            "dur": ev["dur"].to_numpy(np.int64),
            "name": pd.Categorical(names),
            "cat": pd.Categorical(["cpu_op"] * n),
            "kind": pd.Categorical(["cpu_op"] * n),
            "pid": np.zeros(n, np.int64),
            "tid": ev["lane"].to_numpy(np.int64),
            "lane": ev["lane"].to_numpy(np.int32),
            "depth": ev["depth"].to_numpy(np.int16),
            "parent": ev["parent"].to_numpy(np.int64),
            "corr": np.where(ev["depth"].to_numpy() == levels - 1, np.arange(n) % 97, -1),
            "ext_id": np.full(n, -1, np.int64),
            "shape": pd.Categorical([""] * n),
        }
    )
    events = schema.coerce(events, schema.EVENTS)
    lanes = schema.coerce(
        pd.DataFrame(
            {
                "lane": np.arange(n_lanes),
                "pid": 0,
                "tid": np.arange(n_lanes),
                "sub": 0,
                "process": "python",
                "thread": [f"thread {i}" for i in range(n_lanes)],
                "label": [f"python · thread {i}" for i in range(n_lanes)],
                "device": "cpu",
                "sort_key": np.arange(n_lanes),
                "max_depth": levels - 1,
                "n_events": events.groupby("lane").size().to_numpy(),
            }
        ),
        schema.LANES,
    )
    blob = b"".join(b'{"i": %d}' % i for i in range(n))
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b'{"i": %d}' % i) for i in range(n)])
    counters = pd.DataFrame(
        {
            "ts": np.arange(0, n_top * period, period // 4, dtype=np.int64),
            "pid": 0,
            "name": "GPU util",
        }
    )
    counters["value"] = np.sin(np.arange(len(counters)) / 5.0) * 50 + 50
    counters = schema.coerce(counters, schema.COUNTERS)
    flows = schema.coerce(
        pd.DataFrame(
            {
                "flow_id": [1],
                "cat": ["ac2g"],
                "name": ["ac2g"],
                "src_ts": [0],
                "dst_ts": [int(ev["ts"].iat[1])],
                "src_event": [0],
                "dst_event": [len(frames[0])],
            }
        ),
        schema.FLOWS,
    )
    return Timeline(
        events=events,
        lanes=lanes,
        instants=schema.empty(schema.INSTANTS),
        counters=counters,
        flows=flows,
        memory=schema.empty(schema.MEMORY_EVENTS),
        args=ArgsStore.from_offsets(blob, offsets),
        duration_ns=n_top * period,
    )


@pytest.fixture
def view(qtbot):
    from perfview.qt.views.timeline_view import TimelineView

    w = TimelineView(make_timeline())
    qtbot.addWidget(w)
    w.resize(1200, 600)
    w.show()
    qtbot.waitExposed(w)
    w.fit_all()
    return w


def test_tracks_rows_and_rects(view) -> None:
    assert view.tracks.offset.tolist() == [0, 4, 8]
    assert len(view.batch.rects) == len(view.timeline.events)
    view.plot.grab()
    assert view.batch.stats["slices"] == len(view.timeline.events)


def test_zoom_and_pan_change_the_x_range(view, qtbot) -> None:
    lo, hi = view.x_range()
    view.viewbox.zoom_x(0.5)
    lo2, hi2 = view.x_range()
    assert hi2 - lo2 == pytest.approx((hi - lo) * 0.5, rel=1e-6)
    view.viewbox.pan_x(0.25)
    lo3, hi3 = view.x_range()
    assert lo3 == pytest.approx(lo2 + (hi2 - lo2) * 0.25, rel=1e-6)
    from PySide6 import QtCore

    view.plot.setFocus()
    qtbot.keyClick(view.plot, QtCore.Qt.Key.Key_W)
    lo4, hi4 = view.x_range()
    assert hi4 - lo4 < hi3 - lo3
    qtbot.keyClick(view.plot, QtCore.Qt.Key.Key_D)
    assert view.x_range()[0] > lo4


def test_double_click_fits_the_slice(view) -> None:
    row = 7
    ts, dur = int(view.timeline.events["ts"].iat[row]), int(view.timeline.events["dur"].iat[row])
    y = float(view.event_row[row]) + 0.5
    view._on_double_click(ts + dur / 2, y)
    lo, hi = view.x_range()
    assert lo == pytest.approx(ts - dur * 0.05)
    assert hi == pytest.approx(ts + dur * 1.05)
    assert view.selected_row == row


def test_click_selects_and_fills_details(view) -> None:
    row = 3
    ev = view.timeline.events
    x = float(ev["ts"].iat[row] + ev["dur"].iat[row] / 2)
    view._on_click(x, float(view.event_row[row]) + 0.5)
    assert view.selected_row == row
    assert view.details.title.text() == str(ev["name"].iat[row])
    fields = {
        view.details.tree.topLevelItem(i).text(0): view.details.tree.topLevelItem(i).text(1)
        for i in range(view.details.tree.topLevelItemCount())
    }
    assert fields["Duration"] == "900 µs"
    assert fields["Track"] == "python · thread 0"


def test_flow_is_listed_and_drawn(view) -> None:
    view.select_event(0)
    assert view.details.linked_rows()[0] == int(view.timeline.flows["dst_event"].iat[0])
    xs, _ys = view.flow_item.getData()
    assert len(xs) == 2


def test_range_selection_aggregates(view, qtbot) -> None:
    view.select_range(0, 1_000_000)  # exactly the first top slice of every lane
    table = view.range_summary
    # Per lane: the first top slice with its 3 + 9 descendants, plus the second top slice and
    # its first child and grandchild, which start exactly at 1 ms (the range is inclusive).
    assert int(table["calls"].sum()) == 3 * (13 + 3)
    # Time inside: the first top slice is 900 µs long; the 1-ms starters contribute 0 ns. Names
    # cycle with depth, so some slices sit inside a same-name ancestor: those count once.
    ev = view.timeline.events
    first = ev[(ev["ts"] < 1_000_000) & (ev["ts"] + ev["dur"] <= 1_000_000)]
    nested = aggregate.nested_in_same_name(ev)[first.index.to_numpy()]
    assert int(first["dur"].sum()) == 3 * (900_000 + 3 * 240_000 + 9 * 64_000)
    assert int(table["total_ns"].sum()) == int(first["dur"][~nested].sum())
    assert view.range_table.rowCount() == len(table)
    assert view.region.isVisible()


def test_search_highlights_and_steps(view) -> None:
    count = view.set_search("RELU")
    expected = int((view.timeline.events["name"] == "aten::relu").sum())
    assert count == expected > 0
    first = view.next_match()
    second = view.next_match()
    ts = view.timeline.events["ts"]
    assert ts.iat[first] <= ts.iat[second]
    assert str(view.timeline.events["name"].iat[second]) == "aten::relu"
    assert view.previous_match() == first


def test_document_round_trip(qtbot) -> None:
    from perfview.core.model import Bundle
    from perfview.qt.document import Document, Selection
    from perfview.qt.views.timeline_view import TimelineView

    tl = make_timeline(n_top=10)
    doc = Document(Bundle(format="trace", path=__import__("pathlib").Path("x.json"), timeline=tl))
    view = TimelineView(tl, doc)
    qtbot.addWidget(view)
    with qtbot.waitSignal(doc.selection_changed):
        view.select_event(5)
    assert doc.selection.event == 5
    doc.select(Selection(kind="event", name="x", event=9))
    assert view.selected_row == 9
    with qtbot.waitSignal(doc.range_changed):
        view.select_range(100, 2_000_000)
    assert doc.range == (100, 2_000_000)


def test_hover_says_how_many_slices_a_merged_rect_holds(qtbot) -> None:
    from perfview.qt.views.timeline_view import TimelineView

    view = TimelineView(make_timeline(n_top=20_000, n_lanes=1, fanout=1, levels=1))
    qtbot.addWidget(view)
    view.resize(1000, 400)
    view.show()
    qtbot.waitExposed(view)
    view.fit_all()
    view.plot.grab()  # paint: 20,000 slices across ~700 px must merge
    assert view.batch.stats["visible"] < view.batch.stats["slices"]
    ts = view.timeline.events["ts"].to_numpy()
    mid = float(ts[len(ts) // 2])
    text = view.hover_text(mid, float(view.event_row[len(ts) // 2]) + 0.5)
    assert "slices merged here" in text

    row = len(ts) // 2
    dur = int(view.timeline.events["dur"].iat[row])
    view._on_double_click(ts[row] + dur / 2, float(view.event_row[row]) + 0.5)
    view.plot.grab()
    text = view.hover_text(ts[row] + dur / 2, float(view.event_row[row]) + 0.5)
    assert "merged" not in text
    assert text.startswith("<b>")


def test_a_deferred_view_is_built_over_turns_and_matches(qtbot) -> None:
    """`defer=True` (a new tab): the plot at once, the tracks and the side tabs on later
    event-loop turns, painted once when all is there; the result is the view built at once."""
    from perfview.qt import deferred
    from perfview.qt.views.timeline_view import TimelineView

    tl = make_timeline()
    now = TimelineView(tl)
    later = TimelineView(tl, defer=True)
    for w in (now, later):
        qtbot.addWidget(w)
    assert "tracks" not in later.__dict__
    assert later.side.count() == 0
    assert not later.updatesEnabled()
    deferred.flush()
    assert later.updatesEnabled()
    assert later.tracks.offset.tolist() == now.tracks.offset.tolist() == [0, 4, 8]
    assert later.total_rows == now.total_rows
    assert later.side.count() == now.side.count() == 4
    assert later.x_range() == now.x_range()


def test_a_deferred_view_asked_for_its_parts_builds_them_at_once(qtbot) -> None:
    from perfview.core.model import Bundle
    from perfview.qt.document import Document, Selection
    from perfview.qt.views.timeline_view import TimelineView

    tl = make_timeline(n_top=10)
    doc = Document(Bundle(format="trace", path=__import__("pathlib").Path("x.json"), timeline=tl))
    view = TimelineView(tl, doc, defer=True)
    qtbot.addWidget(view)
    assert hasattr(view, "tracks_panel")  # e.g. a workspace restored into a new tab
    assert view.side.count() == 4
    fresh = TimelineView(tl, doc, defer=True)
    qtbot.addWidget(fresh)
    doc.select(Selection(kind="event", name="x", event=9))  # before its turns came
    assert fresh.selected_row == 9
    assert fresh.details is fresh.side.currentWidget()
    with pytest.raises(AttributeError):
        _ = fresh.no_such_attribute


def test_the_side_tabs_stay_folded_until_something_is_selected(view) -> None:
    """An empty "Nothing selected" panel took a third of the width: it opens on a selection."""
    assert view.side_splitter.sizes()[1] == 0
    row = int(np.flatnonzero(view.event_row >= 0)[0])
    view.select_event(row)
    assert view.side_splitter.sizes()[1] >= view.side.minimumWidth()
    assert view.side.currentWidget() is view.details
