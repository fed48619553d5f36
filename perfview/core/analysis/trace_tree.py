"""The merged call tree of a trace, for a chosen set of lanes, with one top node per lane.

Merging every thread and GPU stream into one tree (as `calltree.tree_from_events` does with its
defaults) adds up unrelated timelines: kineto's whole-window span `PyTorch Profiler (0)`, a
backward thread and the main thread all become siblings, and the root shows 1.6 s for a 729 ms
trace. Here, as in speedscope, the user picks what to look at (one thread, one process, all CPU
threads, the GPU streams, or all of it), kineto's synthetic spans are left out (their children
move up), and when several lanes are picked each gets its own top node whose time is the lane's
busy time, so the root is the busy time of the selection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import busy_ns
from perfview.core.analysis.calltree import _levels, _merge, _tree, kept_parents, make_frames
from perfview.core.model import CallTree, Timeline

# Profiler bookkeeping, not the program's work: the `Trace` category (kind "trace") and the
# names kineto gives its window markers.
SYNTHETIC_NAME = re.compile(r"^(PyTorch Profiler \(\d+\)|Record Window End|Iteration Start:.*)$")


@dataclass(frozen=True)
class LaneChoice:
    """One entry of the lane selector: `key` for the CLI/settings, `label` for people."""

    key: str
    label: str
    lanes: tuple[int, ...]


def synthetic_mask(events: pd.DataFrame) -> np.ndarray:
    """True for the profiler's own spans (window, iteration markers), never the program's."""
    is_trace = np.asarray(events["kind"] == "trace", dtype=bool)  # categorical: no text copies
    names = events["name"]
    cats = names.cat.categories if isinstance(names.dtype, pd.CategoricalDtype) else None
    if cats is not None:  # match the few distinct names, not every row
        hit = np.asarray([bool(SYNTHETIC_NAME.match(str(c))) for c in cats] or [False])
        by_name = hit[names.cat.codes.to_numpy()] if len(cats) else np.zeros(len(names), bool)
    else:
        by_name = names.astype(str).str.match(SYNTHETIC_NAME.pattern).to_numpy(dtype=bool)
    out: np.ndarray = is_trace | by_name
    return out


def _is_gpu(lanes: pd.DataFrame) -> np.ndarray:
    return lanes["device"].astype(str).str.lower().str.startswith("gpu").to_numpy()


def _lane_table(timeline: Timeline) -> pd.DataFrame:
    """lane, pid, label, device, sort_key for every lane with slices (defaults when missing)."""
    ids = np.unique(timeline.events["lane"].to_numpy(dtype=np.int64))
    given = timeline.lanes.drop_duplicates("lane").set_index("lane")
    out = pd.DataFrame({"lane": ids})
    defaults = {"pid": -1, "label": None, "device": "cpu", "sort_key": None}
    for col, default in defaults.items():
        if col in given.columns:
            out[col] = given[col].reindex(ids).to_numpy()
        else:
            out[col] = default
    out["label"] = [
        str(v) if isinstance(v, str) else f"lane {lane}"
        for v, lane in zip(out["label"], ids, strict=True)
    ]
    out["device"] = out["device"].fillna("cpu").astype(str)
    out["pid"] = pd.to_numeric(out["pid"], errors="coerce").fillna(-1).astype(np.int64)
    out["sort_key"] = pd.to_numeric(out["sort_key"], errors="coerce").fillna(pd.Series(ids))
    return out.sort_values(["sort_key", "lane"], kind="stable").reset_index(drop=True)


def lane_choices(timeline: Timeline, synthetic: np.ndarray | None = None) -> list[LaneChoice]:
    """Selector entries: all CPU threads, all GPU streams, everything, each process, each lane.

    Only lanes with slices other than synthetic spans are offered; a group entry appears when
    it has lanes (and "all" only when both CPU and GPU lanes exist).
    """
    ev = timeline.events
    real = ~(synthetic_mask(ev) if synthetic is None else synthetic)
    used = np.unique(ev["lane"].to_numpy()[real])
    lanes = _lane_table(timeline)
    lanes = lanes[lanes["lane"].isin(used)]
    ids = lanes["lane"].to_numpy(dtype=np.int64)
    gpu = _is_gpu(lanes)
    out: list[LaneChoice] = []
    if (~gpu).any():
        out.append(LaneChoice("cpu", "All CPU threads", tuple(ids[~gpu].tolist())))
    if gpu.any():
        out.append(LaneChoice("gpu", "All GPU streams", tuple(ids[gpu].tolist())))
    if gpu.any() and (~gpu).any():
        out.append(LaneChoice("all", "All threads and streams", tuple(ids.tolist())))
    labels = lanes["label"].astype(str).to_numpy()
    pids = lanes["pid"].to_numpy(dtype=np.int64)
    for pid in pd.unique(pids[~gpu]):
        members = ids[(pids == pid) & ~gpu]
        if len(members) > 1:
            name = labels[(pids == pid) & ~gpu][0].split(" · ")[0]
            out.append(LaneChoice(f"pid:{pid}", f"Process {name}", tuple(members.tolist())))
    out.extend(
        LaneChoice(f"lane:{lane}", str(label), (int(lane),))
        for lane, label in zip(ids, labels, strict=True)
    )
    return out


def default_choice(timeline: Timeline, synthetic: np.ndarray | None = None) -> LaneChoice | None:
    """What the icicle shows first: all CPU threads, else the GPU streams, else nothing."""
    choices = lane_choices(timeline, synthetic)
    return choices[0] if choices else None


def resolve_choice(timeline: Timeline, spec: str) -> LaneChoice:
    """A selector entry from `cpu`, `gpu`, `all`, `pid:N`, a lane number or a label fragment.

    Raises ValueError with one sentence listing what exists when nothing (or several lanes)
    match.
    """
    choices = lane_choices(timeline)
    text = spec.strip()
    key = f"lane:{text}" if text.isdigit() else text.lower()
    for choice in choices:
        if choice.key == key:
            return choice
    lanes = [c for c in choices if c.key.startswith("lane:")]
    hits = [c for c in lanes if text.lower() in c.label.lower()]
    if len(hits) == 1:
        return hits[0]
    keys = ", ".join(c.key.removeprefix("lane:") for c in choices)
    why = "matches several lanes" if hits else "matches no lane"
    raise ValueError(f"--lanes {spec!r} {why}; choose one of: {keys}")


_KINETO_THREAD = re.compile(r"^thread -?\d+ \((.+)\)$")


def _lane_names(timeline: Timeline, lane_ids: np.ndarray) -> list[str]:
    """Top-node names that stay the same from run to run (so compare views match them).

    A CPU lane is named by its thread name (kineto's "thread 2910249 (pt_main_thread)" gives
    "pt_main_thread"), else by the thread part of its label; a GPU stream keeps its label
    ("GPU 0 · stream 7"). Repeated names get " #2", " #3" in lane order.
    """
    lanes = _lane_table(timeline).set_index("lane")
    names: list[str] = []
    for lane in lane_ids.tolist():
        label = str(lanes.at[lane, "label"])
        if str(lanes.at[lane, "device"]).lower().startswith("gpu"):
            names.append(label)
            continue
        part = label.split(" · ")[-1]
        m = _KINETO_THREAD.match(part)
        names.append(m.group(1) if m else part)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            names[i] = f"{name} #{seen[name]}"
    return names


def trace_tree(timeline: Timeline, choice: LaneChoice | None = None) -> CallTree:
    """Merged tree of the chosen lanes (default: `default_choice`) without synthetic spans.

    With several lanes, the root's children are the lanes (total = the lane's busy time, the
    union of its top-level slices); with one, the root is that lane. Metrics as in
    `calltree.tree_from_events`: total_ns, self_ns (duration not covered by children), calls.
    """
    ev = timeline.events
    synthetic = synthetic_mask(ev)
    choice = choice if choice is not None else default_choice(timeline, synthetic)
    lane_all = ev["lane"].to_numpy(dtype=np.int64)
    keep = np.isin(lane_all, np.asarray(choice.lanes if choice else (), dtype=np.int64))
    keep &= ~synthetic
    idx, up = kept_parents(ev["parent"].to_numpy(dtype=np.int64), keep)  # past synthetic spans
    depth = ev["depth"].to_numpy(dtype=np.int64)[idx]
    level = _levels(up, depth) if len(idx) else depth
    names = ev["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    key = names.cat.codes.to_numpy(dtype=np.int64)[idx]
    dur = ev["dur"].to_numpy(dtype=np.float64)[idx]
    ts = ev["ts"].to_numpy(dtype=np.int64)[idx]
    child_sum = np.bincount(up[up >= 0], weights=dur[up >= 0], minlength=len(idx))
    self_ = np.maximum(dur - child_sum, 0.0)
    calls = np.ones(len(idx))
    lane = lane_all[idx]
    lane_ids, lane_code = np.unique(lane, return_inverse=True)
    top = up < 0
    end = ts + dur.astype(np.int64)
    busy = busy_ns(lane_code[top], ts[top], end[top], len(lane_ids)).astype(np.float64)
    frame_names = list(names.cat.categories.astype(str))
    if len(lane_ids) > 1:  # one top node per lane, above its slices
        n = len(idx)
        top_sum = np.bincount(lane_code[top], weights=dur[top], minlength=len(lane_ids))
        up = np.concatenate([np.where(top, n + lane_code, up), np.full(len(lane_ids), -1)])
        level = np.concatenate([level + 1, np.zeros(len(lane_ids), dtype=np.int64)])
        key = np.concatenate([key, len(frame_names) + np.arange(len(lane_ids))])
        dur = np.concatenate([dur, busy])
        self_ = np.concatenate([self_, np.maximum(busy - top_sum, 0.0)])
        calls = np.concatenate([calls, np.ones(len(lane_ids))])
        frame_names += _lane_names(timeline, lane_ids)
    parent, frame, metrics = _merge(up, level, key, dur, self_, calls)
    metrics["total_ns"][0] = float(busy.sum())
    return _tree(parent, frame, make_frames(frame_names), metrics)


__all__ = [
    "SYNTHETIC_NAME",
    "LaneChoice",
    "default_choice",
    "lane_choices",
    "resolve_choice",
    "synthetic_mask",
    "trace_tree",
]
