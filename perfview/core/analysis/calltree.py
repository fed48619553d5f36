"""Call trees: build them (trace slices, folded stacks, pstats) and derive views from them.

Everything here is pure numpy/pandas and works level by level, never node by node: a merged
tree is built by grouping (parent node, frame) pairs one depth at a time, so a million trace
slices cost a few sorts. Derived trees (bottom-up, focus) are built the same way, from
"items" (a path element with a parent item, a depth and a frame) that `_merge` folds into nodes.

Node 0 is always a synthetic root with frame -1 and parents precede children in node order,
which is what `CallTree` and the icicle layout rely on.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np
import pandas as pd

from perfview.core.analysis.pstats_graph import (
    build_pstats_tree,
    callers_callees,
    root_functions,
    tree_from_pstats,
)
from perfview.core.model import CallTree, Timeline

_METRICS = ("total_ns", "self_ns", "calls")


def make_frames(names: Iterable[str], files: Iterable[str] | None = None) -> pd.DataFrame:
    """A frames table (name, file, line) for frames known only by name (traces, folded text)."""
    name_list = [str(n) for n in names]
    file_list = [str(f) for f in files] if files is not None else [""] * len(name_list)
    return pd.DataFrame(
        {
            "name": pd.Series(name_list, dtype=object),
            "file": pd.Series(file_list, dtype=object),
            "line": np.full(len(name_list), -1, dtype=np.int64),
        }
    )


def _merge(
    up: np.ndarray,
    level: np.ndarray,
    key: np.ndarray,
    total: np.ndarray,
    self_: np.ndarray,
    calls: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Fold path items into a merged tree: items with the same parent node and key share a node.

    `up[i]` is the item's parent item (-1 at the top), `level[i]` its exact depth (0 at the
    top, parent's level + 1 otherwise), `key[i]` its frame (>= 0). Returns (parent, frame,
    metrics) with node 0 the root; siblings are ordered by decreasing total.
    """
    n_keys = int(key.max()) + 1 if len(key) else 1
    parent_parts = [np.array([-1], dtype=np.int64)]
    frame_parts = [np.array([-1], dtype=np.int64)]
    metric_parts: dict[str, list[np.ndarray]] = {
        "total_ns": [np.array([total[level == 0].sum()])],
        "self_ns": [np.zeros(1)],
        "calls": [np.zeros(1)],
    }
    item_node = np.zeros(len(up), dtype=np.int64)
    order = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[order], np.arange(int(level.max()) + 2 if len(level) else 1))
    next_id = 1
    for lo, hi in itertools.pairwise(bounds):
        idx = order[lo:hi]
        if len(idx) == 0:
            continue
        up_idx = up[idx]
        pnode = np.where(up_idx >= 0, item_node[np.maximum(up_idx, 0)], 0)
        combined = pnode * n_keys + key[idx]
        uniq, inv = np.unique(combined, return_inverse=True)
        inv = inv.reshape(-1)
        tot = np.bincount(inv, weights=total[idx], minlength=len(uniq))
        node_parent = uniq // n_keys
        rank = np.lexsort((-tot, node_parent))  # nodes sorted by parent, biggest first
        new_id = np.empty(len(uniq), dtype=np.int64)
        new_id[rank] = next_id + np.arange(len(uniq))
        item_node[idx] = new_id[inv]
        parent_parts.append(node_parent[rank])
        frame_parts.append((uniq % n_keys)[rank])
        metric_parts["total_ns"].append(tot[rank])
        metric_parts["self_ns"].append(
            np.bincount(inv, weights=self_[idx], minlength=len(uniq))[rank]
        )
        metric_parts["calls"].append(
            np.bincount(inv, weights=calls[idx], minlength=len(uniq))[rank]
        )
        next_id += len(uniq)
    metrics = {m: np.concatenate(parts).astype(np.float64) for m, parts in metric_parts.items()}
    parent = np.concatenate(parent_parts).astype(np.int32)
    frame = np.concatenate(frame_parts).astype(np.int32)
    return parent, frame, metrics


