"""Track geometry and the timeline's questions about its events (core/timeline_layout.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.layout import timeline_layout


def test_track_layout_and_event_rows() -> None:
    tracks = timeline_layout.track_layout(np.array([0, 1, 2]), np.array([2, 0, 1]), gap=1)
    assert tracks.offset.tolist() == [0, 4, 6]
    assert tracks.total_rows == 8
    rows = timeline_layout.event_rows(np.array([0, 1, 2, 2]), np.array([2, 0, 0, 1]), tracks)
    assert rows.tolist() == [2, 4, 6, 7]


def _events(ts: list[int], dur: list[int], names: list[str], corr: list[int], ext: list[int]):
    n = len(ts)
    return pd.DataFrame(
        {
            "ts": np.asarray(ts, dtype=np.int64),
            "dur": np.asarray(dur, dtype=np.int64),
            "name": pd.Categorical(names),
            "kind": pd.Categorical(["cpu_op"] * n),
            "corr": np.asarray(corr, dtype=np.int64),
            "ext_id": np.asarray(ext, dtype=np.int64),
        }
    )


def test_range_summary_clips_to_the_range() -> None:
    ev = _events([0, 50, 120, 300], [100, 10, 50, 5], ["a", "b", "a", "c"], [-1] * 4, [-1] * 4)
    got = timeline_layout.range_summary(ev, 40, 150)
    assert got["name"].tolist() == ["a", "b"]
    assert got["calls"].tolist() == [2, 1]
    assert got["total_ns"].tolist() == [60 + 30, 10]  # [40,100] and [120,150]


def test_linked_events_by_correlation_and_external_id() -> None:
    #   0: cpu_op (ext 7)   1: runtime (corr 3, ext 7)   2: kernel (corr 3, ext 7)   3: other
    ev = _events(
        [0, 5, 20, 30], [50, 5, 10, 1], ["op", "launch", "k", "x"], [-1, 3, 3, -1], [7, 7, 7, -1]
    )
    assert timeline_layout.linked_events(ev, 2).tolist() == [0, 1]
    assert timeline_layout.linked_events(ev, 0).tolist() == [1, 2]
    assert timeline_layout.linked_events(ev, 3).tolist() == []


def test_curve_tracks_fall_back_to_summed_bytes() -> None:
    from perfview.core.model import Timeline, schema

    mem = pd.DataFrame(
        {
            "ts": [10, 20, 30],
            "pid": 1,
            "tid": 1,
            "device_type": 1,
            "device_id": 0,
            "addr": 0,
            "bytes": [100, 50, -100],
            "total_allocated": 0,
            "total_reserved": 0,
            "oom": False,
        }
    )
    tl = Timeline(
        events=schema.empty(schema.EVENTS),
        lanes=schema.empty(schema.LANES),
        instants=schema.empty(schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=schema.coerce(mem, schema.MEMORY_EVENTS),
    )
    [(label, ts, values)] = timeline_layout.curve_tracks(tl)
    assert label == "GPU 0 memory (net), peak 150 B"
    assert ts.tolist() == [10, 20, 30]
    assert values.tolist() == [100, 150, 50]
