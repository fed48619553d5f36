"""What-if on a job: replay each step across ranks, with collectives as the edges between them.

A rank's step is a chain of *segments* cut by the step's collectives: the time from the step's
start (or the end of its previous collective) to its arrival at the next collective, then the
tail from its last collective to the step's end. A collective completes only when its last
rank arrives, so on every rank it ends at `max(arrivals) + transfer`, where the rank's
transfer is its measured end less that last arrival. Replaying the step (collectives in the
order they completed) gives back every measured time, so an empty what-if predicts the
measured step; an edit changes segments and transfers and replays:

- `rank:N=F`       rank N's own time (every segment and the tail) × F; collectives unchanged
- `rank:N=median`  rank N's segments as the median rank's (per position in the step)
- any per-trace edit (`kernel:…`, `cpu:…`, `comm=F`, `sync:remove`, …) is replayed on every
  rank's own graph (`what_if.predict`, which needs each rank's events again: `Job.reopen`)
  and read back as that rank's segments; a collective's transfer scales as its kernel did.

A step's measured time is its longest rank's; its predicted time the longest rank's after the
replay. `rank` is the rank with the most own time on the predicted path (walking back from the
rank that ends last through the last arrival at each collective).

Not every arrival waits on the collective before it: a host that launches the next collective
late (a CPU running ahead of nothing) reaches it at the same time however early the previous
one ended. Each rank's replay says which (`_waits`: walking back the binding edges from the
arrival to the last collective end before it), its reduction keeps it for the measured trace
(`RankReduction.waits`), and such an arrival keeps its time from the step's start instead of
following the collective. What the model ignores, besides what the per-trace replay ignores:
collectives that are not in every rank's step (sampled or cut traces) are not edges between
ranks, and a rank reduced without its waits (pooled spans) takes every arrival as waiting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, comm_kernel_mask
from perfview.core.analysis.torch.critical_path import replay
from perfview.core.analysis.torch.critical_path.graph import Graph
from perfview.core.analysis.torch.critical_path.path import measured_paths, step_paths
from perfview.core.analysis.torch.critical_path.what_if import (
    HELP,
    EditError,
    edited_weights,
    parse_edits,
)
from perfview.core.model import Timeline
from perfview.core.model.job import Job

COLUMNS = ["step", "measured_ns", "predicted_ns", "speedup", "rank"]
_RANK_RE = re.compile(r"^rank:(?P<rank>\d+)=(?P<value>median|[0-9.eE+-]+)$")
JOB_HELP = f"{HELP}; on a job also rank:N=F or rank:N=median"


@dataclass(frozen=True)
class RankEdit:
    """`rank:N=F` (factor) or `rank:N=median` (factor None)."""

    rank: int
    factor: float | None


def split_edits(texts: Sequence[str]) -> tuple[list[RankEdit], list[str]]:
    """The rank edits, parsed, and the per-trace edits left as text (checked here too, so a
    bad one is one sentence before any rank is read again)."""
    ranks, rest = [], []
    for text in texts:
        m = _RANK_RE.match(text.strip())
        if m is None:
            if text.strip().startswith("rank"):
                raise EditError(f"cannot read the edit {text!r}: {JOB_HELP}")
            rest.append(text)
            continue
        if m["value"] == "median":
            ranks.append(RankEdit(int(m["rank"]), None))
            continue
        try:
            factor = float(m["value"])
        except ValueError:
            raise EditError(f"the factor in {text!r} is not a number") from None
        if not np.isfinite(factor) or factor < 0:
            raise EditError(f"the factor in {text!r} must be a number >= 0")
        ranks.append(RankEdit(int(m["rank"]), factor))
    parse_edits(rest)
    return ranks, rest


WAIT_COLUMNS = ["at_ns", "after_ns"]


def _waits(tl: Timeline, graph: Graph, t: np.ndarray, via: np.ndarray, rows: np.ndarray,
           stops: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """What each collective kernel's start (`rows`) and each step's end (`stops`, nodes)
    waited on: at_ns (the kernel's measured start, or the step's measured end, absolute) →
    after_ns (the measured start of the collective kernel whose end it waited on, walking
    back its binding edges to the last collective end before it; -1: it got there on its
    own, a CPU running ahead)."""
    origin = int(tl.origin_ns)
    begin = graph.node_of(rows, end=False)
    end = graph.node_of(rows, end=True)
    ends_t = t[end]
    order = np.argsort(ends_t, kind="stable")
    start_of = dict(zip(end.tolist(), (graph.time[begin] + origin).tolist(), strict=True))
    targets = np.concatenate([begin, stops]).astype(I64)
    after = np.full(len(targets), -1, I64)
    for i, node in enumerate(targets.tolist()):
        j = int(np.searchsorted(ends_t[order], t[node], side="right")) - 1
        if node < 0 or j < 0:
            continue
        walked = replay.walk_back(via, graph.src, t, node, float(ends_t[order[j]]) - 0.5)
        hit = [start_of[n] for n in graph.src[walked].tolist() if n in start_of]
        after[i] = hit[0] if hit else -1
    return pd.DataFrame({"at_ns": graph.time[targets] + origin, "after_ns": after})


def _comm_rows(tl: Timeline) -> np.ndarray:
    ev = tl.events
    rows = np.flatnonzero(comm_kernel_mask(ev))
    return rows[np.argsort(ev["ts"].to_numpy(dtype=I64)[rows], kind="stable")]


def collective_waits(tl: Timeline) -> pd.DataFrame:
    """The measured `_waits` of a rank (kept in its reduction: `RankReduction.waits`), so that
    rank edits know which arrivals move with the collective before them without the events."""
    graph, nodes, _paths = measured_paths(tl)
    t, via = graph.replay()
    stops = nodes.end[nodes.end >= 0]
    return _waits(tl, graph, t, via, _comm_rows(tl), stops)


def rank_prediction(
    tl: Timeline, edits: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One rank's replay under per-trace edits, as the job model reads it (times absolute,
    like the reduction's): steps (step, start_ns, end_ns predicted), collective kernels
    (start_ns, dur_ns measured → pred_start_ns, pred_end_ns) and what each waited on in the
    replay (`_waits`)."""
    graph, nodes, _measured = measured_paths(tl)
    t, via = graph.replay(edited_weights(tl, graph, parse_edits(edits)))
    predicted = step_paths(graph, nodes, t, via)
    origin = int(tl.origin_ns)
    ev = tl.events
    rows = _comm_rows(tl)
    begin = graph.node_of(rows, end=False)
    end = graph.node_of(rows, end=True)
    comms = pd.DataFrame({
        "start_ns": ev["ts"].to_numpy(dtype=I64)[rows] + origin,
        "dur_ns": ev["dur"].to_numpy(dtype=I64)[rows],
        "pred_start_ns": np.rint(t[begin]).astype(I64) + origin,
        "pred_end_ns": np.rint(t[end]).astype(I64) + origin,
    })  # fmt: skip
    steps = pd.DataFrame({
        "step": [s.step for s in predicted],
        "start_ns": np.rint([s.start for s in predicted]).astype(I64) + origin,
        "end_ns": np.rint([s.end for s in predicted]).astype(I64) + origin,
    })  # fmt: skip
    waits = _waits(tl, graph, t, via, rows, nodes.end[nodes.end >= 0])
    return steps, comms.drop_duplicates(["start_ns", "dur_ns"]), waits


