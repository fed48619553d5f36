"""Frame times of the timeline and icicle views on big synthetic data, offscreen.

    python3 scripts/bench/bench_render.py [--sizes 1000000 5000000] [--nodes 200000] [--frames 15]

For each case it prints the median ms per frame (a synchronous repaint of the whole plot:
slices, axes, labels) and the part spent in the rect item itself, at full zoom-out, mid zoom,
deep zoom and while panning. "first" is the first full frame, which also builds the cached
level of detail. The target is <= 16 ms per frame. Not part of CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np
import pandas as pd

from perfview.core.analysis.calltree import node_depths
from perfview.core.model import CallTree, Timeline, schema


def synthetic_timeline(
    n_slices: int, n_lanes: int = 16, fanout: int = 3, levels: int = 4, seed: int = 0
) -> Timeline:
    """Well-nested lanes: top slices split into `fanout` children per level, jittered."""
    rng = np.random.default_rng(seed)
    per_top = sum(fanout**k for k in range(levels))
    n_top = max(n_slices // (per_top * n_lanes), 1)
    period = 100_000  # 100 µs per top slice
    cols: dict[str, list[np.ndarray]] = {"ts": [], "dur": [], "lane": [], "depth": []}
    for lane in range(n_lanes):
        ts = np.arange(n_top, dtype=np.int64) * period + rng.integers(0, 5000, n_top)
        dur = rng.integers(period // 2, period - 5000, n_top)
        for depth in range(levels):
            cols["ts"].append(ts)
            cols["dur"].append(dur)
            cols["lane"].append(np.full(len(ts), lane))
            cols["depth"].append(np.full(len(ts), depth))
            child = dur // fanout
            idx = np.repeat(np.arange(len(ts)), fanout)
            k = np.tile(np.arange(fanout), len(ts))
            ts = ts[idx] + k * child[idx]
            dur = (child[idx] * rng.uniform(0.3, 0.95, len(idx))).astype(np.int64)
    ev = {key: np.concatenate(val) for key, val in cols.items()}
    order = np.lexsort((-ev["dur"], ev["ts"], ev["lane"]))
    ev = {key: val[order] for key, val in ev.items()}
    n = len(ev["ts"])
    names = np.array([f"aten::op_{i}" for i in range(200)], dtype=object)
    events = pd.DataFrame(
        {
            "ts": ev["ts"],
            "dur": ev["dur"],
            "name": pd.Categorical.from_codes(rng.integers(0, 200, n), categories=names),
            "cat": pd.Categorical.from_codes(np.zeros(n, np.int64), categories=["cpu_op"]),
            "kind": pd.Categorical.from_codes(np.zeros(n, np.int64), categories=["cpu_op"]),
            "pid": np.zeros(n, np.int64),
            "tid": ev["lane"],
            "lane": ev["lane"],
            "depth": ev["depth"],
            "parent": np.full(n, -1),
            "corr": np.full(n, -1),
            "ext_id": np.full(n, -1),
            "shape": pd.Categorical.from_codes(np.zeros(n, np.int64), categories=[""]),
        }
    )
    lanes = pd.DataFrame(
        {
            "lane": np.arange(n_lanes),
            "pid": 0,
            "tid": np.arange(n_lanes),
            "sub": 0,
            "process": "bench",
            "thread": [f"thread {i}" for i in range(n_lanes)],
            "label": [f"bench · thread {i}" for i in range(n_lanes)],
            "device": "cpu",
            "sort_key": np.arange(n_lanes),
            "max_depth": levels - 1,
            "n_events": np.bincount(ev["lane"], minlength=n_lanes),
        }
    )
    empty = {
        name: schema.empty(s)
        for name, s in (
            ("i", schema.INSTANTS),
            ("c", schema.COUNTERS),
            ("f", schema.FLOWS),
            ("m", schema.MEMORY_EVENTS),
        )
    }
    return Timeline(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=empty["i"],
        counters=empty["c"],
        flows=empty["f"],
        memory=empty["m"],
        duration_ns=int((ev["ts"] + ev["dur"]).max()),
    )


def synthetic_tree(n_nodes: int, seed: int = 0) -> CallTree:
    """A random tree (parents precede children) whose totals add up (total = self + children)."""
    rng = np.random.default_rng(seed)
    i = np.arange(1, n_nodes)
    # parent = i * u**0.3: mostly recent nodes (depth ~ 25-40), with some fan-out everywhere.
    parent = np.r_[-1, (i * rng.random(n_nodes - 1) ** 0.3).astype(np.int64)].astype(np.int32)
    self_ns = rng.exponential(1e5, n_nodes)
    frame = rng.integers(0, 2000, n_nodes).astype(np.int32)
    frame[0] = -1
    tree = CallTree(
        parent=parent,
        frame=frame,
        frames=pd.DataFrame({"name": [f"fn_{k}" for k in range(2000)], "file": "", "line": 0}),
        metrics={"self_ns": self_ns, "calls": np.ones(n_nodes)},
    )
    depth = node_depths(tree)
    total = self_ns.copy()
    for d in range(int(depth.max()), 0, -1):
        nodes = np.flatnonzero(depth == d)
        np.add.at(total, parent[nodes], total[nodes])
    tree.metrics["total_ns"] = total
    return tree


def _frames(view, step: Callable[[], None], n: int) -> tuple[float, float]:
    """Median (whole repaint ms, rect item ms) over n frames, each after `step()`."""
    whole, item = [], []
    for _ in range(n):
        step()
        t = time.perf_counter()
        view.plot.viewport().repaint()
        whole.append((time.perf_counter() - t) * 1e3)
        item.append(view.batch.stats.get("ms", float("nan")))
    return statistics.median(whole), statistics.median(item)


def bench_view(label: str, view, n: int, fit: Callable[[], None]) -> None:
    from PySide6.QtWidgets import QApplication

    vb = view.viewbox
    view.resize(1600, 900)
    t = time.perf_counter()
    view.show()
    QApplication.processEvents()
    fit()
    view.plot.viewport().repaint()
    first = (time.perf_counter() - t) * 1e3  # show + layout + first paints (builds the LOD)
    lo, hi = view.x_range()
    mid = (lo + hi) / 2
    cases: list[tuple[str, Callable[[], None], Callable[[], None]]] = [
        ("full zoom-out", fit, fit),
        (
            "mid zoom (1/20)",
            lambda: vb.setXRange(mid, mid + (hi - lo) / 20, padding=0),
            lambda: None,
        ),
        (
            "deep zoom (1/5000)",
            lambda: vb.setXRange(mid, mid + (hi - lo) / 5000, padding=0),
            lambda: None,
        ),
        (
            "panning at 1/20",
            lambda: vb.setXRange(mid, mid + (hi - lo) / 20, padding=0),
            lambda: vb.pan_x(0.05),
        ),
    ]
    print(f"{label:<28} {'show + first paint':<20} {first:8.1f} ms")
    for name, setup, step in cases:
        setup()
        view.plot.viewport().repaint()  # warm the level of detail for this zoom
        whole, item = _frames(view, step, n)
        print(
            f"{label:<28} {name:<20} {whole:8.1f} ms  (rect item {item:5.1f} ms, "
            f"{int(view.batch.stats.get('visible', 0)):>6} rects)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 5_000_000])
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--frames", type=int, default=15)
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    from perfview.qt.views.icicle_view import IcicleView
    from perfview.qt.views.timeline_view import TimelineView

    app = QApplication.instance() or QApplication([])
    print(f"{'case':<28} {'view':<20} {'median':>8}")
    for size in args.sizes:
        t = time.perf_counter()
        timeline = synthetic_timeline(size)
        made = time.perf_counter() - t
        t = time.perf_counter()
        view = TimelineView(timeline)
        built = time.perf_counter() - t
        label = f"timeline {len(timeline.events) / 1e6:.1f}M slices"
        print(f"{label:<28} {'generate / build':<20} {made * 1e3:8.0f} ms / {built * 1e3:.0f} ms")
        bench_view(label, view, args.frames, view.fit_all)
        view.close()
        del view, timeline
    t = time.perf_counter()
    tree = synthetic_tree(args.nodes)
    icicle = IcicleView(tree)
    label = f"icicle {len(tree) // 1000}k nodes"
    print(f"{label:<28} {'build':<20} {(time.perf_counter() - t) * 1e3:8.0f} ms")
    bench_view(label, icicle, args.frames, lambda: icicle.zoom_to(0))
    app.processEvents()


if __name__ == "__main__":
    main()
