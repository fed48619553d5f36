"""The user's arrangement of the timeline's slice tracks: pinned, hidden, reordered, filtered
by name, and processes collapsed into one summary ("busy") track. Pure geometry.

`arrange_tracks(lanes, state)` says which tracks are drawn, in which order, at which rows;
`arranged_rows(lane, depth, arrangement)` places every slice (-1: not drawn). A collapsed
process shows the top-level slices of all its threads on one row, so where it is busy reads
at a glance; its deeper slices are not drawn until it is expanded again.

`TrackState` is plain data (lane ids, pids, text) so a workspace file can keep it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

FLOW_MODES = ("all", "selected", "none")


@dataclass(frozen=True)
class TrackState:
    """How the user arranged the tracks. Lane ids are `Timeline.lanes.lane`."""

    order: tuple[int, ...] = ()  # lanes in this order first, the rest after in file order
    pinned: tuple[int, ...] = ()  # lanes at the very top, in pin order
    hidden: frozenset[int] = field(default_factory=frozenset)
    collapsed: frozenset[int] = field(default_factory=frozenset)  # pids shown as one track
    name_filter: str = ""  # only tracks whose label (or process) contains this
    flows: str = "selected"  # FLOW_MODES: arrows for every flow, the selection's, or none


@dataclass(frozen=True)
class Arrangement:
    """Tracks top to bottom. Track i is a lane (`lane[i]` >= 0, `tid` its thread) or a
    collapsed process (`lane[i]` == -1, `tid[i]` == -1); rows [offset[i], offset[i]+height[i])."""

    lane: np.ndarray  # int64 per track
    pid: np.ndarray
    tid: np.ndarray
    label: list[str]
    offset: np.ndarray
    height: np.ndarray
    total_rows: int
    lane_offset: np.ndarray  # per lane id: first row, -1 when not drawn
    lane_summary: np.ndarray  # per lane id: True when drawn on its process's summary row
    # what the track axis shows: a thread on its own under its process's first track
    # (`axis_labels`); `label` stays the whole "process · thread" for lists and search
    axis_label: list[str] = field(default_factory=list)


def display_order(lanes: pd.DataFrame, state: TrackState) -> list[int]:
    """Lane ids top to bottom: pinned, then the user's order, then file order (hidden too)."""
    ids = lanes["lane"].astype(np.int64).tolist()
    known = set(ids)
    first = [lane for lane in dict.fromkeys(state.order) if lane in known]
    ordered = first + [lane for lane in ids if lane not in set(first)]
    pinned = [lane for lane in dict.fromkeys(state.pinned) if lane in known]
    return pinned + [lane for lane in ordered if lane not in set(pinned)]


