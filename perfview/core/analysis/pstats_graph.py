"""cProfile's caller → callee graph: an estimated icicle tree and exact caller/callee tables.

cProfile records one row per function and one row per (caller, callee) pair, never whole stacks.
An icicle needs stacks, so `build_pstats_tree` reconstructs them the way snakeviz does: start at
the functions nobody calls, give each callee a share of its parent's time taken from the edge's
cumtime, and never expand a function that is already on the current path (recursion). The result
is flagged `estimated`, because a function called from two places gets the same split of its own
callees under both, which is a guess.

The caller/callee tables, by contrast, come straight from the recorded edges and are exact.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis import pstats_gaps as gaps
from perfview.core.analysis.profile_tables import function_labels
from perfview.core.analysis.pstats_walk import Builder as _Builder
from perfview.core.model import CallTree, PstatsProfile

DEFAULT_MIN_FRACTION = 1e-4
DEFAULT_MAX_DEPTH = 200
DEFAULT_MAX_NODES = 200_000

FRAME_COLUMNS = ("name", "file", "line")


def frames_from_functions(functions: pd.DataFrame) -> pd.DataFrame:
    """The CallTree frames table (name, file, line) for pstats functions, one row per id."""
    return pd.DataFrame(
        {
            "name": functions["function"].to_numpy(dtype=object),
            "file": functions["file"].to_numpy(dtype=object),
            "line": functions["line"].to_numpy(dtype=np.int64),
        }
    )


def _edge_times(profile: PstatsProfile) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edges sorted by caller as (offsets, callee, cumtime, ncalls) arrays.

    The pure-Python `profile` module records only call counts per edge; there the edge time
    is estimated as the callee's cumtime split by the share of its calls made from this caller.
    """
    n = len(profile.functions)
    edges = profile.edges
    caller = edges["caller"].to_numpy(dtype=np.int64)
    order = np.argsort(caller, kind="stable")
    callee = edges["callee"].to_numpy(dtype=np.int64)[order]
    ect = edges["cumtime_ns"].to_numpy(dtype=np.float64)[order]
    enc = edges["ncalls"].to_numpy(dtype=np.float64)[order]
    if len(ect) and not ect.any() and enc.any():
        cum = profile.functions["cumtime_ns"].to_numpy(dtype=np.float64)
        nc = profile.functions["ncalls"].to_numpy(dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ect = np.where(nc[callee] > 0, cum[callee] * enc / nc[callee], 0.0)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(caller, minlength=n), out=offsets[1:])
    return offsets, callee, ect, enc


def _reachable(
    start: int | np.ndarray,
    offsets: np.ndarray,
    callee: np.ndarray,
    blocked: np.ndarray | None = None,
) -> np.ndarray:
    """Boolean mask of functions reachable from `start` along caller → callee edges.

    `blocked` functions are reached but not walked through (colliding keys, whose edges
    belong to another function).
    """
    seen = np.zeros(len(offsets) - 1, dtype=bool)
    seen[start] = True
    frontier = np.atleast_1d(np.asarray(start, dtype=np.int64))
    while len(frontier):
        if blocked is not None:
            frontier = frontier[~blocked[frontier]]
        lo, hi = offsets[frontier], offsets[frontier + 1]
        spans = [callee[a:b] for a, b in zip(lo, hi, strict=True) if b > a]
        if not spans:
            break
        nxt = np.unique(np.concatenate(spans))
        frontier = nxt[~seen[nxt]]
        seen[frontier] = True
    return seen


