"""Align two traces by structure: which ops were inserted, removed or changed, and where they part.

Tables of totals (`compare.diff`) say *how much* time moved; they cannot say that the candidate
runs one extra op in the forward pass, or that the two runs stop doing the same thing at a
given call. Here each trace becomes a forest, one tree per lane (thread; GPU kernels hang under
the runtime call that launched them, matched by correlation id, so they follow their op), and
the two forests are aligned top-down: the children of two matched nodes are aligned as
sequences (`difflib.SequenceMatcher`, a longest-matching-blocks alignment) on their signature,
the op name plus its input shapes where recorded (`ProfilerStep#N` counts as one name, so step
5 of A meets step 3 of B). Within a block that does not match, nodes with the same name but
other shapes are paired as `changed`; the rest are `removed` (only in A) or `inserted` (only in
B), except that a sibling left unmatched on both sides with the very same subtree (signatures
all the way down) is `moved`: the same work, at another place among its siblings (one row, at
its place in B, its subtree listed below it as `same`). A matched node whose subtree holds a
difference is `changed` too. Time never decides a status: two runs never take the same time.

The first divergence is the earliest `inserted`, `removed`, `moved` or own-shape `changed` node
in execution order (its start time from the start of its trace; a moved node's earlier start
of the two, since the runs part where the first of them ran it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.model import Timeline

SAME, CHANGED, INSERTED, REMOVED, MOVED = "same", "changed", "inserted", "removed", "moved"
STATUSES = (SAME, CHANGED, INSERTED, REMOVED, MOVED)
_STEP = re.compile(r"^ProfilerStep#\d+$")
# Above this many pairs of siblings, SequenceMatcher's popular-element heuristic is allowed
# (autojunk) so that a flat lane of 10^5 events does not cost 10^10 steps.
EXACT_PAIRS = 4_000_000
_DROPPED_KINDS = ("trace", "gpu_annotation")
_LAUNCHED_KINDS = ("kernel", "memcpy", "memset")


@dataclass
class _Forest:
    """One trace as trees: node rows of the events, children in start order, per-lane roots."""

    name: np.ndarray  # display name per node (object)
    name_code: np.ndarray  # int64, shared with the other trace
    sig_code: np.ndarray  # int64 (name + shape), shared with the other trace
    ts: np.ndarray  # int64 ns from the trace's first kept event
    at: np.ndarray  # int64 ns on the trace's own time axis (Timeline.events.ts)
    dur: np.ndarray  # int64 ns
    offsets: np.ndarray  # children of node i: index[offsets[i]:offsets[i+1]]
    index: np.ndarray
    lane_roots: list[tuple[str, int]]  # (lane key, virtual root node) in display order
    lane_labels: dict[str, str]

    def children(self, node: int) -> np.ndarray:
        return self.index[self.offsets[node] : self.offsets[node + 1]]

    def subtree_key(self, node: int, memo: dict[int, int]) -> int:
        """A hash of the node's signature and, in order, its children's keys: equal keys on
        both forests (their signature codes are shared) mean the same subtree. Iterative:
        a deep call stack must not hit Python's recursion limit."""
        stack = [(node, False)]
        while stack:
            n, ready = stack.pop()
            if n in memo:
                continue
            kids = self.children(n)
            if ready:
                memo[n] = hash((int(self.sig_code[n]), *(memo[int(c)] for c in kids)))
                continue
            stack.append((n, True))
            stack.extend((int(c), False) for c in kids if int(c) not in memo)
        return memo[node]


@dataclass
class StructureDiff:
    """The aligned structure: one row per aligned node, in execution order (pre-order).

    `table` columns: path, status, a_ns, b_ns, delta_ns (NaN on the absent side), depth, ts_ns
    (start, from its trace's start; B's, else A's), a_at / b_at (start on each trace's own
    time axis; on the side where the node is absent, where it would be: the end of the
    previous aligned sibling, else the parent's start; where the timelines go to show it).
    Inserted and removed subtrees are one row (their root). `first_divergence` is the row of
    the first difference, or None.
    """

    table: pd.DataFrame
    first_divergence: int | None

    @property
    def first_path(self) -> str | None:
        if self.first_divergence is None:
            return None
        return str(self.table["path"].iloc[self.first_divergence])


