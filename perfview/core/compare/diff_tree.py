"""Differential call tree: the union of A's and B's call paths, with both runs' costs per node.

Nodes are aligned by their *path of frame keys* from the root (text, never per-file frame ids),
as heaptrack's diff does. The result is an ordinary `CallTree`, so the icicle layout code draws
it unchanged: widths come from B (`total_ns` = `total_b`, the differential flame graph
convention), colour from `delta`. Paths only A had stay in the tree with zero B cost, so tables
and hover text can still show them even though they take no width.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.model import CallTree

# Metrics diffed when both trees have them: tree metric -> prefix of the diff metrics.
_DIFFED = {"total_ns": "total", "self_ns": "self", "calls": "calls"}


def frame_keys(frames: pd.DataFrame, match: str = "basename") -> pd.Series:
    """Text key per frame: name, plus file (basename or full) and line unless `match="name"`."""
    key = frames["name"].astype(object).astype(str)
    if match == "name" or "file" not in frames.columns:
        return key
    file = frames["file"].astype(object).astype(str).str.replace("\\", "/", regex=False)
    if match == "basename":
        file = file.str.rsplit("/", n=1).str[-1]
    line = frames["line"].astype(object).astype(str) if "line" in frames.columns else ""
    return key + "\x1f" + file + "\x1f" + line


def _node_keys(tree: CallTree, codes: np.ndarray) -> np.ndarray:
    """Key code of every node; the synthetic root (frame -1) gets -1."""
    frame = tree.frame.astype(np.int64)
    out = np.full(len(frame), -1, dtype=np.int64)
    ok = frame >= 0
    out[ok] = codes[frame[ok]]
    return out


def path_ids(
    a: CallTree, b: CallTree, match: str = "basename"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shared path ids for the nodes of both trees (0 = root): equal id ⇔ equal key path.

    Returns (path of each A node, path of each B node, parent path of each path). Works one
    depth level at a time: a node's path is (its parent's path id, its key), so each level is
    one `np.unique` over the pairs of both trees together; no per-node Python. Ids grow with
    depth, so parents always precede children.
    """
    keys = pd.concat([frame_keys(a.frames, match), frame_keys(b.frames, match)])
    codes, _ = pd.factorize(keys.to_numpy())
    ka = _node_keys(a, codes[: len(a.frames)])
    kb = _node_keys(b, codes[len(a.frames) :])
    pa, pb = np.zeros(len(a), dtype=np.int64), np.zeros(len(b), dtype=np.int64)
    par_a, par_b = a.parent.astype(np.int64), b.parent.astype(np.int64)
    da, db = a.depth, b.depth
    parents = [np.full(1, -1, dtype=np.int64)]
    next_id = 1
    for level in range(1, int(max(da.max(initial=0), db.max(initial=0))) + 1):
        ia, ib = np.flatnonzero(da == level), np.flatnonzero(db == level)
        pairs = np.concatenate(
            [
                np.stack([pa[par_a[ia]], ka[ia]], axis=1),
                np.stack([pb[par_b[ib]], kb[ib]], axis=1),
            ]
        )
        uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
        ids = next_id + inverse.reshape(-1)
        pa[ia], pb[ib] = ids[: len(ia)], ids[len(ia) :]
        parents.append(uniq[:, 0].astype(np.int64))
        next_id += len(uniq)
    return pa, pb, np.concatenate(parents)


def _first_of(paths: np.ndarray, n_paths: int) -> np.ndarray:
    """First node of each path (-1 where none); `np.unique` reports first occurrences."""
    first = np.full(n_paths, -1, dtype=np.int64)
    uniq, index = np.unique(paths, return_index=True)
    first[uniq] = index
    return first


def diff_tree(a: CallTree, b: CallTree, *, match: str = "basename") -> CallTree:
    """Merged tree of runs A and B, one node per key path, with both runs' costs.

    Metrics: `total_a`, `total_b`, `delta` (and `self_a/_b/_delta`, `calls_a/_b/_delta` when
    both trees have them), plus `total_ns`/`self_ns`/`calls` = B's values for the icicle layout.
    Sibling nodes with equal keys (possible with `match="name"`, or same-named modules under
    `basename`) merge into one node whose costs are summed, the same in both runs, so swapping
    A and B gives the same shape. A node's frame is B's when B has the path, else A's.
    """
    pa, pb, parent = path_ids(a, b, match)
    n = len(parent)
    b_first, a_first = _first_of(pb, n), _first_of(pa, n)
    frame_b = b.frame.astype(np.int64)[np.maximum(b_first, 0)]
    frame_a = a.frame.astype(np.int64)[np.maximum(a_first, 0)] + len(b.frames)
    frame = np.where(b_first >= 0, frame_b, frame_a)
    frame[0] = -1
    frames = pd.concat([b.frames, a.frames], ignore_index=True)
    metrics: dict[str, np.ndarray] = {}
    for name, prefix in _DIFFED.items():
        if name not in a.metrics or name not in b.metrics:
            continue
        val_a = np.bincount(pa, weights=a.metrics[name].astype(np.float64), minlength=n)
        val_b = np.bincount(pb, weights=b.metrics[name].astype(np.float64), minlength=n)
        delta_name = "delta" if prefix == "total" else f"{prefix}_delta"
        metrics |= {f"{prefix}_a": val_a, f"{prefix}_b": val_b, delta_name: val_b - val_a}
        metrics[name] = val_b
    return CallTree(
        parent=parent.astype(np.int32),
        frame=frame.astype(np.int32),
        frames=frames,
        metrics=metrics,
        estimated=a.estimated or b.estimated,
    )


__all__ = ["diff_tree", "frame_keys", "path_ids"]