def root_functions(profile: PstatsProfile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Functions called from the top of the profile: (ids, time in ns, number of calls).

    A top-level call has no caller record, so a function is a root when nobody calls it or
    when its ncalls exceed the calls its callers recorded (`exec` running a script that
    also calls `exec` while importing). A root's time is its cumtime, less the time of calls
    from callers it cannot reach (those calls were not nested inside the top-level one).
    When nothing qualifies, the function with the largest cumtime stands in.
    """
    funcs = profile.functions
    n = len(funcs)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    cum = funcs["cumtime_ns"].to_numpy(dtype=np.float64)
    nc = funcs["ncalls"].to_numpy(dtype=np.float64)
    caller = profile.edges["caller"].to_numpy(dtype=np.int64)
    callee = profile.edges["callee"].to_numpy(dtype=np.int64)
    ect = profile.edges["cumtime_ns"].to_numpy(dtype=np.float64)
    incoming = np.bincount(callee, weights=profile.edges["ncalls"], minlength=n)
    has_caller = np.bincount(callee[caller != callee], minlength=n) > 0
    cand = np.flatnonzero(~has_caller | (nc > incoming))
    times = np.where(has_caller[cand], 0.0, cum[cand])
    offsets, kids, _, _ = _edge_times(profile)
    for i in np.flatnonzero(has_caller[cand])[:50]:  # a handful in real profiles
        f = int(cand[i])
        into = (callee == f) & (caller != f)
        outside = into & ~_reachable(f, offsets, kids)[caller]
        times[i] = max(cum[f] - float(ect[outside].sum()), 0.0)
    keep = times > 0
    if not keep.any():
        best = int(np.argmax(cum))
        return np.array([best], dtype=np.int64), cum[[best]], nc[[best]]
    calls = np.where(nc > incoming, nc - incoming, nc)[cand[keep]]
    return cand[keep].astype(np.int64), times[keep], calls


def _place_unreached(
    b: _Builder, profile: PstatsProfile, roots: np.ndarray, total: float
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Move gap time onto extra top-level nodes (see `perfview.core.analysis.pstats_gaps`).

    Returns the final totals and self times and the notes. The moved time is taken out of the
    nodes whose self time held it, in proportion to their gap, so the top level keeps its sum.
    """
    floor = max(b.threshold, gaps.MIN_SHARE * total)
    if float(np.sum(b.gaps)) < floor:
        return np.asarray(b.totals), np.asarray(b.selfs), []
    collided = gaps.colliding_keys(profile.functions, profile.edges, total)
    blocked = np.zeros(len(b.g.cum), dtype=bool)
    blocked[collided] = True
    # Only what the edges cannot lead to from the roots (not what pruning left out) moves.
    unreached = ~_reachable(roots, b.g.offsets, b.g.callee, blocked)
    placed = b.placed()
    placed[~unreached] = b.g.cum[~unreached]  # never picked
    moved: list[tuple[int, int]] = []  # (function, its top-level node)
    spent = 0.0
    while len(moved) < gaps.MAX_EXTRA_ROOTS:  # an extra root's subtree may have gaps too
        budget = float(np.sum(b.gaps)) - spent
        f = gaps.pick_unplaced(placed, b.g.cum, budget, floor)
        if f < 0:
            break
        t = min(float(b.g.cum[f] - placed[f]), budget)
        first = len(b.parents)
        b.expand(np.array([f]), np.array([t]), np.array([1.0]))
        if len(b.parents) == first:  # below the drawing threshold: nothing was added
            break
        b.blocked[f] = True  # later extra roots do not nest it again
        placed += b.placed(first)
        placed[f] = max(placed[f], b.g.cum[f])  # never picked twice
        moved.append((f, first))
        spent += t
    totals = np.asarray(b.totals, dtype=np.float64)
    selfs = np.asarray(b.selfs, dtype=np.float64)
    if not moved:
        return totals, selfs, []
    node_gap = np.asarray(b.gaps, dtype=np.float64)
    remove = node_gap * (spent / float(node_gap.sum()))
    gaps.subtract_gaps(np.asarray(b.parents, dtype=np.int64), totals, selfs, remove)
    edges = profile.edges
    callers = gaps.callers_of(
        edges["caller"].to_numpy(dtype=np.int64), edges["callee"].to_numpy(dtype=np.int64)
    )
    bad_keys = set(collided.tolist())
    why = [(f, float(totals[node]), gaps.reason(f, callers, bad_keys)) for f, node in moved]
    return totals, selfs, [gaps.unplaced_note(profile.functions, why, total)]


def build_pstats_tree(
    profile: PstatsProfile,
    *,
    min_fraction: float = DEFAULT_MIN_FRACTION,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> tuple[CallTree, list[str]]:
    """Reconstruct an icicle tree from pstats edges (snakeviz method); return it and notes.

    A node's time T is split among its callees in proportion to edge cumtime:
    child = edge_cumtime * T / cumtime(function). Children that would exceed T (recursion)
    are fitted to it with the outer call kept whole (`pstats_walk.fit_to_node`), so a
    function on one path keeps its exact pstats time; estimated calls are whole numbers.
    Callees already on the path (recursion) and children below `min_fraction` of the total
    are not drawn; their time stays in the parent's self time. Time the edges cannot lead to
    from the roots (a cycle without an entry edge, colliding keys) goes to extra top-level
    nodes, so the top level adds up to the total. Notes say so, name colliding keys, and say
    when `max_depth` or `max_nodes` cut the tree.
    """
    funcs = profile.functions
    offsets, callee, ect, enc = _edge_times(profile)
    graph = gaps.Graph(
        cum=funcs["cumtime_ns"].to_numpy(dtype=np.float64),
        tot=funcs["tottime_ns"].to_numpy(dtype=np.float64),
        offsets=offsets,
        callee=callee,
        ect=ect,
        enc=enc,
    )
    roots, root_ns, root_calls = root_functions(profile)
    total = float(root_ns.sum())
    threshold = max(total * min_fraction, 1e-300) if total > 0 else 0.0
    b = _Builder(graph, threshold, max_depth, max_nodes)
    b.expand(roots, root_ns, root_calls)
    notes = gaps.collision_notes(funcs, profile.edges, total)
    totals, selfs, moved = _place_unreached(b, profile, roots, total)
    notes.extend(moved)
    totals[0] = total
    if b.cut_depth:
        notes.append(f"the call tree was cut at depth {max_depth}; deeper calls count as self time")
    if b.cut_nodes:
        notes.append(
            f"the call tree was limited to about {max_nodes:,} nodes; "
            "smaller calls count as self time"
        )
    tree = CallTree(
        parent=np.asarray(b.parents, dtype=np.int32),
        frame=np.asarray(b.frames, dtype=np.int32),
        frames=frames_from_functions(funcs),
        metrics={
            "total_ns": totals,
            "self_ns": selfs,
            "calls": np.asarray(b.calls, dtype=np.float64),
        },
        estimated=True,
        notes=list(notes),
    )
    return tree, notes


def tree_from_pstats(
    profile: PstatsProfile,
    *,
    min_fraction: float = DEFAULT_MIN_FRACTION,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> CallTree:
    """`build_pstats_tree` without the notes."""
    tree, _ = build_pstats_tree(
        profile, min_fraction=min_fraction, max_depth=max_depth, max_nodes=max_nodes
    )
    return tree


_SIDE_COLUMNS = ("id", "function", "file", "line")
_STAT_COLUMNS = ("ncalls", "primitive_calls", "tottime_ns", "cumtime_ns")


def _side(profile: PstatsProfile, edges: pd.DataFrame, other: str) -> pd.DataFrame:
    ids = edges[other].to_numpy(dtype=np.int64)
    funcs = profile.functions
    out = pd.DataFrame(
        {
            "id": ids,
            "function": funcs["function"].to_numpy(dtype=object)[ids],
            "file": funcs["file"].to_numpy(dtype=object)[ids],
            "line": funcs["line"].to_numpy(dtype=np.int64)[ids],
            "label": function_labels(funcs).to_numpy(dtype=object)[ids],
        }
    )
    for col in _STAT_COLUMNS:
        out[col] = edges[col].to_numpy(dtype=np.int64)
    out = out.sort_values("cumtime_ns", ascending=False, kind="stable")
    return out.reset_index(drop=True)


def callers_callees(profile: PstatsProfile, function_id: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact (callers, callees) of one function from the recorded edges.

    Both frames have columns id, function, file, line, label (`file:line(function)`, as
    `pstats.print_callees` prints it: a script's callees are often many `<module>`s), ncalls,
    primitive_calls, tottime_ns, cumtime_ns, sorted by cumtime. For callers the numbers are
    what the function cost when called from that caller; for callees what each callee cost
    when called from this function.
    """
    edges = profile.edges
    callers = _side(profile, edges[edges["callee"] == function_id], "caller")
    callees = _side(profile, edges[edges["caller"] == function_id], "callee")
    return callers, callees


__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_NODES",
    "DEFAULT_MIN_FRACTION",
    "FRAME_COLUMNS",
    "build_pstats_tree",
    "callers_callees",
    "frames_from_functions",
    "root_functions",
    "tree_from_pstats",
]