def _signatures(a: Timeline, b: Timeline) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Per event of each trace: display name, shared name code, shared signature code."""
    out = []
    names, sigs = [], []
    for t in (a, b):
        ev = t.events
        name = ev["name"].astype(object).astype(str).to_numpy()
        shape = ev["shape"].astype(object).fillna("").astype(str).to_numpy()
        norm = np.array([("ProfilerStep#" if _STEP.match(n) else n) for n in name], dtype=object)
        names.append(norm)
        sigs.append(norm + "\x00" + shape)
        out.append(name)
    name_codes, _ = pd.factorize(np.concatenate(names))
    sig_codes, _ = pd.factorize(np.concatenate(sigs))
    na = len(names[0])
    return (
        (out[0], name_codes[:na], sig_codes[:na]),
        (out[1], name_codes[na:], sig_codes[na:]),
    )


def _lane_keys(t: Timeline) -> tuple[dict[int, str], dict[str, str]]:
    """Lane id -> matching key (device + its ordinal among that device's lanes), and labels.

    Thread and process ids differ from run to run, so lanes match by their place in the
    display order among the lanes of one device; the label (B's thread label) names the path.
    """
    keys: dict[int, str] = {}
    labels: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lane, device, label in zip(
        t.lanes["lane"].tolist(), t.lanes["device"].tolist(), t.lanes["thread"].tolist(),
        strict=True,
    ):  # fmt: skip
        dev = str(device or "cpu")
        k = seen.get(dev, 0)
        seen[dev] = k + 1
        keys[int(lane)] = f"{dev}:{k}"
        labels[f"{dev}:{k}"] = str(label)
    return keys, labels


def _forest(t: Timeline, name: np.ndarray, name_code: np.ndarray, sig: np.ndarray) -> _Forest:
    ev = t.events
    n = len(ev)
    kind = ev["kind"].astype(object).astype(str).to_numpy()
    dropped = np.isin(kind, _DROPPED_KINDS)
    parent = ev["parent"].to_numpy(dtype=np.int64).copy()
    lane = ev["lane"].to_numpy(dtype=np.int64).copy()
    # a dropped slice's children move up to its nearest kept ancestor
    for _ in range(64):
        up = (parent >= 0) & dropped[np.maximum(parent, 0)]
        if not up.any():
            break
        parent[up] = parent[parent[up]]
    # kernels follow the runtime call that launched them
    corr = ev["corr"].to_numpy(dtype=np.int64)
    launch = (kind == "runtime") & (corr >= 0)
    by_corr = pd.Series(np.flatnonzero(launch), index=corr[launch])
    by_corr = by_corr[~by_corr.index.duplicated()]
    launched = np.isin(kind, _LAUNCHED_KINDS) & (corr >= 0)
    src = by_corr.reindex(corr[launched]).to_numpy()
    rows = np.flatnonzero(launched)[~np.isnan(src)]
    src = src[~np.isnan(src)].astype(np.int64)
    parent[rows] = src
    lane[rows] = lane[src]
    keep = ~dropped
    keys, labels = _lane_keys(t)
    lane_ids = sorted({int(x) for x in lane[keep]}, key=lambda x: list(keys).index(x))
    virtual = {lid: n + i for i, lid in enumerate(lane_ids)}
    total = n + len(lane_ids)
    par = np.full(total, -2, dtype=np.int64)  # -2: not in any tree
    roots = keep & (parent < 0)
    par[:n][keep] = parent[keep]
    if len(lane_ids):
        par[:n][roots] = np.array([virtual[int(x)] for x in lane[roots]], dtype=np.int64)
    at = np.zeros(total, dtype=np.int64)
    at[:n] = ev["ts"].to_numpy(dtype=np.int64)
    start = int(at[:n][keep].min()) if keep.any() else 0
    ts = at - start
    dur = np.zeros(total, dtype=np.int64)
    dur[:n] = ev["dur"].to_numpy(dtype=np.int64)
    members = np.flatnonzero(par >= 0)
    order = members[np.lexsort((ts[members], par[members]))]
    counts = np.bincount(par[order], minlength=total)
    offsets = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    def pad(values: np.ndarray, fill: object) -> np.ndarray:
        return np.concatenate([values, np.full(len(lane_ids), fill, dtype=values.dtype)])

    return _Forest(
        name=pad(name, ""), name_code=pad(name_code, -1), sig_code=pad(sig, -1), ts=ts, at=at,
        dur=dur, offsets=offsets, index=order,
        lane_roots=[(keys[lid], virtual[lid]) for lid in lane_ids],
        lane_labels={keys[lid]: labels[keys[lid]] for lid in lane_ids},
    )  # fmt: skip


class _Aligner:
    """Walks two forests together, appending one row per aligned node in pre-order."""

    def __init__(self, a: _Forest, b: _Forest) -> None:
        self.a, self.b = a, b
        self.rows: list[tuple[str, str, float, float, int, int, bool, float, float]] = []
        self._cursor = (0.0, 0.0)  # (A, B) time just after the last aligned sibling
        self._keys: tuple[dict[int, int], dict[int, int]] = ({}, {})  # subtree keys per side

    def _label(self, f: _Forest, node: int, seen: dict[int, int]) -> str:
        code = int(f.name_code[node])
        k = seen.get(code, 0)
        seen[code] = k + 1
        return str(f.name[node]) + (f"#{k}" if k else "")

    def _one_side(
        self, f: _Forest, node: int, path: str, depth: int, status: str, near: float
    ) -> None:
        """A removed (only in A) or inserted (only in B) node; `near`: where it would be on
        the other side (the end of the previous aligned sibling, else the parent's start)."""
        d, at = float(f.dur[node]), float(f.at[node])
        a_ns, b_ns = (d, np.nan) if status == REMOVED else (np.nan, d)
        a_at, b_at = (at, near) if status == REMOVED else (near, at)
        self.rows.append((path, status, a_ns, b_ns, depth, int(f.ts[node]), True, a_at, b_at))

    def pair(self, na: int, nb: int, path: str, depth: int, own_change: bool) -> bool:
        """Align matched nodes `na`/`nb` and their subtrees; True if anything differs."""
        at = len(self.rows)
        self.rows.append((path, SAME, float(self.a.dur[na]), float(self.b.dur[nb]), depth,
                          int(self.b.ts[nb]), own_change, float(self.a.at[na]),
                          float(self.b.at[nb])))  # fmt: skip
        differs = self.children(na, nb, path, depth + 1) or own_change
        if differs:
            row = self.rows[at]
            self.rows[at] = (row[0], CHANGED, *row[2:])
        return differs

    def children(self, na: int, nb: int, path: str, depth: int) -> bool:
        ca, cb = self.a.children(na), self.b.children(nb)
        sa, sb = self.a.sig_code[ca].tolist(), self.b.sig_code[cb].tolist()
        matcher = SequenceMatcher(None, sa, sb, autojunk=len(sa) * len(sb) > EXACT_PAIRS)
        seen_a: dict[int, int] = {}
        seen_b: dict[int, int] = {}
        self._cursor = (float(self.a.at[na]), float(self.b.at[nb]))
        differs = False
        opcodes = matcher.get_opcodes()
        moved = self._moved(ca, cb, opcodes)
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    self._label(self.a, int(ca[i]), seen_a)
                    label = self._label(self.b, int(cb[j]), seen_b)
                    differs |= self._paired(int(ca[i]), int(cb[j]), f"{path}/{label}", depth, False)
                continue
            differs = True
            self._block(ca[i1:i2], cb[j1:j2], path, depth, seen_a, seen_b, moved)
        return differs

    def _moved(self, ca: np.ndarray, cb: np.ndarray, opcodes: list[Any]) -> dict[int, int]:
        """Unmatched siblings of A and B with the same subtree: B node → its A node, paired in
        order of appearance (the k-th such A subtree with the k-th such B one)."""
        only_a = [
            int(ca[i]) for tag, i1, i2, _, _ in opcodes if tag != "equal" for i in range(i1, i2)
        ]
        only_b = [
            int(cb[j]) for tag, _, _, j1, j2 in opcodes if tag != "equal" for j in range(j1, j2)
        ]
        if not only_a or not only_b:
            return {}
        waiting: dict[int, list[int]] = {}
        for node in only_a:
            waiting.setdefault(self.a.subtree_key(node, self._keys[0]), []).append(node)
        out: dict[int, int] = {}
        for node in only_b:
            same = waiting.get(self.b.subtree_key(node, self._keys[1]))
            if same:
                out[node] = same.pop(0)
        return out

    def _paired(self, na: int, nb: int, path: str, depth: int, own_change: bool) -> bool:
        """`pair`, then move the sibling cursors past the pair (the recursion moves them)."""
        differs = self.pair(na, nb, path, depth, own_change)
        self._cursor = (
            float(self.a.at[na] + self.a.dur[na]),
            float(self.b.at[nb] + self.b.dur[nb]),
        )
        return differs

    def _block(
        self,
        ca: np.ndarray,
        cb: np.ndarray,
        path: str,
        depth: int,
        seen_a: dict[int, int],
        seen_b: dict[int, int],
        moved: dict[int, int],
    ) -> None:
        """A run of unmatched siblings: same names pair as changed, the rest are one-sided;
        a `moved` node (B node → A node) is one row at its place in B, none at A's."""
        moved_a = set(moved.values())
        # moved nodes get names no other node has, so that they never pair as `changed`
        na = [
            -2 - k if int(x) in moved_a else c
            for k, (x, c) in enumerate(zip(ca, self.a.name_code[ca].tolist(), strict=True))
        ]
        codes_b = self.b.name_code[cb].tolist()
        nb = [-2 - len(ca) - k if int(x) in moved else c
              for k, (x, c) in enumerate(zip(cb, codes_b, strict=True))]  # fmt: skip
        events: list[tuple[str, int, int]] = []
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, na, nb, autojunk=False).get_opcodes():
            if tag == "equal":
                events += [
                    ("pair", i, j) for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                ]
                continue
            events += [("removed", i, -1) for i in range(i1, i2)]
            events += [("inserted", -1, j) for j in range(j1, j2)]
        for what, i, j in events:
            if what == "pair":
                self._label(self.a, int(ca[i]), seen_a)
                label = self._label(self.b, int(cb[j]), seen_b)
                self._paired(int(ca[i]), int(cb[j]), f"{path}/{label}", depth, True)
            elif what == "removed":
                label = self._label(self.a, int(ca[i]), seen_a)
                if int(ca[i]) in moved_a:
                    continue  # its row is at its place in B
                near = self._cursor[1]
                self._one_side(self.a, int(ca[i]), f"{path}/{label}", depth, REMOVED, near)
            elif int(cb[j]) in moved:
                label = self._label(self.b, int(cb[j]), seen_b)
                self._moved_row(moved[int(cb[j])], int(cb[j]), f"{path}/{label}", depth)
            else:
                label = self._label(self.b, int(cb[j]), seen_b)
                near = self._cursor[0]
                self._one_side(self.b, int(cb[j]), f"{path}/{label}", depth, INSERTED, near)

    def _moved_row(self, na: int, nb: int, path: str, depth: int) -> None:
        """The pair of a moved subtree: aligned like any pair (its subtree comes out `same`),
        then marked `moved`, starting where the first of the two runs ran it."""
        at = len(self.rows)
        cursor = self._cursor
        self.pair(na, nb, path, depth, True)
        row = self.rows[at]
        first = min(int(self.a.ts[na]), int(self.b.ts[nb]))
        self.rows[at] = (row[0], MOVED, row[2], row[3], row[4], first, *row[6:])
        self._cursor = (cursor[0], float(self.b.at[nb] + self.b.dur[nb]))


def diff_structure(a: Timeline, b: Timeline) -> StructureDiff:
    """Align trace B against trace A by structure (see the module docstring)."""
    (name_a, nc_a, sc_a), (name_b, nc_b, sc_b) = _signatures(a, b)
    fa, fb = _forest(a, name_a, nc_a, sc_a), _forest(b, name_b, nc_b, sc_b)
    aligner = _Aligner(fa, fb)
    roots_a, roots_b = dict(fa.lane_roots), dict(fb.lane_roots)
    order = [k for k, _ in fa.lane_roots] + [k for k, _ in fb.lane_roots if k not in roots_a]
    for key in order:
        label = fb.lane_labels.get(key) or fa.lane_labels[key]
        if key in roots_a and key in roots_b:
            aligner.children(roots_a[key], roots_b[key], label, 0)
            continue
        f, status = (fa, REMOVED) if key in roots_a else (fb, INSERTED)
        root = roots_a[key] if key in roots_a else roots_b[key]
        for child in f.children(root):
            aligner._one_side(f, int(child), f"{label}/{f.name[child]}", 0, status, np.nan)
    frame = pd.DataFrame(
        aligner.rows,
        columns=["path", "status", "a_ns", "b_ns", "depth", "ts_ns", "_own", "a_at", "b_at"],
    )
    frame["delta_ns"] = frame["b_ns"].fillna(0.0) - frame["a_ns"].fillna(0.0)
    own = frame["_own"].to_numpy(dtype=bool) & (frame["status"] != SAME).to_numpy()
    first = None
    if own.any():
        candidates = np.flatnonzero(own)
        first = int(candidates[np.argmin(frame["ts_ns"].to_numpy()[candidates])])
    table = frame[["path", "status", "a_ns", "b_ns", "delta_ns", "depth", "ts_ns", "a_at", "b_at"]]
    return StructureDiff(table, first)


__all__ = ["MOVED", "STATUSES", "StructureDiff", "diff_structure"]
