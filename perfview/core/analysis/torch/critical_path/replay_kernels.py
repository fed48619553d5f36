"""The compiled loops of the critical path (numba): topological order, longest-path replay,
walk back. Imported through `replay` on first use only.

The dependency graph is a DAG whose edges carry a weight (ns). Replaying it means giving every
node the latest arrival over its incoming edges, in topological order: a sequential loop, so it
is compiled (numba) rather than vectorised. The order is computed once per graph; a what-if
replays the same order with other weights, which is what makes a recompute take milliseconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from perfview.core import numba_registries

numba_registries.load()  # before any code here compiles or loads


@njit(cache=True, nogil=True)
def topological_order(n: int, src: np.ndarray, dst: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Kahn's order of the n nodes, ready nodes taken by measured time (a heap would be exact;
    a FIFO seeded in time order is enough: every edge goes forward or sideways in time).
    Nodes left on a cycle (zero-length edges both ways; never seen in a real trace) are put
    last in time order, so the replay still visits every node once."""
    indeg = np.zeros(n, dtype=np.int64)
    for e in range(len(dst)):
        indeg[dst[e]] += 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(src)):
        out_ptr[src[e] + 1] += 1
    for i in range(n):
        out_ptr[i + 1] += out_ptr[i]
    fill = out_ptr[:-1].copy()
    out_edge = np.empty(len(src), dtype=np.int64)
    for e in range(len(src)):
        out_edge[fill[src[e]]] = e
        fill[src[e]] += 1
    by_time = np.argsort(time, kind="mergesort")
    order = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for k in range(n):
        v = by_time[k]
        if indeg[v] == 0:
            order[tail] = v
            tail += 1
    while head < tail:
        v = order[head]
        head += 1
        for j in range(out_ptr[v], out_ptr[v + 1]):
            u = dst[out_edge[j]]
            indeg[u] -= 1
            if indeg[u] == 0:
                order[tail] = u
                tail += 1
    if tail < n:
        for k in range(n):
            v = by_time[k]
            if indeg[v] > 0:
                order[tail] = v
                tail += 1
    return order


@njit(cache=True, nogil=True)
def incoming(n: int, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR of incoming edges: edges into node v are in_edge[in_ptr[v]:in_ptr[v + 1]]."""
    in_ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(len(dst)):
        in_ptr[dst[e] + 1] += 1
    for i in range(n):
        in_ptr[i + 1] += in_ptr[i]
    fill = in_ptr[:-1].copy()
    in_edge = np.empty(len(dst), dtype=np.int64)
    for e in range(len(dst)):
        in_edge[fill[dst[e]]] = e
        fill[dst[e]] += 1
    return in_ptr, in_edge


@njit(cache=True, nogil=True)
def replay(
    order: np.ndarray,
    in_ptr: np.ndarray,
    in_edge: np.ndarray,
    src: np.ndarray,
    weight: np.ndarray,
    root_time: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(time, via): each node's latest arrival over its incoming edges (weight NaN: the edge
    is removed) and the edge that set it (-1 for the root and for nodes nothing reaches)."""
    return replay_fixed(order, in_ptr, in_edge, src, weight, root_time,
                        np.full(len(order), np.nan))  # fmt: skip


@njit(cache=True, nogil=True)
def replay_fixed(
    order: np.ndarray,
    in_ptr: np.ndarray,
    in_edge: np.ndarray,
    src: np.ndarray,
    weight: np.ndarray,
    root_time: float,
    fixed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`replay`, except that a node whose `fixed` time is not NaN keeps it (via -1): a batch's
    graph takes the times of the nodes before its range from the batches replayed before."""
    n = len(order)
    t = np.full(n, root_time)
    via = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        v = order[k]
        if fixed[v] == fixed[v]:
            t[v] = fixed[v]
            continue
        best = -np.inf
        arg = -1
        for j in range(in_ptr[v], in_ptr[v + 1]):
            e = in_edge[j]
            w = weight[e]
            if w != w:  # NaN: removed by a what-if
                continue
            x = t[src[e]] + w
            if x > best:
                best = x
                arg = e
        if arg >= 0:
            t[v] = best
            via[v] = arg
    return t, via


@njit(cache=True, nogil=True, inline="always")
def _pushed(out: np.ndarray, k: int, x: int | np.integer[Any]) -> np.ndarray:
    """`out` with `x` at position `k`, doubled first when full (a path's length is unknown
    until walked)."""
    if k == len(out):
        grown = np.empty(2 * len(out), dtype=np.int64)
        grown[:k] = out
        out = grown
    out[k] = x
    return out


@njit(cache=True, nogil=True)
def walk_sparse(
    nodes: np.ndarray, src: np.ndarray, t: np.ndarray, end: int, start: float
) -> np.ndarray:
    """`walk_back` over nodes whose binding edge is kept by its source only: `src[i]` is the source
    of node `nodes[i]` (sorted); a node not there stops the walk. Returns positions in
    `nodes`, latest first."""
    out = np.empty(64, dtype=np.int64)
    k = 0
    v = end
    while True:
        i = np.searchsorted(nodes, v)
        if i >= len(nodes) or nodes[i] != v or t[v] <= start:
            break
        out = _pushed(out, k, i)
        k += 1
        v = src[i]
    return out[:k]


@njit(cache=True, nogil=True)
def walk_back(
    via: np.ndarray, src: np.ndarray, t: np.ndarray, end: int, start: float
) -> np.ndarray:
    """The edges of the path that ends at node `end`, latest first, back to the first edge
    that begins at or before `start` (or to a node nothing reaches)."""
    out = np.empty(64, dtype=np.int64)
    k = 0
    v = end
    while True:
        e = via[v]
        if e < 0 or t[v] <= start:
            break
        out = _pushed(out, k, e)
        k += 1
        v = src[e]
    return out[:k]


__all__ = [
    "incoming", "replay", "replay_fixed", "topological_order", "walk_back", "walk_sparse",
]  # fmt: skip