def _compact(
    parent: np.ndarray, frame: np.ndarray, frames: pd.DataFrame
) -> tuple[np.ndarray, pd.DataFrame]:
    """Drop frames no node uses (keeps frames tables small after filtering)."""
    used = np.unique(frame[frame >= 0])
    if len(used) == len(frames):
        return frame, frames
    remap = np.full(len(frames), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    new_frame = np.where(frame >= 0, remap[np.maximum(frame, 0)], -1).astype(np.int32)
    return new_frame, frames.iloc[used].reset_index(drop=True)


def _tree(
    parent: np.ndarray,
    frame: np.ndarray,
    frames: pd.DataFrame,
    metrics: dict[str, np.ndarray],
    *,
    estimated: bool = False,
) -> CallTree:
    frame, frames = _compact(parent, frame, frames)
    return CallTree(parent=parent, frame=frame, frames=frames, metrics=metrics, estimated=estimated)


def tree_from_folded(text: str) -> CallTree:
    """Build a tree from folded stacks ("main;f;g 3" per line; the weight is self time in ns).

    `calls` counts the stack lines that pass through a node. Used by tests and for
    `export_stacks` output of torch.profiler.
    """
    stacks: list[list[str]] = []
    weights: list[float] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        stack, _, weight = line.rpartition(" ")
        if not stack:
            stack, weight = weight, "1"
        stacks.append(stack.split(";"))
        weights.append(float(weight))
    names = sorted({name for stack in stacks for name in stack})
    code = {name: i for i, name in enumerate(names)}
    lengths = np.array([len(s) for s in stacks], dtype=np.int64)
    starts = (np.cumsum(lengths) - lengths).astype(np.int64)
    level = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)
    up = np.where(level > 0, np.arange(len(level)) - 1, -1)
    key = np.array([code[name] for stack in stacks for name in stack], dtype=np.int64)
    total = np.repeat(np.asarray(weights, dtype=np.float64), lengths)
    is_leaf = np.zeros(len(level), dtype=bool)
    is_leaf[starts + lengths - 1] = True
    self_ = np.where(is_leaf, total, 0.0)
    parent, frame, metrics = _merge(up, level, key, total, self_, np.ones(len(level)))
    return _tree(parent, frame, make_frames(names), metrics)


def _default_lanes(timeline: Timeline) -> np.ndarray:
    lanes = timeline.lanes
    if len(lanes) == 0:
        return np.unique(timeline.events["lane"].to_numpy())
    device = lanes["device"].astype(str).str.lower()
    return lanes["lane"].to_numpy()[~device.str.startswith("gpu").to_numpy()]


def _levels(up: np.ndarray, order_hint: np.ndarray) -> np.ndarray:
    """Exact depth of every item, processing items in an order where parents come first."""
    level = np.zeros(len(up), dtype=np.int64)
    hint_order = np.argsort(order_hint, kind="stable")
    bounds = np.searchsorted(order_hint[hint_order], np.arange(int(order_hint.max()) + 2))
    for lo, hi in itertools.pairwise(bounds):
        idx = hint_order[lo:hi]
        parents = up[idx]
        level[idx] = np.where(parents >= 0, level[np.maximum(parents, 0)] + 1, 0)
    return level


