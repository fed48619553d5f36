"""The walk that builds pstats' estimated icicle tree (`pstats_graph.build_pstats_tree`): a
depth-first expansion from the roots that splits each node's time among its callees.

It visits one node at a time with a handful of callees each (two on average), so it runs on
Python lists: numpy's per-call overhead on such tiny arrays made a 10k-function profile's
tree take 0.19 s, most of a `.prof`'s load (now 0.07 s). Every value is computed as numpy
computed it before (the same products, quotients and comparisons in IEEE doubles, a stable
sort, and sums in `np.sum`'s order: `np_sum`), so trees are unchanged to the bit.
"""

from __future__ import annotations

import numpy as np

from perfview.core.analysis import pstats_gaps as gaps

EXIT = -1  # marker on the DFS stack: leave the function (take it off the current path)
Item = tuple[int, int, float, float, int]  # (function, parent node, time, calls, depth)


def np_sum(values: list[float]) -> float:
    """`float(np.sum(values))` to the bit: numpy adds fewer than eight values one by one, in
    order, and longer arrays pairwise (in blocks of eight), so those go to numpy."""
    if len(values) < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    return float(np.add.reduce(np.asarray(values, dtype=np.float64)))


def fit_to_node(times: list[float], calls: list[float], budget: float, outer: int) -> None:
    """Cut callees' times (in place) to fit `budget`, keeping callee `outer` (if >= 0) whole.

    The edges out of a function add up to more than the node's time only under recursion:
    cProfile records the edges of the inner calls too, and those ran inside one of the outer
    callees. Scaling every callee down by the same factor shrank them all (a script's
    `<module>` under `exec` drawn at 65 % where its exact edge is 100 %, and every function
    below it as much), so the callee that must be the outer call keeps its exact time and
    the others share what is left in proportion. A callee cut short gets its calls cut in
    the same proportion.
    """
    kept = min(times[outer], budget) if outer >= 0 else 0.0
    rest = np_sum(times) - (times[outer] if outer >= 0 else 0.0)
    scale = (budget - kept) / rest if rest > 0 else 0.0
    for i in range(len(times)):
        give = kept if i == outer else times[i] * scale
        if times[i] > 0:
            calls[i] *= give / times[i]
        times[i] = give


class Builder:
    """The growing node arrays of an estimated tree, and the DFS that expands a root into them."""

    def __init__(self, graph: gaps.Graph, threshold: float, max_depth: int, max_nodes: int):
        self.g = graph
        self.threshold = threshold
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.parents: list[int] = [-1]
        self.frames: list[int] = [-1]
        self.totals: list[float] = [0.0]
        self.selfs: list[float] = [0.0]
        self.calls: list[float] = [0.0]
        self.gaps: list[float] = [0.0]  # per node: cumtime no recorded callee explains
        n = len(graph.cum)
        self.on_path = bytearray(n)  # 1 while the function is on the current path
        self.blocked = bytearray(n)  # extra roots: never entered again
        self.cut_depth = self.cut_nodes = False
        self._offsets: list[int] = graph.offsets.tolist()
        self._callee: list[int] = graph.callee.tolist()
        self._ect: list[float] = np.asarray(graph.ect, dtype=np.float64).tolist()
        self._enc: list[float] = np.asarray(graph.enc, dtype=np.float64).tolist()
        self._cum: list[float] = np.asarray(graph.cum, dtype=np.float64).tolist()
        self._gap: list[float] = np.asarray(graph.gap, dtype=np.float64).tolist()

    def expand(self, roots: np.ndarray, times: np.ndarray, counts: np.ndarray) -> None:
        """Add the subtrees of `roots` under node 0, biggest first (snakeviz's split).

        One loop with everything bound locally: it runs once per node (14k for a
        10k-function profile), where attribute look-ups and calls were half the time."""
        threshold, max_depth, max_nodes = self.threshold, self.max_depth, self.max_nodes
        parents, frames, totals, calls = self.parents, self.frames, self.totals, self.calls
        selfs, node_gaps = self.selfs, self.gaps
        on_path, blocked = self.on_path, self.blocked
        offsets, callee, ect, enc = self._offsets, self._callee, self._ect, self._enc
        cums, gap = self._cum, self._gap
        # Stack items: (function, parent node, time, calls, depth) or (EXIT, function, ...).
        stack: list[Item] = [
            (int(roots[i]), 0, float(times[i]), float(counts[i]), 1)
            for i in np.argsort(times, kind="stable")
            if times[i] >= threshold
        ]
        push, pop = stack.append, stack.pop
        while stack:
            f, parent, t, c, depth = pop()
            if f == EXIT:
                on_path[parent] = 0
                continue
            node = len(parents)
            parents.append(parent)
            frames.append(f)
            totals.append(t)
            calls.append(c)
            cum = cums[f]
            share = t / cum if cum > 0 else 0.0
            own, cut = max(t, 0.0), False  # no callee drawn: all of t is self time
            lo, hi = offsets[f], offsets[f + 1]
            if hi > lo and cum > 0:
                kids: list[int] = []
                kt: list[float] = []
                for j in range(lo, hi):
                    k = callee[j]
                    if not (on_path[k] or blocked[k]) and k != f:
                        kids.append(j)
                        kt.append(ect[j] * share)
                kc = [enc[j] * share for j in kids]
                if np_sum(kt) > t > 0:
                    fit_to_node(kt, kc, t, self._outer(kids, kt, t, f))
                big = [i for i, x in enumerate(kt) if x >= threshold]
                if big:
                    if depth >= max_depth:
                        self.cut_depth = cut = True
                    elif node + 1 + len(stack) >= max_nodes:
                        self.cut_nodes = cut = True
                    else:
                        on_path[f] = 1
                        push((EXIT, f, 0.0, 0.0, 0))
                        bt = [kt[i] for i in big]
                        order = (
                            range(1) if len(bt) == 1 else sorted(range(len(bt)), key=bt.__getitem__)
                        )
                        for i in order:  # largest popped (drawn) first
                            j = kids[big[i]]
                            c = kc[big[i]]
                            push((callee[j], node, bt[i], max(1.0, float(round(c))), depth + 1))
                        own = max(t - np_sum(bt), 0.0)
            selfs.append(own)
            node_gaps.append(0.0 if cut else min(gap[f] * share, own))

    def _outer(self, kids: list[int], times: list[float], t: float, f: int) -> int:
        """Which callee (index into `kids`) is the outer call of a recursive node, or -1.

        Only one callee can carry more than half the node's time; it is the outer call (not
        the recursion's inner calls) when most of its own time goes to functions it can
        still be drawn with, not back into the path (a wrapper whose time is the recursion
        itself, hypothesis' `do_draw` → `draw`, would be drawn as one block of self time).
        """
        if not times:
            return -1
        top = max(range(len(times)), key=times.__getitem__)
        if times[top] <= t / 2:
            return -1
        k = self._callee[kids[top]]
        cum = self._cum[k]
        back = 0.0
        for j in range(self._offsets[k], self._offsets[k + 1]):
            c = self._callee[j]
            if self.on_path[c] or c in (f, k):
                back += self._ect[j]
        return top if back <= cum / 2 else -1

    def placed(self, first: int = 1) -> np.ndarray:
        """Time the nodes from `first` on give each function (recursion is never nested)."""
        frames = np.asarray(self.frames[first:], dtype=np.int64)
        weights = np.asarray(self.totals[first:], dtype=np.float64)
        return np.bincount(frames, weights=weights, minlength=len(self.g.cum))


__all__ = ["EXIT", "Builder", "Item", "fit_to_node", "np_sum"]
