"""Track arrangement (core/track_arrange.py): geometry questions on pinned, hidden, reordered,
filtered and collapsed tracks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.layout.track_arrange import TrackState, arrange_tracks, arranged_rows, track_at


def _lanes() -> pd.DataFrame:
    # lane: pid, tid, max_depth — two processes, 4 tracks
    return pd.DataFrame(
        {
            "lane": [0, 1, 2, 3],
            "pid": [1, 1, 2, 2],
            "tid": [10, 11, 20, 21],
            "process": ["trainer", "trainer", "loader", "loader"],
            "label": ["trainer · main", "trainer · autograd", "loader · w0", "GPU 0 · stream 7"],
            "max_depth": [2, 0, 1, 0],
        }
    )


LANE = np.array([0, 0, 0, 1, 2, 2, 3])
DEPTH = np.array([0, 1, 2, 0, 0, 1, 0])


def test_default_is_file_order() -> None:
    arr = arrange_tracks(_lanes())
    assert arr.lane.tolist() == [0, 1, 2, 3]
    assert arr.offset.tolist() == [0, 4, 6, 9]  # heights 3, 1, 2, 1 with a 1-row gap
    assert arr.total_rows == 10
    assert arranged_rows(LANE, DEPTH, arr).tolist() == [0, 1, 2, 4, 6, 7, 9]
    assert [track_at(arr, r) for r in (0, 2.5, 3, 4, 9.9, 10)] == [0, 0, -1, 1, 3, -1]


def test_pin_hide_reorder_and_filter() -> None:
    state = TrackState(order=(2, 0), pinned=(3,), hidden=frozenset({1}))
    arr = arrange_tracks(_lanes(), state)
    assert arr.lane.tolist() == [3, 2, 0]
    assert arr.offset.tolist() == [0, 2, 5]
    rows = arranged_rows(LANE, DEPTH, arr)
    assert rows.tolist() == [5, 6, 7, -1, 2, 3, 0]  # lane 1 hidden
    arr = arrange_tracks(_lanes(), TrackState(name_filter="LOADER"))
    assert arr.lane.tolist() == [2, 3]  # by process name too
    arr = arrange_tracks(_lanes(), TrackState(name_filter="stream"))
    assert arr.lane.tolist() == [3]
    assert arr.label == ["GPU 0 · stream 7"]


def test_collapsed_process_is_one_busy_row() -> None:
    arr = arrange_tracks(_lanes(), TrackState(collapsed=frozenset({1})))
    assert arr.lane.tolist() == [-1, 2, 3]
    assert arr.tid.tolist() == [-1, 20, 21]
    assert arr.height.tolist() == [1, 2, 1]
    assert arr.label[0] == "▸ trainer (2 tracks)"
    rows = arranged_rows(LANE, DEPTH, arr)
    # both trainer threads' top-level slices share row 0; deeper ones are not drawn
    assert rows.tolist() == [0, -1, -1, 0, 2, 3, 5]
    # collapsed and pinned: the summary takes the place of its first pinned lane
    arr = arrange_tracks(_lanes(), TrackState(pinned=(3, 1), collapsed=frozenset({1})))
    assert arr.lane.tolist() == [3, -1, 2]


def test_prepare_timeline_applies_the_state() -> None:
    from perfview.core.layout.timeline_layout import prepare_timeline
    from perfview.loaders import load
    from tests.conftest import sample

    tl = load(sample("kineto_gpu/hta_nccl_data.json.gz")).timeline
    assert tl is not None
    full = prepare_timeline(tl, build_levels=False)
    pid = int(tl.lanes["pid"].iat[0])
    state = TrackState(
        collapsed=frozenset({pid}), hidden=frozenset({int(tl.lanes["lane"].iat[-1])})
    )
    data = prepare_timeline(tl, build_levels=False, state=state)
    drawn = data.event_row >= 0
    assert len(data.index.rects) == int(drawn.sum()) < len(full.index.rects)
    assert set(data.index.rects.node.tolist()) == set(np.flatnonzero(drawn).tolist())
    in_pid = (tl.events["pid"] == pid).to_numpy()
    assert (data.event_row[in_pid & drawn] == 0).all()  # the summary is the first track
    assert data.labels[0][1].startswith("▸ ")
