"""Export a merged call tree as speedscope JSON or collapsed stacks.

Any tree perfview builds (pstats' estimated tree, a trace's merged slices, a sampled profile)
can be handed to the tools that read these formats: speedscope.app, FlameGraph's
flamegraph.pl, inferno, or perfview itself. Both formats are weighted stacks, so the tree
is written as one stack per node with self weight (its path from the root) and that weight;
every node's total is then the sum below it, which is how `CallTree` defines it.

Frames keep file and line: speedscope has fields for them, and collapsed frames are written
in py-spy's `name (file:line)` style, which the collapsed loader reads back. A `;` inside a
name (which would split the frame) becomes `:`. Weights are integers when they are whole.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from perfview.core.model import CallTree

# perfview unit → speedscope ValueUnit
SPEEDSCOPE_UNITS = {"ns": "nanoseconds", "bytes": "bytes", "samples": "none"}
SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _weight(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def leaf_stacks(tree: CallTree) -> tuple[np.ndarray, list[list[int]]]:
    """Nodes with self weight (in node order) and each one's frame path, root first."""
    nodes = np.flatnonzero(tree.metrics["self_ns"] > 0)
    nodes = nodes[nodes > 0]
    parent = tree.parent
    frame = tree.frame
    paths: list[list[int]] = []
    cache: dict[int, list[int]] = {0: []}
    for node in nodes.tolist():
        chain: list[int] = []
        cur = node
        while cur not in cache:
            chain.append(cur)
            cur = int(parent[cur])
        path = list(cache[cur])
        for n in reversed(chain):
            path.append(int(frame[n]))
            cache[n] = list(path)
        paths.append(path)
    return nodes, paths


def frame_label(name: str, file: str, line: int) -> str:
    """A collapsed-stacks frame: `name (file:line)` when the file is known, else the name."""
    name = name.replace(";", ":")
    if not file:
        return name
    file = file.replace(";", ":")
    return f"{name} ({file}:{line})" if line >= 0 else f"{name} ({file})"


def to_collapsed(tree: CallTree) -> str:
    """One `frame;frame;frame weight` line per node with self weight, heaviest first."""
    nodes, paths = leaf_stacks(tree)
    names = tree.frames["name"].astype(str).tolist()
    files = tree.frames["file"].astype(str).tolist()
    lines = tree.frames["line"].astype(np.int64).tolist()
    labels = [frame_label(n, f, ln) for n, f, ln in zip(names, files, lines, strict=True)]
    weights = tree.metrics["self_ns"][nodes]
    order = np.argsort(-weights, kind="stable")
    out = [
        ";".join(labels[f] for f in paths[i]) + f" {_weight(weights[i])}" for i in order.tolist()
    ]
    return "\n".join(out) + ("\n" if out else "")


def to_speedscope(tree: CallTree, *, name: str = "perfview", unit: str = "ns") -> dict[str, Any]:
    """A speedscope document with one sampled profile whose samples are the tree's stacks."""
    nodes, paths = leaf_stacks(tree)
    weights = [_weight(w) for w in tree.metrics["self_ns"][nodes].tolist()]
    frames: list[dict[str, Any]] = []
    for n, f, ln in zip(
        tree.frames["name"].astype(str),
        tree.frames["file"].astype(str),
        tree.frames["line"].astype(np.int64),
        strict=True,
    ):
        entry: dict[str, Any] = {"name": n}
        if f:
            entry["file"] = f
        if ln >= 0:
            entry["line"] = int(ln)
        frames.append(entry)
    end = _weight(float(sum(weights)))
    return {
        "$schema": SCHEMA,
        "exporter": "perfview",
        "name": name,
        "activeProfileIndex": 0,
        "shared": {"frames": frames},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": SPEEDSCOPE_UNITS.get(unit, "none"),
                "startValue": 0,
                "endValue": end,
                "samples": paths,
                "weights": weights,
            }
        ],
    }


def speedscope_json(tree: CallTree, *, name: str = "perfview", unit: str = "ns") -> str:
    return json.dumps(to_speedscope(tree, name=name, unit=unit), separators=(",", ":"))


__all__ = ["frame_label", "leaf_stacks", "speedscope_json", "to_collapsed", "to_speedscope"]
