"""The icicle as a table: the merged call tree in pre-order, for `perfview summary --view icicle`.

One row per node below the root: depth (1 = the root's children), name, file, total_ns, self_ns,
calls; siblings heaviest first, so reading down the rows is reading the icicle top-down, left to
right. `--top N` keeps the N heaviest nodes that hang together (each row's parent is a row too),
found best-first from the root, so a cut never orphans a row.
"""

from __future__ import annotations

import heapq

import numpy as np
import pandas as pd

from perfview.core.analysis import trace_tree
from perfview.core.analysis.bundle_tree import tree_for
from perfview.core.model import Bundle, CallTree

COLUMNS = ("depth", "name", "file", "total_ns", "self_ns", "calls")


def bundle_tree(bundle: Bundle, lanes: str | None = None) -> CallTree | None:
    """The icicle's tree: pstats' estimated tree, or the trace tree of `lanes`.

    `lanes` (traces only): cpu, gpu, all, pid:N, a lane number or a label fragment; None is the
    GUI's default choice. Raises ValueError with one sentence when it does not apply.
    """
    if lanes is None:
        return tree_for(bundle)
    if bundle.timeline is None:
        raise ValueError("--lanes applies to traces only")
    choice = trace_tree.resolve_choice(bundle.timeline, lanes)
    return trace_tree.trace_tree(bundle.timeline, choice)


def _ordered_children(tree: CallTree) -> list[list[int]]:
    """Children of every node, heaviest first (ties: node order)."""
    total = tree.metrics["total_ns"]
    parent = tree.parent.astype(np.int64)
    order = np.lexsort((np.arange(len(tree)), -total, parent))
    kids: list[list[int]] = [[] for _ in range(len(tree))]
    for node in order.tolist():
        if node > 0:
            kids[int(parent[node])].append(node)
    return kids


def _heaviest(tree: CallTree, kids: list[list[int]], limit: int) -> set[int]:
    """The `limit` heaviest nodes reachable from the root, taken best-first."""
    total = tree.metrics["total_ns"]
    heap = [(-float(total[k]), k) for k in kids[0]]
    heapq.heapify(heap)
    chosen: set[int] = set()
    while heap and len(chosen) < limit:
        _, node = heapq.heappop(heap)
        chosen.add(node)
        for k in kids[node]:
            heapq.heappush(heap, (-float(total[k]), k))
    return chosen


def tree_rows(tree: CallTree | None, top: int = 0) -> tuple[pd.DataFrame, int]:
    """(rows in pre-order, number of nodes below the root); `top` > 0 keeps that many rows."""
    if tree is None or len(tree) <= 1:
        text = ("name", "file")
        empty = {c: pd.Series([], dtype=object if c in text else np.int64) for c in COLUMNS}
        return pd.DataFrame(empty), 0
    kids = _ordered_children(tree)
    keep = _heaviest(tree, kids, top) if 0 < top < len(tree) - 1 else None
    order: list[int] = []
    depths: list[int] = []
    stack = [(k, 1) for k in reversed(kids[0])]
    while stack:
        node, depth = stack.pop()
        if keep is not None and node not in keep:
            continue
        order.append(node)
        depths.append(depth)
        stack.extend((k, depth + 1) for k in reversed(kids[node]))
    nodes = np.asarray(order, dtype=np.int64)
    frame = tree.frame[nodes].astype(np.int64)
    files = tree.frames["file"].to_numpy(dtype=object) if "file" in tree.frames else None
    m = tree.metrics
    zeros = np.zeros(len(tree))
    out = pd.DataFrame(
        {
            "depth": np.asarray(depths, dtype=np.int64),
            "name": tree.frames["name"].to_numpy(dtype=object)[frame],
            "file": files[frame] if files is not None else np.full(len(nodes), "", dtype=object),
            "total_ns": np.rint(m["total_ns"][nodes]).astype(np.int64),
            "self_ns": np.rint(m.get("self_ns", zeros)[nodes]).astype(np.int64),
            "calls": np.rint(m.get("calls", zeros)[nodes]).astype(np.int64),
        }
    )
    return out, len(tree) - 1


def icicle_table(bundle: Bundle) -> pd.DataFrame:
    """The whole icicle of a bundle with default lanes (the `summary.VIEWS` entry)."""
    return tree_rows(bundle_tree(bundle))[0]


__all__ = ["COLUMNS", "bundle_tree", "icicle_table", "tree_rows"]
