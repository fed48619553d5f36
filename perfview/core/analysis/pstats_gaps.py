"""Where the estimated pstats tree loses time, and how that time is put back on top.

cProfile's caller → callee pairs can fail to connect a function to the profile's roots:

* a recursion cycle whose entry edge is missing (pytest-profiling dumps: `wrapped_test` calls
  itself through hypothesis' engine, but no edge leads into that cycle), and
* colliding keys: pstats keys functions by (file, line, name), so `python -m cProfile -m pkg`'s
  outer `exec` string and any `eval` string are both `<string>:1(<module>)`; the file keeps one
  entry's numbers (an eval's few µs) while the edge to `runpy.run_module` (the whole run) hangs
  off it.

Either way some function's cumtime is larger than its tottime plus its recorded callees (a
"gap"): the tree would show that missing time as self time of the wrong function, while the
unreached functions are missing from the icicle. `place_unreached` moves the gap time to extra
top-level nodes (the heaviest unplaced functions, expanded like any root), so the icicle's top
level still adds up to the profile's total, and says in a note what it moved and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfview.core.model.units import format_ns

MAX_EXTRA_ROOTS = 10
MIN_SHARE = 1e-3  # extra roots smaller than this share of the total are not worth a node
COLLISION_FACTOR = 2.0  # an entry whose callee took more than twice its own cumtime


@dataclass
class Graph:
    """The pstats graph in the arrays the tree builder walks (edges sorted by caller)."""

    cum: np.ndarray  # cumtime per function
    tot: np.ndarray  # tottime per function
    offsets: np.ndarray  # edges of caller f: [offsets[f], offsets[f + 1])
    callee: np.ndarray
    ect: np.ndarray  # edge cumtime
    enc: np.ndarray  # edge call count
    gap: np.ndarray = field(init=False)  # cumtime no recorded callee explains, per function

    def __post_init__(self) -> None:
        n = len(self.cum)
        caller = np.repeat(np.arange(n), np.diff(self.offsets))
        other = caller != self.callee  # a self-edge is the recursion inside, not a callee
        out = np.bincount(caller[other], weights=self.ect[other], minlength=n)
        gap = self.cum - self.tot - out
        noise = np.maximum(0.01 * self.cum, 1.0)  # rounding of the file's float seconds
        self.gap = np.where(gap > noise, gap, 0.0)


def colliding_keys(functions: pd.DataFrame, edges: pd.DataFrame, total: float) -> np.ndarray:
    """Functions whose outgoing edge took far more than their own cumtime (colliding keys).

    A call cannot take longer than its caller, so such an entry holds the numbers of one
    code object and the edges of another that pstats merged under the same key.
    """
    cum = functions["cumtime_ns"].to_numpy(dtype=np.float64)
    caller = edges["caller"].to_numpy(dtype=np.int64)
    callee = edges["callee"].to_numpy(dtype=np.int64)
    ect = edges["cumtime_ns"].to_numpy(dtype=np.float64)
    other = caller != callee
    worst = np.zeros(len(cum))
    np.maximum.at(worst, caller[other], ect[other])
    bad = (worst > COLLISION_FACTOR * cum) & (worst - cum > max(MIN_SHARE * total, 1.0))
    return np.flatnonzero(bad)


def function_label(functions: pd.DataFrame, f: int) -> str:
    """`file:line(name)` as pstats prints it (`name` alone for built-ins)."""
    row = functions.iloc[f]
    if row["file"] == "~" and int(row["line"]) == 0:
        return str(row["function"])
    return f"{row['file']}:{row['line']}({row['function']})"


def collision_notes(functions: pd.DataFrame, edges: pd.DataFrame, total: float) -> list[str]:
    """Load warnings for colliding keys (see `colliding_keys`)."""
    notes = []
    ect = edges["cumtime_ns"].to_numpy(dtype=np.float64)
    caller = edges["caller"].to_numpy(dtype=np.int64)
    for f in colliding_keys(functions, edges, total)[:5]:
        cum = float(functions["cumtime_ns"].to_numpy()[f])
        out = float(ect[caller == f].max())
        notes.append(
            f"colliding pstats keys: {function_label(functions, int(f))} took "
            f"{format_ns(cum)} but its callees took {format_ns(out)}; several functions "
            "share this file:line(name) key (e.g. the `python -m` exec string and an eval "
            "string), so the file mixes their numbers"
        )
    return notes


def subtract_gaps(
    parents: np.ndarray, totals: np.ndarray, selfs: np.ndarray, remove: np.ndarray
) -> None:
    """Take `remove[i]` out of node i's self time and out of every ancestor's total (in place).

    Parents precede children, so one reverse pass per depth level sums the removals upwards.
    """
    sub = remove.astype(np.float64).copy()
    depth = np.zeros(len(parents), dtype=np.int64)
    for i in range(1, len(parents)):  # parents precede children
        depth[i] = depth[parents[i]] + 1
    for d in range(int(depth.max(initial=0)), 0, -1):
        idx = np.flatnonzero(depth == d)
        np.add.at(sub, parents[idx], sub[idx])
    totals -= sub
    selfs -= remove
    np.maximum(selfs, 0.0, out=selfs)


def pick_unplaced(placed: np.ndarray, cum: np.ndarray, budget: float, floor: float) -> int:
    """The function with the most cumtime the tree has not placed yet, or -1 if none is worth it."""
    unplaced = cum - placed
    best = int(np.argmax(unplaced)) if len(unplaced) else -1
    if best < 0 or min(float(unplaced[best]), budget) < floor:
        return -1
    return best


def reason(f: int, graph_callers: dict[int, list[int]], collided: set[int]) -> str:
    """Why function f was not reached from the roots, in words."""
    callers = [c for c in graph_callers.get(f, []) if c != f]
    if any(c in collided for c in callers):
        return "its caller's key collides with another function's"
    if callers:
        return "a call cycle with no recorded entry edge"
    return "no recorded caller"


def unplaced_note(
    functions: pd.DataFrame, moved: list[tuple[int, float, str]], total: float
) -> str:
    """One sentence: how much time was put on extra top-level nodes, which functions, why."""
    amount = sum(t for _, t, _ in moved)
    share = 100.0 * amount / total if total else 0.0
    parts = [f"{function_label(functions, f)} ({format_ns(t)}: {why})" for f, t, why in moved[:5]]
    more = f" and {len(moved) - 5} more" if len(moved) > 5 else ""
    return (
        f"{format_ns(amount)} ({share:.1f} % of the total) could not be placed under the "
        f"profile's roots and is shown as extra top-level nodes: {', '.join(parts)}{more}"
    )


def callers_of(caller: np.ndarray, callee: np.ndarray) -> dict[int, list[int]]:
    """callee → its callers (only built for the handful of functions a note names)."""
    out: dict[int, list[int]] = {}
    for a, b in zip(caller.tolist(), callee.tolist(), strict=True):
        out.setdefault(b, []).append(a)
    return out


__all__ = [
    "MAX_EXTRA_ROOTS",
    "MIN_SHARE",
    "Graph",
    "callers_of",
    "colliding_keys",
    "collision_notes",
    "function_label",
    "pick_unplaced",
    "reason",
    "subtract_gaps",
    "unplaced_note",
]
