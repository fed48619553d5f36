"""Tiny hand-made torch timelines with known answers (nesting given explicitly)."""

from __future__ import annotations

import pandas as pd

from perfview.core.model import Timeline, schema

# (ts, dur, name, kind, lane, parent, corr, ext_id)
Row = tuple[int, int, str, str, int, int, int, int]


def make(rows: list[Row], duration: int = 1000, meta: dict[str, object] | None = None) -> Timeline:
    """A Timeline: lane 0 = CPU thread 1, lane 1 = GPU 0 stream 7, lane 2 = GPU 0 stream 9."""
    ts, dur, name, kind, lane, parent, corr, ext = (list(c) for c in zip(*rows, strict=True))
    events = pd.DataFrame(
        {
            "ts": ts,
            "dur": dur,
            "name": name,
            "cat": kind,
            "kind": kind,
            "pid": [0 if ln else 100 for ln in lane],
            "tid": [{0: 1, 1: 7, 2: 9}[ln] for ln in lane],
            "lane": lane,
            "depth": [0] * len(ts),
            "parent": parent,
            "corr": corr,
            "ext_id": ext,
            "shape": [""] * len(ts),
        }
    )
    depth = []
    for p in parent:
        d = 0
        while p >= 0:
            d, p = d + 1, parent[p]
        depth.append(d)
    events["depth"] = depth
    lanes = pd.DataFrame(
        {
            "lane": [0, 1, 2],
            "pid": [100, 0, 0],
            "tid": [1, 7, 9],
            "sub": [0, 0, 0],
            "process": ["python", "GPU 0", "GPU 0"],
            "thread": ["thread 1", "stream 7", "stream 9"],
            "label": ["python · thread 1", "GPU 0 · stream 7", "GPU 0 · stream 9"],
            "device": ["cpu", "gpu:0", "gpu:0"],
            "sort_key": [0, 1, 2],
            "max_depth": [max(depth), 0, 0],
            "n_events": [lane.count(i) for i in range(3)],
        }
    )
    return Timeline(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.empty(schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=schema.empty(schema.MEMORY_EVENTS),
        duration_ns=duration,
        meta={"torch": True, **(meta or {})},
    )
