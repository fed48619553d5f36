"""Walking a step's critical path back through a graph, and what is kept of it.

A step's path is read off a replay of the graph (`step_paths`: from the step's end, each node's
binding edge, back to the step's start). What the pages show of it needs only its links' times,
categories and the event rows they are named after (`StepLinks`, a few arrays per step): so
the graph a path was walked on can be let go once its steps' links are taken (`batched`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, step_rows
from perfview.core.analysis.torch.critical_path import replay
from perfview.core.analysis.torch.critical_path.graph import Graph
from perfview.core.analysis.torch.no_steps import pseudo_steps
from perfview.core.model import Timeline


def steps_of(tl: Timeline) -> pd.DataFrame:
    """step, row, start_ns, end_ns: the ProfilerStep slices, else the stand-in steps."""
    steps = step_rows(tl)
    if not len(steps):
        steps = pseudo_steps(tl)
    return steps[["step", "row", "start_ns", "end_ns"]].reset_index(drop=True)


@dataclass(frozen=True)
class StepNodes:
    """Per step, the node whose time is its start and the node whose time is its end."""

    steps: pd.DataFrame
    begin: np.ndarray
    end: np.ndarray

    @classmethod
    def of(cls, tl: Timeline, graph: Graph, steps: pd.DataFrame | None = None) -> StepNodes:
        steps = steps_of(tl) if steps is None else steps
        row = steps["row"].to_numpy(dtype=I64)
        begin = graph.node_of(row, end=False)
        end = graph.node_of(row, end=True)
        begin[row < 0] = graph.root
        end[row < 0] = -1  # the whole recording ends with whichever node ends last
        return cls(steps, begin, end)


@dataclass(frozen=True)
class StepPath:
    """One step's path under some weights: its edges (latest first) and what each gave."""

    step: int
    start: float
    end: float
    edges: np.ndarray
    ns: np.ndarray  # float64 time each edge gave inside the step


def step_paths(graph: Graph, nodes: StepNodes, t: np.ndarray, via: np.ndarray) -> list[StepPath]:
    """The path of every step from a replay's times and binding edges."""
    out = []
    last = int(np.argmax(t[:-1])) if len(t) > 1 else graph.root
    for i, step in enumerate(nodes.steps["step"].tolist()):
        end = int(nodes.end[i]) if nodes.end[i] >= 0 else last
        start, stop = float(t[nodes.begin[i]]), float(t[end])
        e = replay.walk_back(via, graph.src, t, end, start)
        ns = t[graph.dst[e]] - np.maximum(t[graph.src[e]], start)
        out.append(StepPath(int(step), start, stop, e, ns))
    return out


@dataclass(frozen=True)
class StepLinks:
    """One step's measured path without its graph: per link (latest first) its measured
    begin (clipped to the step's start) and end (ns), the time it gave inside the step, its
    category, the event row it is named after (-1: named by its type) and its type."""

    step: int
    start: float
    end: float
    begin_ns: np.ndarray
    end_ns: np.ndarray
    ns: np.ndarray
    category: np.ndarray
    label: np.ndarray
    etype: np.ndarray


def links_of(graph: Graph, paths: list[StepPath]) -> list[StepLinks]:
    """What the pages keep of each path walked on `graph`."""
    out = []
    for p in paths:
        e = p.edges
        begin = np.maximum(graph.time[graph.src[e]], int(np.ceil(p.start)))
        out.append(StepLinks(p.step, p.start, p.end, begin, graph.time[graph.dst[e]], p.ns,
                             graph.category[e], graph.label[e], graph.etype[e]))  # fmt: skip
    return out


__all__ = ["StepLinks", "StepNodes", "StepPath", "links_of", "step_paths", "steps_of"]