def kept_parents(parent: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kept slices (`idx`, rows where `keep` holds) and each one's nearest kept ancestor as
    an index into `idx` (-1: none), climbing past the slices left out."""
    idx = np.flatnonzero(keep)
    anc = parent[idx]
    bad = (anc >= 0) & ~keep[np.maximum(anc, 0)]
    while bad.any():
        anc[bad] = parent[anc[bad]]
        bad = (anc >= 0) & ~keep[np.maximum(anc, 0)]
    local = np.full(len(parent), -1, dtype=np.int64)
    local[idx] = np.arange(len(idx))
    return idx, np.where(anc >= 0, local[np.maximum(anc, 0)], -1)


def tree_from_events(
    timeline: Timeline,
    *,
    lanes: Iterable[int] | None = None,
    kinds: Iterable[str] | None = None,
) -> CallTree:
    """Exact merged call tree of trace slices, merged by name path across the chosen lanes.

    Default lanes are all lanes whose device is not a GPU. With `kinds`, slices of other
    kinds are skipped and their children attach to the nearest kept ancestor. Metrics:
    total_ns (sum of durations), self_ns (duration not covered by child slices), calls.
    """
    ev = timeline.events
    lane_ids = np.asarray(list(lanes) if lanes is not None else _default_lanes(timeline))
    mask = np.isin(ev["lane"].to_numpy(), lane_ids)
    if kinds is not None:
        mask &= ev["kind"].astype(str).isin(list(kinds)).to_numpy()
    idx, up = kept_parents(ev["parent"].to_numpy(dtype=np.int64), mask)
    depth = ev["depth"].to_numpy(dtype=np.int64)[idx]
    level = depth
    if kinds is not None or (
        len(idx) and not np.array_equal(depth[up >= 0], depth[up[up >= 0]] + 1)
    ):
        level = _levels(up, depth) if len(idx) else depth
    names = ev["name"]
    if not isinstance(names.dtype, pd.CategoricalDtype):
        names = names.astype("category")
    key = names.cat.codes.to_numpy(dtype=np.int64)[idx]
    dur = ev["dur"].to_numpy(dtype=np.float64)[idx]
    child_sum = np.bincount(up[up >= 0], weights=dur[up >= 0], minlength=len(idx))
    self_ = np.maximum(dur - child_sum, 0.0)
    parent, frame, metrics = _merge(up, level, key, dur, self_, np.ones(len(idx)))
    return _tree(parent, frame, make_frames(names.cat.categories), metrics)


def node_depths(tree: CallTree) -> np.ndarray:
    """Depth of every node by pointer doubling (log(depth) vector passes, no Python loop)."""
    parent = tree.parent.astype(np.int64)
    dist = (parent >= 0).astype(np.int64)
    jump = parent.copy()
    while (jump >= 0).any():
        live = jump >= 0
        dist[live] += dist[jump[live]]
        jump[live] = jump[jump[live]]
    return dist


def _by_level(depth: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    return [order[lo:hi] for lo, hi in itertools.pairwise(bounds)]


def invert(tree: CallTree) -> CallTree:
    """Bottom-up tree: top level = functions where self time is spent, children = their callers.

    Each original node with self time contributes its path read upwards; `total_ns` of a
    bottom-up node is the self time of the paths through it, `self_ns` the part whose path
    ends there (the outermost caller), `calls` the contributing nodes' calls.
    """
    self_ns = tree.metrics["self_ns"]
    contrib = np.flatnonzero(self_ns != 0)
    contrib = contrib[contrib > 0]
    parent = tree.parent.astype(np.int64)
    calls_all = tree.metrics.get("calls", np.zeros(len(tree)))
    ups, levels, keys, totals, selfs, calls = [], [], [], [], [], []
    cur = contrib
    prev_item = np.full(len(contrib), -1, dtype=np.int64)
    alive = np.arange(len(contrib))
    offset = 0
    level = 0
    while len(alive):
        nodes = cur[alive]
        ends = parent[nodes] <= 0
        weight = self_ns[contrib[alive]]
        ups.append(prev_item[alive])
        levels.append(np.full(len(alive), level, dtype=np.int64))
        keys.append(tree.frame[nodes].astype(np.int64))
        totals.append(weight)
        selfs.append(np.where(ends, weight, 0.0))
        calls.append(calls_all[contrib[alive]])
        prev_item[alive] = offset + np.arange(len(alive))
        offset += len(alive)
        cur = cur.copy()
        cur[alive] = parent[nodes]
        alive = alive[~ends]
        level += 1

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    p, f, m = _merge(
        cat(ups, np.int64),
        cat(levels, np.int64),
        cat(keys, np.int64),
        cat(totals, np.float64),
        cat(selfs, np.float64),
        cat(calls, np.float64),
    )
    return _tree(p, f, tree.frames, m, estimated=tree.estimated)


def _marked_below(tree: CallTree, marked: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """True for nodes with a marked strict ancestor (computed level by level)."""
    below = np.zeros(len(tree), dtype=bool)
    parent = tree.parent.astype(np.int64)
    for idx in _by_level(depth)[1:]:
        par = parent[idx]
        below[idx] = below[par] | marked[par]
    return below


def _subtrees(tree: CallTree, tops: np.ndarray, *, estimated: bool) -> CallTree:
    """Merge the subtrees rooted at `tops` (none inside another) under a new root."""
    depth = node_depths(tree)
    is_top = np.zeros(len(tree), dtype=bool)
    is_top[tops] = True
    inside = _marked_below(tree, is_top, depth) | is_top
    items = np.flatnonzero(inside)
    local = np.full(len(tree), -1, dtype=np.int64)
    local[items] = np.arange(len(items))
    par = tree.parent.astype(np.int64)[items]
    up = np.where(is_top[items], -1, local[np.maximum(par, 0)])
    top_depth = np.zeros(len(tree), dtype=np.int64)
    top_depth[tops] = depth[tops]
    for idx in _by_level(depth)[1:]:  # carry each top's depth down its subtree
        keep = ~is_top[idx]
        top_depth[idx[keep]] = top_depth[tree.parent[idx[keep]]]
    level = depth[items] - top_depth[items]
    m = tree.metrics
    zeros = np.zeros(len(tree))
    p, f, metrics = _merge(
        up,
        level,
        tree.frame[items].astype(np.int64),
        m["total_ns"][items],
        m.get("self_ns", zeros)[items],
        m.get("calls", zeros)[items],
    )
    return _tree(p, f, tree.frames, metrics, estimated=estimated)


def focus(tree: CallTree, node: int) -> CallTree:
    """The subtree rooted at `node`, under a new synthetic root."""
    if node <= 0:
        return tree
    return _subtrees(tree, np.array([node], dtype=np.int64), estimated=tree.estimated)


def focus_frame(tree: CallTree, frame: int) -> CallTree:
    """Every outermost subtree of one frame (function), merged: where does its time go?"""
    marked = tree.frame == frame
    below = _marked_below(tree, marked, node_depths(tree))
    tops = np.flatnonzero(marked & ~below)
    return _subtrees(tree, tops, estimated=tree.estimated)


def callers_callees_tree(tree: CallTree, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(callers, callees) of every node named `name`, aggregated by the other side's name.

    Columns: name, total_ns, self_ns, calls. For callers, the numbers are the named function's
    own (time spent in it when called from that caller); for callees, the callee nodes'.
    Recursive occurrences are each counted, so totals can exceed the function's own total.
    """
    names = np.append(tree.frames["name"].to_numpy(dtype=object), "(root)")
    frame_names = names[tree.frame]  # frame -1 (the root) picks the appended "(root)"
    hits = np.flatnonzero(frame_names == name)
    hits = hits[hits > 0]
    parent = tree.parent.astype(np.int64)
    is_hit = np.zeros(len(tree), dtype=bool)
    is_hit[hits] = True
    child = np.flatnonzero((parent >= 0) & is_hit[np.maximum(parent, 0)])
    m = tree.metrics
    zeros = np.zeros(len(tree))

    def table(label_nodes: np.ndarray, value_nodes: np.ndarray) -> pd.DataFrame:
        df = pd.DataFrame(
            {
                "name": frame_names[label_nodes].astype(object),
                "total_ns": m["total_ns"][value_nodes],
                "self_ns": m.get("self_ns", zeros)[value_nodes],
                "calls": m.get("calls", zeros)[value_nodes],
            }
        )
        out = df.groupby("name", sort=False).sum().reset_index()
        out = out.sort_values("total_ns", ascending=False, kind="stable")
        return out.reset_index(drop=True)

    return table(parent[hits], hits), table(child, child)


__all__ = [
    "build_pstats_tree",
    "callers_callees",
    "callers_callees_tree",
    "focus",
    "focus_frame",
    "invert",
    "kept_parents",
    "make_frames",
    "node_depths",
    "root_functions",
    "tree_from_events",
    "tree_from_folded",
    "tree_from_pstats",
]