def _bound(waits: pd.DataFrame, starts: np.ndarray, step_end: int) -> np.ndarray | None:
    """Per arrival of a chain (its collectives' measured starts, then the step's measured
    end; absolute, before the job's offset): whether it waited on the chain's collective
    before it. None when the rank's waits are not known (every arrival then waits)."""
    if not len(waits):
        return None
    after = pd.Series(waits["after_ns"].to_numpy(dtype=I64), index=waits["at_ns"].to_numpy(I64))
    after = after[~after.index.duplicated()]
    at = np.concatenate([starts, [step_end]]).astype(I64)
    got = after.reindex(at).to_numpy()
    if pd.isna(got).any():
        return None
    prev = np.concatenate([[-2], starts]).astype(I64)
    out: np.ndarray = got.astype(I64) == prev
    out[0] = True  # the first arrival counts from the step's start
    return out


@dataclass
class _Chain:
    """One rank's step as the replay reads it: segments (the last is the tail), transfers and
    the collective instances in order."""

    rank: int
    start: int  # the step's measured start on the job's time axis
    seg: np.ndarray  # float64, len K + 1
    xfer: np.ndarray  # float64, len K (the collectives' absolute ends while being built)
    inst: list[int]
    measured_ns: int
    # per arrival (K collectives, then the step's end): whether it waits on the previous
    # collective's end (else the rank got there on its own, `off` after the step's start)
    bound: np.ndarray | None = None
    off: np.ndarray | None = None


