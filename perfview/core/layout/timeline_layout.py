"""Timeline geometry and the questions the timeline view asks about its events. Pure numpy.

Where each lane's rows sit (`track_layout`, `event_rows`), what ran inside a selected range
(`range_summary`), which slices belong together without a flow arrow (`linked_events`), and
the counter/memory curves drawn as tracks (`curve_tracks`). Kept apart from `flame`, which
only knows rectangles, so each stays small and testable without a display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import nested_in_same_name
from perfview.core.layout import colors
from perfview.core.layout.flame import layout_events
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.layout.timeline_marks import InstantMarks, curve_axis, instant_marks
from perfview.core.layout.track_arrange import TrackState, arrange_tracks, arranged_rows
from perfview.core.model import Timeline
from perfview.core.model.units import format_bytes

CURVE_ROWS = 3  # height of a counter / memory track in rows
MAX_COUNTER_TRACKS: int | None = None  # every counter series gets its track (no cap)


@dataclass(frozen=True)
class TrackLayout:
    """Where each lane sits vertically: lane `i` uses rows [offset[i], offset[i] + height[i])."""

    lanes: np.ndarray  # lane ids in display order
    offset: np.ndarray  # first row of each lane (aligned with `lanes`)
    height: np.ndarray  # rows of each lane (max_depth + 1)
    total_rows: int


def track_layout(lanes: np.ndarray, max_depth: np.ndarray, gap: int = 1) -> TrackLayout:
    """Stack lanes top to bottom (in the given order) with `gap` empty rows between them."""
    lanes = np.asarray(lanes, dtype=np.int64)
    height = np.asarray(max_depth, dtype=np.int64) + 1
    offset = np.zeros(len(lanes), dtype=np.int64)
    if len(lanes):
        offset[1:] = np.cumsum(height + gap)[:-1]
    total = int(offset[-1] + height[-1]) if len(lanes) else 0
    return TrackLayout(lanes, offset, height, total)


def event_rows(lane: np.ndarray, depth: np.ndarray, tracks: TrackLayout) -> np.ndarray:
    """Row of every event: its lane's first row plus its depth (int32)."""
    lut = np.zeros(int(tracks.lanes.max()) + 1 if len(tracks.lanes) else 1, dtype=np.int64)
    lut[tracks.lanes] = tracks.offset
    return (lut[np.asarray(lane, dtype=np.int64)] + np.asarray(depth, dtype=np.int64)).astype(
        np.int32
    )


