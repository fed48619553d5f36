"""The critical path of each step and its time by category.

Definition (stated on the page): a step's critical path is the chain of dependencies that
ended last at the step's end: walking back from the end of the `ProfilerStep#N` slice (or of
a stand-in step of a step-less recording), each node is entered through the edge that held it
back (its latest-arriving predecessor), until the walk reaches the step's start. Every edge on
it is exact, so the path's length equals the step's duration; its time is split by the
category of each edge: a CPU op (the innermost slice on the thread), a kernel, a memcpy or
memset, communication (collective kernels and ops), launch latency (runtime call → start),
synchronisation (a blocking call returning after the GPU work it waited for; a stream waiting
on another), data loading (under `enumerate(DataLoader)`), idle (kernel-to-kernel gaps).
HTA's `critical_path_analysis` builds a similar graph; it differs in that it has no cross-
stream edges and labels CPU time between ops differently (see docs/critical-path.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, per_events
from perfview.core.analysis.torch.critical_path import batched
from perfview.core.analysis.torch.critical_path.graph import (
    CATEGORIES,
    Graph,
    build_graph,
    names_of,
)
from perfview.core.analysis.torch.critical_path.walk import (
    StepLinks,
    StepNodes,
    StepPath,
    links_of,
    step_paths,
    steps_of,
)
from perfview.core.model import Timeline

DEFINITION = (
    "The critical path is the chain of dependencies (CPU thread order, launches, stream order, "
    "syncs) that finished last at the step's end; its length is the step's time, split by what "
    "each link was."
)


@per_events  # small: a few arrays per step; the track, the findings, the page, the what-if
def measured_walk(tl: Timeline) -> batched.Walked:
    """Every step's measured path (`steps_of`) and the trace's typical launch latency, walked
    on graphs of batches of steps rather than of the whole trace (`batched`: memory bounded
    by the biggest batch)."""
    return batched.walked(tl, steps_of(tl))


def step_links(tl: Timeline) -> list[StepLinks]:
    """Every step's measured path (`measured_walk`)."""
    return measured_walk(tl).links


def breakdown(tl: Timeline, graph: Graph, paths: list[StepPath]) -> pd.DataFrame:
    """step, category, name, ns, share_pct: each step's path time by category and name,
    biggest first."""
    return links_breakdown(tl, links_of(graph, paths))


def links_breakdown(tl: Timeline, links: list[StepLinks]) -> pd.DataFrame:
    """`breakdown` of paths already walked (`StepLinks`)."""
    frames = []
    for p in links:
        if not len(p.ns):
            continue
        frames.append(pd.DataFrame({
            "step": p.step,
            "category": np.asarray(CATEGORIES, object)[p.category],
            "name": names_of(tl, p.label, p.etype),
            "ns": p.ns,
        }))  # fmt: skip
    cols = ["step", "category", "name", "ns", "share_pct"]
    if not frames:
        return pd.DataFrame(columns=cols)
    rows = pd.concat(frames).groupby(["step", "category", "name"], sort=False)["ns"].sum()
    out = rows.reset_index()
    out["ns"] = np.rint(out["ns"].to_numpy(np.float64)).astype(I64)
    out = out[out["ns"] > 0]  # links that took no time (back-to-back kernels) say nothing
    total = out.groupby("step")["ns"].transform("sum").to_numpy(np.float64)
    out["share_pct"] = np.where(total > 0, out["ns"] * 100.0 / np.where(total > 0, total, 1), 0.0)
    out = out.sort_values(["step", "ns", "category", "name"], ascending=[True, False, True, True])
    return out[cols].reset_index(drop=True)


def contributor_rows(
    tl: Timeline, graph: Graph, paths: list[StepPath]
) -> dict[tuple[int, str, str], np.ndarray]:
    """(step, category, name) of the breakdown → the event rows behind it on the path (the
    slices, kernels and calls its links are named after), for selecting them on a Timeline."""
    return links_contributors(tl, links_of(graph, paths))


def links_contributors(
    tl: Timeline, links: list[StepLinks]
) -> dict[tuple[int, str, str], np.ndarray]:
    """`contributor_rows` of paths already walked."""
    out: dict[tuple[int, str, str], np.ndarray] = {}
    for p in links:
        keep = (p.label >= 0) & (p.ns > 0)
        if not keep.any():
            continue
        frame = pd.DataFrame({
            "category": np.asarray(CATEGORIES, object)[p.category[keep]],
            "name": names_of(tl, p.label[keep], p.etype[keep]),
            "row": p.label[keep],
        })  # fmt: skip
        for (cat, name), rows in frame.groupby(["category", "name"], sort=False)["row"]:
            out[(p.step, str(cat), str(name))] = np.unique(rows.to_numpy(dtype=I64))
    return out


def path_rows(graph: Graph, paths: list[StepPath]) -> dict[int, np.ndarray]:
    """Per step, every event row its critical path is named after (slices, kernels, calls):
    what the Timeline highlights to draw the path over the trace."""
    return links_rows(links_of(graph, paths))