def arrange_tracks(
    lanes: pd.DataFrame, state: TrackState | None = None, gap: int = 1
) -> Arrangement:
    """The tracks `lanes` (schema.LANES) show under `state` (None: all, in file order)."""
    state = state or TrackState()
    ids = lanes["lane"].astype(np.int64).tolist()
    col = {c: dict(zip(ids, lanes[c].tolist(), strict=True)) for c in lanes.columns}
    needle = state.name_filter.strip().lower()
    keys: list[tuple[int, int]] = []  # (lane, pid); lane -1: a process summary
    members: dict[int, list[int]] = {}
    for lane in display_order(lanes, state):
        pid = int(col["pid"][lane])
        text = f"{col['label'][lane]} {col['process'][lane]}".lower()
        if lane in state.hidden or (needle and needle not in text):
            continue
        if pid in state.collapsed:
            if pid not in members:
                members[pid] = []
                keys.append((-1, pid))
            members[pid].append(lane)
        else:
            keys.append((lane, pid))
    n_ids = int(lanes["lane"].max()) + 1 if len(lanes) else 0
    lane_offset = np.full(n_ids, -1, dtype=np.int64)
    lane_summary = np.zeros(n_ids, dtype=bool)
    height = np.array(
        [1 if lane < 0 else int(col["max_depth"][lane]) + 1 for lane, _ in keys],
        dtype=np.int64,
    ).clip(1)
    offset = np.zeros(len(keys), dtype=np.int64)
    if len(keys):
        offset[1:] = np.cumsum(height + gap)[:-1]
    labels: list[str] = []
    tids = np.full(len(keys), -1, dtype=np.int64)
    for i, (lane, pid) in enumerate(keys):
        if lane >= 0:
            lane_offset[lane] = offset[i]
            tids[i] = int(col["tid"][lane])
            labels.append(str(col["label"][lane]))
        else:
            group = members[pid]
            lane_offset[group] = offset[i]
            lane_summary[group] = True
            process = str(col["process"][group[0]])
            labels.append(f"▸ {process} ({len(group)} tracks)")
    total = int(offset[-1] + height[-1]) if len(keys) else 0
    processes = [str(col["process"][lane]) if lane >= 0 else "" for lane, _pid in keys]
    axis = axis_labels(labels, processes, [int(p) for _lane, p in keys], height.tolist())
    return Arrangement(
        np.array([k[0] for k in keys], dtype=np.int64),
        np.array([k[1] for k in keys], dtype=np.int64),
        tids, labels, offset, height, total, lane_offset, lane_summary, axis,
    )  # fmt: skip


def axis_labels(
    labels: list[str], processes: list[str], pids: list[int], heights: list[int]
) -> list[str]:
    """The track axis's text per track: the process once, at its first track (above the
    thread on a second line when the track has two rows of room, else "process · thread"),
    then each further track of the same process by its thread alone. Four threads of one
    process no longer read alike once a narrow column elides "Browser (6488) · …" in the
    middle. A collapsed process's summary track (process "") keeps its label."""
    out: list[str] = []
    previous: int | None = None
    for text, process, pid, rows in zip(labels, processes, pids, heights, strict=True):
        prefix = f"{process} · "
        if not process or not text.startswith(prefix):
            out.append(text)
            previous = None
            continue
        thread = text[len(prefix) :]
        if pid == previous:
            out.append(thread)
        else:
            out.append(f"{process}\n{thread}" if rows >= 2 else text)
        previous = pid
    return out


def arranged_rows(lane: np.ndarray, depth: np.ndarray, arrangement: Arrangement) -> np.ndarray:
    """The row of every slice under `arrangement`; -1 for slices that are not drawn."""
    lane = np.asarray(lane, dtype=np.int64)
    depth = np.asarray(depth, dtype=np.int64)
    n = len(arrangement.lane_offset)
    if not n:
        return np.full(len(lane), -1, dtype=np.int64)
    if not arrangement.lane_summary.any() and (arrangement.lane_offset >= 0).all():
        # every lane drawn as itself (the default): two passes, not eight (0.1 s at 1 GB)
        inside = (lane >= 0) & (lane < n)
        if inside.all():
            rows: np.ndarray = arrangement.lane_offset[lane] + depth
            return rows
    safe = np.clip(lane, 0, n - 1)
    base = np.where((lane >= 0) & (lane < n), arrangement.lane_offset[safe], -1)
    summary = arrangement.lane_summary[safe]
    placed = np.where(summary, np.where(depth == 0, base, -1), base + depth)
    return np.where(base >= 0, placed, -1).astype(np.int64)


def track_at(arrangement: Arrangement, row: float) -> int:
    """Index of the track drawn at `row`, or -1 (a gap between tracks, or below them)."""
    i = int(np.searchsorted(arrangement.offset, row, side="right")) - 1
    if i < 0 or row >= arrangement.offset[i] + arrangement.height[i]:
        return -1
    return i


__all__ = [
    "FLOW_MODES",
    "Arrangement",
    "TrackState",
    "arrange_tracks",
    "arranged_rows",
    "display_order",
    "track_at",
]