def _chains(job: Job, matched: pd.DataFrame, step: int) -> list[_Chain]:
    """Every rank's measured chain of one step."""
    out: list[_Chain] = []
    last: dict[int, float] = {}  # the last arrival at each instance
    inside = []
    for red in job.ranks:
        st = red.steps[red.steps["step"] == step]
        if not len(st):
            continue
        start = int(st["start_ns"].iloc[0]) + job.offsets.get(red.rank, 0)
        dur = int(st["dur_ns"].iloc[0])
        m = matched[(matched["rank"] == red.rank) & (matched["start_ns"] >= start)]
        m = m[m["start_ns"] < start + dur]
        inside.append((red.rank, start, dur, m))
    # a collective is an edge between ranks only when each of its kernels lies in this step
    counts = pd.concat([m["instance"] for *_, m in inside]).value_counts() if inside else None
    full = matched.groupby("instance").size() if len(matched) else None
    for rank, start, dur, m in inside:
        if counts is not None and full is not None and len(m):
            keep = counts.reindex(m["instance"]).to_numpy() == full.reindex(m["instance"])
            m = m[np.asarray(keep, bool) & (full.reindex(m["instance"]).to_numpy() > 1)]
        m = m.sort_values("start_ns", kind="stable")
        starts = m["start_ns"].to_numpy(dtype=I64).astype(np.float64)
        ends = m["end_ns"].to_numpy(dtype=I64).astype(np.float64)
        seg = np.concatenate([starts, [start + dur]]) - np.concatenate([[start], ends])
        inst = m["instance"].astype(I64).tolist()
        chain = _Chain(rank, start, seg, ends, inst, dur)
        shift = job.offsets.get(rank, 0)
        waits = job.by_rank()[rank].waits
        chain.bound = _bound(waits, starts.astype(I64) - shift, start + dur - shift)
        chain.off = np.concatenate([starts, [start + dur]]) - start
        out.append(chain)
        for i, a in zip(inst, starts.tolist(), strict=True):
            last[i] = max(last.get(i, a), a)
    # a rank's transfer: its collective's end less the last rank's arrival
    for c in out:
        c.xfer = c.xfer - np.asarray([last[i] for i in c.inst], np.float64)
    return out


def _apply_rank_edits(chains: list[_Chain], edits: list[RankEdit]) -> None:
    by_rank = {c.rank: c for c in chains}
    for edit in edits:
        c = by_rank.get(edit.rank)
        if c is None:
            ranks = ", ".join(str(r) for r in sorted(by_rank)) or "none"
            raise EditError(f"rank:{edit.rank} is not a rank of this step (ranks: {ranks})")
        if edit.factor is not None:
            c.seg = np.maximum(c.seg, 0) * edit.factor + np.minimum(c.seg, 0)
            c.off = None if c.off is None else c.off * edit.factor
            continue
        peers = [o for o in chains if len(o.seg) == len(c.seg)]
        c.seg = np.median(np.vstack([o.seg for o in peers]), axis=0)
        offs = [o.off for o in peers if o.off is not None]
        c.off = None if c.off is None else np.median(np.vstack(offs), axis=0)


def _replay(chains: list[_Chain]) -> tuple[dict[int, float], dict[int, int]]:
    """Each rank's predicted step end, and the last rank to arrive at each instance."""
    pos = {(c.rank, i): k for c in chains for k, i in enumerate(c.inst)}
    members: dict[int, list[_Chain]] = {}
    for c in chains:
        for i in c.inst:
            members.setdefault(i, []).append(c)
    release: dict[tuple[int, int], float] = {}
    binder: dict[int, int] = {}

    def arrival(c: _Chain, k: int) -> float:
        if c.bound is not None and c.off is not None and not c.bound[k]:
            return c.start + float(c.off[k])
        prev = c.start if k == 0 else release[(c.rank, k - 1)]
        return prev + float(c.seg[k])

    # an instance is ready once every member has released its previous one
    todo = sorted(members)  # instance ids follow time within a group
    while todo:
        for i in todo:
            if all(pos[(c.rank, i)] == 0 or (c.rank, pos[(c.rank, i)] - 1) in release
                   for c in members[i]):  # fmt: skip
                break
        else:  # ranks disagree on the order: take the first left (never on a matched job)
            i = todo[0]
            for c in members[i]:
                for k in range(pos[(c.rank, i)]):
                    release.setdefault((c.rank, k), c.start + float(np.sum(c.seg[: k + 1])))
        todo.remove(i)
        arr = {c.rank: arrival(c, pos[(c.rank, i)]) for c in members[i]}
        last = max(arr.values())
        binder[i] = min(r for r, a in arr.items() if a == last)
        for c in members[i]:
            k = pos[(c.rank, i)]
            release[(c.rank, k)] = last + float(c.xfer[k])
    ends = {c.rank: arrival(c, len(c.inst)) for c in chains}
    return ends, binder