def links_rows(links: list[StepLinks]) -> dict[int, np.ndarray]:
    """`path_rows` of paths already walked."""
    out = {}
    for p in links:
        label = p.label[p.ns > 0]
        out[p.step] = np.unique(label[label >= 0])
    return out


def contributors(tl: Timeline) -> dict[tuple[int, str, str], np.ndarray]:
    """`contributor_rows` of every step's measured path (the Critical path page)."""
    return links_contributors(tl, step_links(tl))


def rows_by_step(tl: Timeline) -> dict[int, np.ndarray]:
    """`path_rows` of every step's measured path (the Critical path page)."""
    return links_rows(step_links(tl))


SEGMENT_COLUMNS = ["step", "start_ns", "end_ns", "category", "name", "row"]


def path_segments(tl: Timeline) -> pd.DataFrame:
    """Every step's critical path as segments in time order, what the Timeline's critical-path
    track draws: step, start_ns, end_ns (inside the step), category, name, and the event row
    the segment is named after (-1: a gap between slices or a hand-off, named by its kind)."""
    frames = []
    for p in step_links(tl):
        keep = p.ns > 0
        if not keep.any():
            continue
        frames.append(pd.DataFrame({
            "step": p.step,
            "start_ns": p.begin_ns[keep],
            "end_ns": p.end_ns[keep],
            "category": np.asarray(CATEGORIES, object)[p.category[keep]],
            "name": names_of(tl, p.label[keep], p.etype[keep]),
            "row": p.label[keep],
        }))  # fmt: skip
    if not frames:
        return pd.DataFrame(columns=SEGMENT_COLUMNS)
    out = pd.concat(frames, ignore_index=True).sort_values(["start_ns", "end_ns"], kind="stable")
    return out[SEGMENT_COLUMNS].reset_index(drop=True)


def path_or_enclosing(tl: Timeline) -> np.ndarray:
    """Mask over the events: slices some step's critical path runs through, and every slice
    enclosing one (a Python loop is on the path when an op inside it is)."""
    rows = rows_by_step(tl)
    on = np.zeros(len(tl.events), dtype=bool)
    parent = tl.events["parent"].to_numpy(dtype=I64)
    level = np.unique(np.concatenate([np.zeros(0, I64), *rows.values()]))
    while len(level):  # up one enclosing level per pass: as many passes as the nesting is deep
        level = level[~on[level]]
        on[level] = True
        level = parent[level]
        level = np.unique(level[level >= 0])
    return on


def by_category(table: pd.DataFrame) -> pd.DataFrame:
    """step × category ns (every category a column, zeros where absent)."""
    wide = table.pivot_table(index="step", columns="category", values="ns", aggfunc="sum")
    return wide.reindex(columns=list(CATEGORIES)).fillna(0).astype(I64)


@per_events  # every what-if replay starts from it (~0.03 s)
def measured_paths(tl: Timeline) -> tuple[Graph, StepNodes, list[StepPath]]:
    """The whole trace's graph, its step nodes and every step's measured path (shared:
    read-only), what a what-if replays; the pages' own paths come from `step_links`."""
    graph = build_graph(tl)
    nodes = StepNodes.of(tl, graph)
    t, via = graph.replay()
    return graph, nodes, step_paths(graph, nodes, t, via)


@per_events  # the page's breakdown and its steps table (bound_by) both read it
def critical_path_table(tl: Timeline) -> pd.DataFrame:
    """`perfview summary --view critical-path`: step, category, name, ns, share_pct."""
    return links_breakdown(tl, step_links(tl))


def steps_table(tl: Timeline) -> pd.DataFrame:
    """`--view critical-path-steps`: step, step_ns, path_ns, bound_by (the category with the
    most time on the step's path) and its share, bound_pct."""
    paths = step_links(tl)
    table = critical_path_table(tl)
    wide = by_category(table) if len(table) else pd.DataFrame()
    rows = []
    for p in paths:
        cats = wide.loc[p.step].to_numpy(np.float64) if p.step in wide.index else np.zeros(1)
        path_ns = round(float(p.ns.sum()))
        best = float(cats.max())
        top = CATEGORIES[int(cats.argmax())] if best > 0 else ""
        rows.append({
            "step": p.step,
            "step_ns": round(p.end - p.start),
            "path_ns": path_ns,
            "bound_by": top,
            "bound_pct": best * 100.0 / path_ns if top and path_ns else 0.0,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["step", "step_ns", "path_ns", "bound_by", "bound_pct"])


__all__ = [
    "DEFINITION",
    "StepLinks",
    "StepNodes",
    "StepPath",
    "breakdown",
    "by_category",
    "contributor_rows",
    "contributors",
    "critical_path_table",
    "links_breakdown",
    "links_contributors",
    "links_rows",
    "measured_paths",
    "measured_walk",
    "path_or_enclosing",
    "path_rows",
    "path_segments",
    "rows_by_step",
    "step_links",
    "step_paths",
    "steps_of",
    "steps_table",
]
