"""Instant markers and counter tracks: geometry questions answered without a display."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.layout import timeline_layout
from perfview.core.layout.timeline_marks import curve_axis, instant_at, instant_marks, value_at
from perfview.core.model import Timeline, schema
from perfview.loaders import load
from tests.conftest import sample


def _timeline(instants: pd.DataFrame, counters: pd.DataFrame | None = None) -> Timeline:
    lanes = schema.empty(schema.LANES)
    lanes = pd.DataFrame(
        {
            "lane": np.array([0, 1, 2], dtype=np.int32),
            "pid": np.array([1, 1, 2], dtype=np.int64),
            "tid": np.array([1, 2, 3], dtype=np.int64),
            "sub": np.zeros(3, dtype=np.int16),
            "process": ["p1", "p1", "p2"],
            "thread": ["t1", "t2", "t3"],
            "label": ["p1 t1", "p1 t2", "p2 t3"],
            "device": ["cpu"] * 3,
            "sort_key": np.arange(3, dtype=np.int64),
            "max_depth": np.array([2, 0, 1], dtype=np.int16),
            "n_events": np.ones(3, dtype=np.int64),
        }
    )
    return Timeline(
        events=schema.empty(schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.coerce(instants, schema.INSTANTS),
        counters=schema.coerce(
            counters if counters is not None else schema.empty(schema.COUNTERS), schema.COUNTERS
        ),
        flows=schema.empty(schema.FLOWS),
        memory=schema.empty(schema.MEMORY_EVENTS),
    )


def test_instant_markers_span_their_scope() -> None:
    instants = pd.DataFrame(
        {
            "ts": [10, 20, 30, 40, 50],
            "name": ["thread", "process", "global", "no track", "no process"],
            "cat": "x",
            "pid": [1, 1, 1, 1, 7],
            "tid": [2, 2, 2, 99, 1],
            "scope": ["t", "p", "g", "t", "t"],
        }
    )
    tl = _timeline(instants)
    tracks = timeline_layout.track_layout(np.array([0, 1, 2]), np.array([2, 0, 1]))
    # rows: lane 0 [0, 3), lane 1 [4, 5), lane 2 [6, 8)
    pids, tids = np.array([1, 1, 2]), np.array([1, 2, 3])
    marks = instant_marks(tl, pids, tids, tracks.offset, tracks.height)
    spans = list(zip(marks.top.tolist(), marks.bottom.tolist(), strict=True))
    assert spans == [(4, 5), (0, 5), (0, 8), (0, 5), (0, 8)]
    assert instant_at(marks, 11, 4.5, tolerance=2) == 0  # on its thread's track
    assert instant_at(marks, 11, 2.0, tolerance=2) == -1  # thread-scoped: not on lane 0
    assert instant_at(marks, 21, 2.0, tolerance=2) == 1  # process-scoped: all of pid 1
    assert instant_at(marks, 21, 7.0, tolerance=2) == -1
    assert instant_at(marks, 29, 7.0, tolerance=2) == 2  # global
    assert instant_at(marks, 35, 7.0, tolerance=2) == -1  # too far in time


def test_every_counter_series_gets_a_track_with_a_value_axis() -> None:
    n = 30  # more than the old cap of 24
    counters = pd.DataFrame(
        {
            "ts": np.tile([0, 100, 200], n),
            "pid": 1,
            "name": np.repeat([f"c{i:02d}" for i in range(n)], 3),
            "value": np.tile([5.0, -2.0, 7.5], n),
        }
    )
    instants = pd.DataFrame(
        {"ts": [1], "name": ["m"], "cat": "x", "pid": [1], "tid": [1], "scope": ["t"]}
    )
    data = timeline_layout.prepare_timeline(_timeline(instants, counters))
    assert len(data.curves) == len(data.curve_top) == len(data.curve_samples) == n
    rows = timeline_layout.CURVE_ROWS
    assert np.diff(data.curve_top).tolist() == [rows + 1] * (n - 1)
    top = data.curve_top[-1]
    labels = [(round(y - top, 6), text) for y, text in data.labels if top <= y <= top + rows]
    assert labels == [(0.2, "7.5"), (1.5, "c29 (-2 – 7.5)"), (3, "-2")]
    assert data.total_rows >= top + rows
    assert data.instants is not None
    assert len(data.instants) == 1


def test_value_under_the_cursor_is_the_last_sample() -> None:
    ts = np.array([0, 100, 200], dtype=np.int64)
    values = np.array([5.0, -2.0, 7.5])
    assert value_at(ts, values, -1) is None
    assert value_at(ts, values, 0) == 5.0
    assert value_at(ts, values, 150) == -2.0
    assert value_at(ts, values, 10_000) == 7.5
    axis = curve_axis("bytes", np.array([0.0, 2048.0]), 10, 3, is_bytes=True)
    assert [t for _y, t in axis] == ["2 KiB", "bytes (0 B – 2 KiB)", "0 B"]


def test_real_trace_instants_and_counter() -> None:
    tl = load(sample("chrome_trace/catapult_simple_trace.json")).timeline
    assert tl is not None
    data = timeline_layout.prepare_timeline(tl)
    assert data.instants is not None
    assert len(data.instants) == len(tl.instants) == 6
    assert (data.instants.bottom > data.instants.top).all()
    assert len(data.curves) == tl.counters["name"].nunique()
    ts, values = data.curve_samples[0]
    assert value_at(ts, values, float(ts[-1])) == pytest.approx(float(values[-1]))