def range_summary(events: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    """Slices overlapping [lo, hi] grouped by name: calls, time inside the range, kind.

    `total_ns` counts only the part of each slice inside the range (a step that sticks out
    of the selection contributes its overlap), and a name nested inside itself once, so the
    numbers answer "what ran in here".
    Columns: name, kind, calls, total_ns; sorted by total_ns descending.
    """
    ts = events["ts"].to_numpy(dtype=np.int64)
    end = ts + events["dur"].to_numpy(dtype=np.int64)
    hit = np.flatnonzero((end >= lo) & (ts <= hi))
    inside = np.minimum(end[hit], hi) - np.maximum(ts[hit], lo)
    if "parent" in events.columns:  # recursion counts once: a same-name ancestor overlaps too
        in_range = np.zeros(len(ts), dtype=bool)
        in_range[hit] = True
        inside = np.where(nested_in_same_name(events, in_range)[hit], 0, inside)
    frame = pd.DataFrame(
        {
            "name": events["name"].to_numpy()[hit],
            "kind": events["kind"].to_numpy()[hit],
            "inside": inside,
        }
    )
    if not len(frame):
        return pd.DataFrame(
            {
                "name": pd.Series([], dtype=object),
                "kind": pd.Series([], dtype=object),
                "calls": pd.Series([], dtype=np.int64),
                "total_ns": pd.Series([], dtype=np.int64),
            }
        )
    out = frame.groupby("name", observed=True, sort=False).agg(
        kind=("kind", "first"), calls=("inside", "size"), total_ns=("inside", "sum")
    )
    out = out.reset_index().sort_values("total_ns", ascending=False, kind="stable")
    out["name"] = out["name"].astype(object).astype(str)
    out["kind"] = out["kind"].astype(object).astype(str)
    out["calls"] = out["calls"].astype(np.int64)
    out["total_ns"] = out["total_ns"].astype(np.int64)
    return out.reset_index(drop=True)


def linked_events(events: pd.DataFrame, row: int, limit: int = 200) -> np.ndarray:
    """Rows tied to event `row` without a flow arrow: same CUPTI correlation id (runtime call
    <-> kernel/memcpy) or same kineto External id (cpu_op <-> the kernels it launched).
    Sorted by start time, at most `limit`, never `row` itself."""
    corr = events["corr"].to_numpy(dtype=np.int64)
    ext = events["ext_id"].to_numpy(dtype=np.int64)
    c, e = int(corr[row]), int(ext[row])
    mask = np.zeros(len(events), dtype=bool)
    if c >= 0:
        mask |= corr == c
    if e >= 0:
        mask |= ext == e
    mask[row] = False
    rows = np.flatnonzero(mask)
    ts = events["ts"].to_numpy(dtype=np.int64)[rows]
    return rows[np.argsort(ts, kind="stable")][:limit]


def curve_tracks(
    timeline: Timeline, max_counters: int | None = None
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(label, ts, value) for each counter series and each device's torch memory curve.

    Memory uses `Total Allocated` when the trace recorded it; 2021-era kineto files only have
    `Bytes` per alloc/free, so their curve is the running sum of Bytes (net allocation since
    the profiler started), labelled as such.
    """
    out: list[tuple[str, np.ndarray, np.ndarray]] = []
    counters = timeline.counters
    if len(counters):
        groups = list(counters.groupby("name", observed=True, sort=True))[:max_counters]
        for name, grp in groups:
            grp = grp.sort_values("ts", kind="stable")
            out.append((str(name), grp["ts"].to_numpy(np.int64), grp["value"].to_numpy()))
    mem = timeline.memory
    if not len(mem):
        return out
    mem = mem.sort_values("ts", kind="stable")
    device = mem["device_type"].to_numpy(np.int64) * 1000 + mem["device_id"].to_numpy(np.int64)
    for key in np.unique(device):
        grp = mem[device == key]
        dtype, did = int(grp["device_type"].iat[0]), int(grp["device_id"].iat[0])
        dev = "CPU" if dtype == 0 else (f"GPU {did}" if dtype == 1 else f"device {dtype}:{did}")
        values = grp["total_allocated"].to_numpy(np.int64)
        what = "memory"
        if not values.any():
            values = np.cumsum(grp["bytes"].to_numpy(np.int64))
            what = "memory (net)"
        peak = format_bytes(float(values.max())) if len(values) else "0 B"
        out.append((f"{dev} {what}, peak {peak}", grp["ts"].to_numpy(np.int64), values))
    return out


def curve_rows(y: np.ndarray, row: int, rows: int = CURVE_ROWS) -> np.ndarray:
    """A curve's values as y in row units: scaled into `rows` rows from `row` down, with zero
    (or the minimum, if negative) on the track's bottom edge."""
    y = np.asarray(y, dtype=np.float64)
    lo, hi = (float(np.nanmin(y)), float(np.nanmax(y))) if len(y) else (0.0, 1.0)
    lo = min(lo, 0.0)
    scale = (rows - 0.2) / (hi - lo) if hi > lo else 0.0
    out: np.ndarray = row + rows - (y - lo) * scale
    return out


def row_dtype(total_rows: int) -> type[np.signedinteger[Any]]:
    """Every event's row as int16 while the rows fit (2 bytes an event, not 8), else int32."""
    return np.int16 if total_rows < np.iinfo(np.int16).max else np.int32


def name_codes(names: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The distinct slice names and each slice's code into them: the events table's own
    codes when its names are categorical (int16 for up to 32k names, and no copy: 8 bytes a
    slice less than int64 codes of its own), else coded here."""
    cat = names.array if isinstance(names.dtype, pd.CategoricalDtype) else pd.Categorical(names)
    assert isinstance(cat, pd.Categorical)
    return np.asarray(cat.categories, dtype=object), np.asarray(cat.codes)


@dataclass(frozen=True)
class TimelineData:
    """Everything the timeline view draws, derived from a Timeline by `prepare_timeline`.

    Computed on a worker thread, so that the view's constructor only builds widgets: on a
    1 GB trace the rows, colours, sorted rectangles and level-of-detail chain cost a second.
    `labels` are (row centre, text) for the track axis; `curves` are (label, x ns, y rows)
    already scaled into their tracks.
    """

    categories: np.ndarray  # distinct slice names (object)
    codes: np.ndarray  # code of each event's name into `categories` (the table's own codes)
    ts: np.ndarray  # int64
    dur: np.ndarray  # int64
    tracks: TrackLayout
    event_row: np.ndarray  # row of every event (-1: not drawn), int16 or int32 (`row_dtype`)
    index: FlameIndex
    labels: list[tuple[float, str]]
    curves: list[tuple[str, np.ndarray, np.ndarray]]
    total_rows: int
    span: tuple[float, float]  # first start .. last end, ns
    band_span: int  # how far the lane bands reach, ns
    # counter/memory tracks (core.timeline_marks): first row of each curve's track and its
    # samples (ns, raw values) for the value under the cursor; the instants' markers
    curve_top: tuple[int, ...] = ()
    curve_samples: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    instants: InstantMarks | None = None


def prepare_timeline(
    timeline: Timeline,
    max_counters: int | None = MAX_COUNTER_TRACKS,
    rows_per_curve: int = CURVE_ROWS,
    build_levels: bool = True,
    state: TrackState | None = None,
) -> TimelineData:
    """Lay out `timeline` for drawing: rows, colours, rectangles, curves (pure; any thread).

    `build_levels` also builds the rectangle index's whole level-of-detail chain, which the
    first zoomed-out frame would otherwise build while painting. `state` is the user's track
    arrangement (`core.track_arrange`); slices it does not draw get row -1.
    """
    ev = timeline.events
    categories, codes = name_codes(ev["name"])
    ts = ev["ts"].to_numpy(dtype=np.int64)
    dur = ev["dur"].to_numpy(dtype=np.int64)
    lanes = timeline.lanes.sort_values("lane", kind="stable")
    arr = arrange_tracks(lanes, state)
    tracks = TrackLayout(arr.lane, arr.offset, arr.height, arr.total_rows)
    rows = arranged_rows(ev["lane"].to_numpy(), ev["depth"].to_numpy(), arr)
    rows = rows.astype(row_dtype(arr.total_rows), copy=False)
    drawn = rows >= 0
    small = len(colors.PALETTE) <= 256  # one byte a slice, as level 0 keeps them
    buckets = colors.category_buckets(categories, codes, dtype=np.uint8 if small else np.int32)
    if drawn.all():
        index = FlameIndex(layout_events(ts, dur, rows, buckets), presorted=True)
    else:
        node = np.flatnonzero(drawn)
        rects = layout_events(ts[node], dur[node], rows[node], buckets[node], node)
        index = FlameIndex(rects, presorted=True)
    if build_levels:
        index.build_levels()
    labels = [
        (float(off) + (1.0 if "\n" in text else 0.5), text)  # two lines: over two rows
        for off, text in zip(arr.offset, arr.axis_label, strict=True)
    ]
    row = tracks.total_rows + 1
    curves: list[tuple[str, np.ndarray, np.ndarray]] = []
    tops: list[int] = []
    samples: list[tuple[np.ndarray, np.ndarray]] = []
    # counter series come first, then the torch memory curves (bytes)
    n_series = timeline.counters["name"].nunique()
    n_counters = n_series if max_counters is None else min(n_series, max_counters)
    for i, (label, x, y) in enumerate(curve_tracks(timeline, max_counters)):
        is_bytes = i >= n_counters
        name = label.rsplit(", peak", 1)[0] if is_bytes else label
        labels.extend(curve_axis(name, y, row, rows_per_curve, is_bytes))
        curves.append((label, x.astype(np.float64), curve_rows(y, row, rows_per_curve)))
        tops.append(row)
        samples.append((x, np.asarray(y, dtype=np.float64)))
        row += rows_per_curve + 1
    marks = instant_marks(timeline, arr.pid, arr.tid, arr.offset, arr.height)
    if len(ts):
        span = (float(ts.min()), float((ts + dur).max()))
    else:
        span = (0.0, float(max(timeline.duration_ns, 1)))
    return TimelineData(
        categories, codes, ts, dur, tracks, rows, index, labels, curves, row, span,
        int(timeline.duration_ns or int(span[1])), tuple(tops), tuple(samples), marks,
    )  # fmt: skip


__all__ = [
    "CURVE_ROWS",
    "MAX_COUNTER_TRACKS",
    "TimelineData",
    "TrackLayout",
    "curve_rows",
    "curve_tracks",
    "event_rows",
    "linked_events",
    "name_codes",
    "prepare_timeline",
    "range_summary",
    "row_dtype",
    "track_layout",
]
