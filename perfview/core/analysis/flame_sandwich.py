"""Trees for the bottom-up flame graph and the flame sandwich of one function.

speedscope's sandwich view answers "who calls this function, and where does its time go?"
with two flame graphs that meet at the function: its callers drawn upwards (an inverted
flame, widest at the function) and its callees drawn downwards. Both are ordinary merged
trees built from the full tree, so the icicle widget draws them unchanged:

- callers: every outermost node of the function contributes its *total* weight to the path
  read upwards (the function, its caller, that caller's caller …), via `calltree.invert`;
- callees: the outermost subtrees of the function, merged (its own time as self weight).
Outermost only, so a recursive function is not counted twice.
"""

from __future__ import annotations

import numpy as np

from perfview.core.analysis.calltree import _marked_below, _subtrees, invert, node_depths
from perfview.core.model import CallTree


def _named(tree: CallTree, name: str) -> np.ndarray:
    """True for nodes whose frame is called `name` (the root never is)."""
    names = tree.frames["name"].to_numpy(dtype=object)
    frame = tree.frame.astype(np.int64)
    return np.asarray((frame >= 0) & (names[np.maximum(frame, 0)] == name), dtype=bool)


def _outermost_named(tree: CallTree, name: str) -> np.ndarray:
    marked = _named(tree, name)
    below = _marked_below(tree, marked, node_depths(tree))
    return np.flatnonzero(marked & ~below)


def bottom_up(tree: CallTree) -> CallTree:
    """The inverted tree: top level = where weight is spent (self), below = their callers."""
    return invert(tree)


def callers_tree(tree: CallTree, name: str) -> CallTree:
    """Paths from `name` up to the root, weighted by its total: read upwards, who called it."""
    tops = _outermost_named(tree, name)
    weight = np.zeros(len(tree))
    weight[tops] = tree.metrics["total_ns"][tops]
    metrics = {
        "total_ns": tree.metrics["total_ns"],
        "self_ns": weight,
        "calls": tree.metrics.get("calls", np.zeros(len(tree))),
    }
    masked = CallTree(tree.parent, tree.frame, tree.frames, metrics, estimated=tree.estimated)
    return invert(masked)


def callees_tree(tree: CallTree, name: str) -> CallTree:
    """Every outermost subtree of `name`, merged: where its time goes."""
    return _subtrees(tree, _outermost_named(tree, name), estimated=tree.estimated)


def heaviest_function(tree: CallTree) -> str | None:
    """The function with the most self weight (what a sandwich opens on)."""
    if len(tree) <= 1:
        return None
    nodes = np.arange(1, len(tree))
    per_frame = np.bincount(
        tree.frame[nodes].astype(np.int64),
        weights=tree.metrics["self_ns"][nodes],
        minlength=len(tree.frames),
    )
    if not len(per_frame):
        return None
    return str(tree.frames["name"].iat[int(np.argmax(per_frame))])


__all__ = ["bottom_up", "callees_tree", "callers_tree", "heaviest_function"]