def _bounding_rank(chains: list[_Chain], ends: dict[int, float], binder: dict[int, int]) -> int:
    """The rank with the most own time on the path back from the rank that ends last."""
    by_rank = {c.rank: c for c in chains}
    own: dict[int, float] = {}
    c = by_rank[max(ends, key=lambda r: (ends[r] - by_rank[r].start, -r))]
    k = len(c.inst)
    while True:
        own[c.rank] = own.get(c.rank, 0.0) + max(float(c.seg[k]), 0.0)
        if k == 0:
            break
        b = by_rank[binder[c.inst[k - 1]]]
        k = b.inst.index(c.inst[k - 1])
        c = b
    return max(own, key=lambda r: (own[r], -r))


Preds = dict[int, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]]


def _edited_chains(
    chains: list[_Chain], job: Job, matched: pd.DataFrame, step: int, preds: Preds
) -> None:
    """Each rank's segments and transfers from its own replay under the per-trace edits."""
    for c in chains:
        steps, comms, waits = preds[c.rank]
        st = steps[steps["step"] == step]
        if not len(st) or not len(c.inst):
            if len(st):
                c.seg = np.asarray([float(st["end_ns"].iloc[0] - st["start_ns"].iloc[0])])
                c.off, c.bound = c.seg.copy(), None
            continue
        off = job.offsets.get(c.rank, 0)
        m = matched
        mine = m[(m["rank"] == c.rank) & m["instance"].isin(c.inst)].sort_values("start_ns")
        key = pd.DataFrame({"start_ns": mine["start_ns"].to_numpy(dtype=I64) - off,
                            "dur_ns": mine["dur_ns"].to_numpy(dtype=I64)})  # fmt: skip
        got = key.merge(comms, on=["start_ns", "dur_ns"], how="left")
        if got["pred_start_ns"].isna().any():
            continue  # the reduction and the trace disagree: keep the measured chain
        ps = got["pred_start_ns"].to_numpy(np.float64)
        pe = got["pred_end_ns"].to_numpy(np.float64)
        s0, s1 = float(st["start_ns"].iloc[0]), float(st["end_ns"].iloc[0])
        c.seg = np.concatenate([ps, [s1]]) - np.concatenate([[s0], pe])
        c.off = np.concatenate([ps, [s1]]) - s0
        measured_end = int(job.by_rank()[c.rank].steps.set_index("step")["start_ns"][step])
        measured_end += int(job.by_rank()[c.rank].steps.set_index("step")["dur_ns"][step])
        c.bound = _bound(waits, key["start_ns"].to_numpy(dtype=I64), measured_end)
        dur = key["dur_ns"].to_numpy(np.float64)
        c.xfer = c.xfer * np.where(dur > 0, (pe - ps) / np.where(dur > 0, dur, 1), 1.0)


def what_if_job(job: Job, matched: pd.DataFrame, edits: Sequence[str]) -> pd.DataFrame:
    """`perfview summary FOLDER --view what-if --edit …`: per step, the measured and predicted
    step time, the speedup and the rank bounding the predicted step (see the module doc)."""
    rank_edits, trace_edits = split_edits(edits)
    if trace_edits and job.reopen is None:
        raise EditError("this job's ranks cannot be read again here, so only rank:N edits apply")
    steps = sorted({int(s) for red in job.ranks for s in red.steps["step"].tolist()})
    by_step = {step: _chains(job, matched, step) for step in steps}
    preds = _rank_predictions(job, trace_edits) if trace_edits else {}
    rows = []
    for step, chains in by_step.items():
        if not chains:
            continue
        if preds:
            _edited_chains(chains, job, matched, step, preds)
        _apply_rank_edits(chains, rank_edits)
        ends, binder = _replay(chains)
        measured = max(c.measured_ns for c in chains)
        predicted = max(ends[c.rank] - c.start for c in chains)
        rows.append({
            "step": step, "measured_ns": measured, "predicted_ns": round(predicted),
            "speedup": measured / predicted if predicted > 0 else float("nan"),
            "rank": _bounding_rank(chains, ends, binder),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS).astype(
        {"step": I64, "measured_ns": I64, "predicted_ns": I64, "rank": I64}
    )


def _rank_predictions(job: Job, edits: list[str]) -> Preds:
    """Every rank parsed again and replayed under the per-trace edits."""
    assert job.reopen is not None
    return {red.rank: rank_prediction(job.reopen(red.path), edits) for red in job.ranks}


__all__ = [
    "COLUMNS",
    "WAIT_COLUMNS",
    "RankEdit",
    "collective_waits",
    "rank_prediction",
    "split_edits",
    "what_if_job",
]
