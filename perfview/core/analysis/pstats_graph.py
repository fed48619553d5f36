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

from perfview.core.model import CallTree, PstatsProfile

DEFAULT_MIN_FRACTION = 1e-4
DEFAULT_MAX_DEPTH = 200
DEFAULT_MAX_NODES = 200_000

FRAME_COLUMNS = ("name", "file", "line")

_EXIT = -1  # marker on the DFS stack: leave the function (take it off the current path)


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


def _reachable(start: int, offsets: np.ndarray, callee: np.ndarray) -> np.ndarray:
    """Boolean mask of functions reachable from `start` along caller → callee edges."""
    seen = np.zeros(len(offsets) - 1, dtype=bool)
    seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    while len(frontier):
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


def build_pstats_tree(
    profile: PstatsProfile,
    *,
    min_fraction: float = DEFAULT_MIN_FRACTION,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> tuple[CallTree, list[str]]:
    """Reconstruct an icicle tree from pstats edges (snakeviz method); return it and notes.

    A node's time T is split among its callees in proportion to edge cumtime:
    child = edge_cumtime * T / cumtime(function), scaled down if the children would exceed T.
    Callees already on the path (recursion) and children below `min_fraction` of the total
    are not drawn; their time stays in the parent's self time. Notes say when `max_depth` or
    `max_nodes` cut the tree.
    """
    funcs = profile.functions
    cum = funcs["cumtime_ns"].to_numpy(dtype=np.float64)
    offsets, callee, ect, enc = _edge_times(profile)
    roots, root_ns, root_calls = root_functions(profile)
    total = float(root_ns.sum())
    threshold = max(total * min_fraction, 1e-300) if total > 0 else 0.0

    parents: list[int] = [-1]
    frames: list[int] = [-1]
    totals: list[float] = [total]
    selfs: list[float] = [0.0]
    calls: list[float] = [0.0]
    on_path = np.zeros(len(funcs), dtype=bool)
    cut_depth = cut_nodes = False

    # Stack items: (function, parent node, time, calls, depth) or (_EXIT, function, ...).
    stack: list[tuple[int, int, float, float, int]] = [
        (int(roots[i]), 0, float(root_ns[i]), float(root_calls[i]), 1)
        for i in np.argsort(root_ns, kind="stable")
        if root_ns[i] >= threshold
    ]
    while stack:
        f, parent, t, c, depth = stack.pop()
        if f == _EXIT:
            on_path[parent] = False
            continue
        node = len(parents)
        parents.append(parent)
        frames.append(f)
        totals.append(t)
        calls.append(c)
        children_time = 0.0
        lo, hi = offsets[f], offsets[f + 1]
        if hi > lo and cum[f] > 0:
            kids = callee[lo:hi]
            keep = ~on_path[kids] & (kids != f)
            share = t / cum[f]
            kt = ect[lo:hi][keep] * share
            kc = enc[lo:hi][keep] * share
            kids = kids[keep]
            ksum = float(kt.sum())
            if ksum > t > 0:
                kt *= t / ksum
            big = kt >= threshold
            if big.any():
                if depth >= max_depth:
                    cut_depth = True
                elif len(parents) + len(stack) >= max_nodes:
                    cut_nodes = True
                else:
                    on_path[f] = True
                    stack.append((_EXIT, f, 0.0, 0.0, 0))
                    kt, kc, kids = kt[big], kc[big], kids[big]
                    for i in np.argsort(kt, kind="stable"):  # largest popped (drawn) first
                        stack.append((int(kids[i]), node, float(kt[i]), float(kc[i]), depth + 1))
                    children_time = float(kt.sum())
        selfs.append(max(t - children_time, 0.0))

    notes: list[str] = []
    if cut_depth:
        notes.append(f"the call tree was cut at depth {max_depth}; deeper calls count as self time")
    if cut_nodes:
        notes.append(
            f"the call tree was limited to about {max_nodes:,} nodes; "
            "smaller calls count as self time"
        )
    tree = CallTree(
        parent=np.asarray(parents, dtype=np.int32),
        frame=np.asarray(frames, dtype=np.int32),
        frames=frames_from_functions(funcs),
        metrics={
            "total_ns": np.asarray(totals, dtype=np.float64),
            "self_ns": np.asarray(selfs, dtype=np.float64),
            "calls": np.asarray(calls, dtype=np.float64),
        },
        estimated=True,
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
        }
    )
    for col in _STAT_COLUMNS:
        out[col] = edges[col].to_numpy(dtype=np.int64)
    out = out.sort_values("cumtime_ns", ascending=False, kind="stable")
    return out.reset_index(drop=True)


def callers_callees(profile: PstatsProfile, function_id: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact (callers, callees) of one function from the recorded edges.

    Both frames have columns id, function, file, line, ncalls, primitive_calls, tottime_ns,
    cumtime_ns, sorted by cumtime. For callers the numbers are what the function cost when
    called from that caller; for callees what each callee cost when called from this function.
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
