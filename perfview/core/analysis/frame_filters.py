"""Frames a flame graph may hide: the import system, `runpy`, the profilers' own frames.

memray's flame graphs hide the import system by default (a checkbox shows it): a script's
allocations made while modules load sit under 40+ rows of `<frozen importlib._bootstrap>`
frames, which say nothing about the user's code. The same goes for `runpy` (a `python -m`
launch) and the profiler's own frames (perfview's recorders, memray, cProfile,
memory_profiler, torch.profiler, pyinstrument). Hiding a frame splices its children into its
parent: the weight stays where it was, the rows go, and siblings that meet under the same
parent merge (as a flame graph of stacks without those frames would draw them).

Qt-free and columnar: a filter is a mask over the tree's `frames` table, the hiding one
pass over the nodes in order (parents precede children), the metrics summed with numpy.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.model import CallTree


@dataclass(frozen=True)
class FrameFilter:
    """Frames whose file name matches `pattern` (a regular expression, searched)."""

    key: str
    label: str
    pattern: str


_SEP = r"[/\\]"
FILTERS: tuple[FrameFilter, ...] = (
    FrameFilter(
        "import", "import system", rf"^<frozen importlib\.|{_SEP}importlib{_SEP}_bootstrap"
    ),
    FrameFilter("runpy", "runpy", rf"^<frozen runpy>$|{_SEP}runpy\.py$"),
    FrameFilter(
        "profiler",
        "profiler's own frames",
        rf"{_SEP}perfview{_SEP}(?:runner|recorders){_SEP}|{_SEP}memray{_SEP}"
        rf"|{_SEP}python3[.0-9]*{_SEP}(?:cProfile|profile)\.py$|{_SEP}memory_profiler\.py$"
        rf"|{_SEP}torch{_SEP}(?:profiler{_SEP}|autograd{_SEP}profiler)|{_SEP}pyinstrument{_SEP}",
    ),
)
BY_KEY: Mapping[str, FrameFilter] = {f.key: f for f in FILTERS}

# Where the reference tool hides a filter's frames from the start (memray: the import system).
HIDDEN_BY_DEFAULT: Mapping[str, frozenset[str]] = {"memray": frozenset({"import"})}


def frame_mask(frames: pd.DataFrame, flt: FrameFilter) -> np.ndarray:
    """One bool per row of a tree's `frames` table: the frames `flt` hides."""
    files = frames["file"].astype(str)
    return files.str.contains(flt.pattern, regex=True).to_numpy(dtype=bool)


def hidden_frames(frames: pd.DataFrame, keys: Collection[str]) -> np.ndarray:
    """The union of the masks of the filters named in `keys`."""
    mask = np.zeros(len(frames), dtype=bool)
    for key in keys:
        mask |= frame_mask(frames, BY_KEY[key])
    return mask


def _node_mask(tree: CallTree, frame_hidden: np.ndarray) -> np.ndarray:
    frame = np.asarray(tree.frame, dtype=np.int64)
    return np.where(frame >= 0, frame_hidden[np.maximum(frame, 0)], False)


def hidden_share(tree: CallTree, frame_hidden: np.ndarray) -> float:
    """The share (0-1) of the root's weight that passes through a hidden frame: the totals of
    the hidden nodes with no hidden ancestor, over the root's."""
    hidden = _node_mask(tree, frame_hidden)
    if not hidden.any() or not len(tree):
        return 0.0
    parent = np.asarray(tree.parent, dtype=np.int64)
    under = np.zeros(len(tree), dtype=bool)  # a hidden ancestor above this node
    for i in range(1, len(tree)):  # parents precede children
        p = parent[i]
        under[i] = under[p] or hidden[p]
    total = np.asarray(tree.metrics["total_ns"], dtype=np.float64)
    root = float(total[0])
    return float(total[hidden & ~under].sum() / root) if root > 0 else 0.0


def applicable(tree: CallTree) -> list[tuple[FrameFilter, float, int]]:
    """The filters that would hide something in `tree`: (filter, share of the weight passing
    through its frames, number of nodes it hides)."""
    out = []
    for flt in FILTERS:
        mask = frame_mask(tree.frames, flt)
        nodes = int(_node_mask(tree, mask).sum())
        if nodes:
            out.append((flt, hidden_share(tree, mask), nodes))
    return out


def hide_frames(tree: CallTree, frame_hidden: np.ndarray) -> CallTree:
    """`tree` without the nodes of hidden frames: each one's children join its nearest shown
    ancestor, merging with a sibling of the same frame there. Totals, calls and other
    per-node metrics of shown nodes are summed where nodes merge; a hidden node's `self_*`
    metrics go to that ancestor (its own time or bytes stay counted). Node 0 stays the root;
    the `frames` table is shared, so frame ids (pstats function ids) keep their meaning."""
    hidden = _node_mask(tree, frame_hidden)
    if not hidden.any():
        return tree
    parent = np.asarray(tree.parent, dtype=np.int64).tolist()
    frame = np.asarray(tree.frame, dtype=np.int64).tolist()
    is_hidden = hidden.tolist()
    new_id = [0] * len(parent)
    new_parent, new_frame = [-1], [int(frame[0]) if frame else -1]
    index: dict[tuple[int, int], int] = {}
    for i in range(1, len(parent)):  # parents precede children: new_id[parent] is known
        up = new_id[parent[i]]
        if is_hidden[i]:
            new_id[i] = up
            continue
        key = (up, frame[i])
        found = index.get(key)
        if found is None:
            found = len(new_parent)
            index[key] = found
            new_parent.append(up)
            new_frame.append(frame[i])
        new_id[i] = found
    ids = np.asarray(new_id, dtype=np.int64)
    n = len(new_parent)
    shown = ~hidden
    shown[0] = True
    metrics: dict[str, np.ndarray] = {}
    for name, values in tree.metrics.items():
        values = np.asarray(values, dtype=np.float64)
        if name.startswith("unit_"):  # a marker of the tree's unit, one per node
            metrics[name] = np.ones(n, dtype=np.float64)
        elif name.startswith("self"):
            metrics[name] = np.bincount(ids, weights=values, minlength=n)
        else:
            metrics[name] = np.bincount(ids[shown], weights=values[shown], minlength=n)
    return CallTree(
        parent=np.asarray(new_parent, dtype=tree.parent.dtype),
        frame=np.asarray(new_frame, dtype=tree.frame.dtype),
        frames=tree.frames,
        metrics=metrics,
        estimated=tree.estimated,
        notes=list(tree.notes),
    )


__all__ = [
    "BY_KEY",
    "FILTERS",
    "HIDDEN_BY_DEFAULT",
    "FrameFilter",
    "applicable",
    "frame_mask",
    "hidden_frames",
    "hidden_share",
    "hide_frames",
]
