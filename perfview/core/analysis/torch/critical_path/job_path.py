"""The critical path of a job: which rank bounds each step, and what on that rank.

Collectives are the edges between ranks: a collective completes only when its last rank
arrives, so every other rank's step waits for that one. Per step, the bounding rank is the one
the others waited for longest at the step's collectives (the sum over them of its arrival after
the first rank's); the step's path then continues on that rank's own critical path, whose
breakdown each rank's reduction carries (`RankReduction.critical`). A step without collectives
is bounded by the rank whose step took longest. This reads only the reductions, never events,
so it works for jobs of any size; it does not follow a path back and forth between ranks inside
one step.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64
from perfview.core.analysis.torch.job import Job

STEP_COLUMNS = ["step", "rank", "step_ns", "path_ns", "bound_by", "bound_pct", "top_op",
                "late_ns"]  # fmt: skip


def _lateness(job: Job, matched: pd.DataFrame) -> pd.DataFrame:
    """rank, step, late_ns: how much later than the first rank each rank reached the
    collectives that start inside its step (summed over them)."""
    if not len(matched):
        return pd.DataFrame(columns=["rank", "step", "late_ns"])
    first = matched.groupby("instance")["start_ns"].transform("min")
    arr = matched.assign(late=(matched["start_ns"] - first).astype(I64))
    steps = pd.concat(
        [r.steps.assign(rank=r.rank, start_ns=r.steps["start_ns"] + job.offsets.get(r.rank, 0))
         for r in job.ranks],
        ignore_index=True,
    )  # fmt: skip
    if not len(steps):
        return pd.DataFrame(columns=["rank", "step", "late_ns"])
    steps["end_ns"] = steps["start_ns"] + steps["dur_ns"]
    left = arr[["rank", "start_ns", "late"]].astype({"start_ns": I64, "rank": I64})
    right = steps[["rank", "start_ns", "end_ns", "step"]].astype({"start_ns": I64, "rank": I64})
    joined = pd.merge_asof(
        left.sort_values("start_ns"), right.sort_values("start_ns"), on="start_ns", by="rank"
    )
    joined = joined[joined["start_ns"] < joined["end_ns"]]
    out = joined.groupby(["rank", "step"])["late"].sum().rename("late_ns").reset_index()
    return out.astype({"rank": I64, "step": I64, "late_ns": I64})


def critical_steps(job: Job, matched: pd.DataFrame) -> pd.DataFrame:
    """Per step: the bounding rank (see the module doc), its step time, its critical path's
    length and bound, its biggest contributor, and late_ns (what the others waited for it)."""
    late = _lateness(job, matched)
    by_rank = job.by_rank()
    per_rank = [r.critical_steps.assign(rank=r.rank) for r in job.ranks if len(r.critical_steps)]
    if not per_rank:
        return pd.DataFrame(columns=STEP_COLUMNS)
    steps = pd.concat(per_rank, ignore_index=True)
    steps = steps.merge(late, on=["rank", "step"], how="left").fillna({"late_ns": 0})
    rows = []
    for step_key, part in steps.groupby("step", sort=True):
        step = int(str(step_key))
        waited = part["late_ns"].to_numpy(dtype=I64)
        pick = int(np.argmax(waited)) if waited.max() > 0 else int(part["step_ns"].argmax())
        row = part.to_dict("records")[pick]
        rank = int(row["rank"])
        crit = by_rank[rank].critical
        mine = crit[crit["step"] == step]
        top = mine.iloc[0] if len(mine) else None
        rows.append({
            "step": step, "rank": rank, "step_ns": int(row["step_ns"]),
            "path_ns": int(row["path_ns"]), "bound_by": str(row["bound_by"]),
            "bound_pct": float(row["bound_pct"]),
            "top_op": "" if top is None else f"{top['category']}: {top['name']}",
            "late_ns": int(row["late_ns"]),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


def critical_path(job: Job, matched: pd.DataFrame) -> pd.DataFrame:
    """Per step, the bounding rank's top contributors: step, rank, category, name, ns,
    share_pct (of that rank's path)."""
    steps = critical_steps(job, matched)
    cols = ["step", "rank", "category", "name", "ns", "share_pct"]
    by_rank = job.by_rank()
    frames = []
    for step, rank, path_ns in steps[["step", "rank", "path_ns"]].itertuples(index=False):
        crit = by_rank[int(rank)].critical
        mine = crit[crit["step"] == step].assign(rank=int(rank))
        mine["share_pct"] = mine["ns"] * 100.0 / path_ns if path_ns else 0.0
        frames.append(mine)
    if not frames:
        return pd.DataFrame(columns=cols)
    out: pd.DataFrame = pd.concat(frames, ignore_index=True)[cols]
    return out


__all__ = ["STEP_COLUMNS", "critical_path", "critical_steps"]
