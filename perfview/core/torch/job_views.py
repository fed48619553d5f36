"""The cross-rank tables of a job: ranks, collectives, collective kinds, overlap, stragglers.

All of them read a `Job` (per-rank reductions, see `perfview.core.torch.job`), never events.
How collectives are matched across ranks and what skew, wait and transfer mean is explained in
`perfview.core.torch.collectives`. Matching, per process group (or, when the trace names none,
per GPU stream, which NCCL gives each communicator):

1. every rank has `Seq`: instances are (group, seq);
2. every rank recorded the same sequence of kinds in the group: instances are (group, n-th);
3. otherwise (a rank's trace is sampled or cut short, so kernels are missing): kernels of one
   kind that overlap in time on the common axis are one instance. A collective's kernels must
   overlap, since none can end before the last rank arrived.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.torch.collectives import bus_factor
from perfview.core.torch.common import I64
from perfview.core.torch.job import Job

COLLECTIVE_COLUMNS = [
    "kind", "process_group", "seq", "ranks", "bytes", "start_ns", "arrival_skew_ns", "wait_ns",
    "transfer_ns", "last_rank", "first_rank", "algbw_gbps", "busbw_gbps", "size_agree",
    "matched_by",
]  # fmt: skip


def arrivals(job: Job) -> pd.DataFrame:
    """Every rank's collective kernels on the common time axis, one row each, with `group`."""
    frames = []
    for red in job.ranks:
        c = red.comms.copy()
        c["rank"] = red.rank
        c["start_ns"] = c["start_ns"] + job.offsets.get(red.rank, 0)
        c["end_ns"] = c["start_ns"] + c["dur_ns"]
        named = c["process_group"].astype(str) != ""
        c["group"] = np.where(
            named, c["process_group"].astype(str), "stream " + c["stream"].astype(str)
        )
        c["nth"] = c.groupby("group").cumcount().astype(I64)
        frames.append(c)
    if not frames:
        return pd.DataFrame(columns=["rank", "group", "nth", "kind", "start_ns", "end_ns"])
    return pd.concat(frames, ignore_index=True)


def _by_time(group: pd.DataFrame) -> np.ndarray:
    """Instance ids of one group's kernels matched by time overlap, per kind (see module doc)."""
    ids = np.full(len(group), -1, dtype=I64)
    next_id = 0
    for _, part in group.groupby("kind", sort=True):
        order = part.sort_values(["start_ns", "rank"], kind="stable")
        pos = group.index.get_indexer(order.index)
        members: set[int] = set()
        min_end = -1
        for p, rank, start, end in zip(
            pos,
            order["rank"].tolist(),
            order["start_ns"].tolist(),
            order["end_ns"].tolist(),
            strict=True,
        ):
            if not members or start > min_end or rank in members:
                next_id += 1
                members, min_end = set(), end
            members.add(rank)
            min_end = min(min_end, end)
            ids[p] = next_id
    return ids


def match(job: Job) -> pd.DataFrame:
    """`arrivals` plus `instance` (an id shared by one collective's kernels) and `matched_by`."""
    arr = arrivals(job)
    if not len(arr):
        return arr.assign(instance=pd.Series(dtype=I64), matched_by=pd.Series(dtype=object))
    n_ranks = arr["rank"].nunique()
    arr["instance"] = np.int64(-1)
    arr["matched_by"] = ""
    offset = 0
    for _, grp in arr.groupby("group", sort=True):
        per_rank = [g["kind"].tolist() for _, g in grp.groupby("rank")]
        if (grp["seq"] >= 0).all():
            key, how = grp["seq"].to_numpy(dtype=I64), "seq"
        elif len(per_rank) == n_ranks and all(k == per_rank[0] for k in per_rank):
            key, how = grp["nth"].to_numpy(dtype=I64), "order"
        else:
            key, how = _by_time(grp), "time overlap"
        codes = pd.factorize(key, sort=True)[0].astype(I64)
        arr.loc[grp.index, "instance"] = codes + offset
        arr.loc[grp.index, "matched_by"] = how
        offset += int(codes.max()) + 1 if len(codes) else 0
    return arr


def _group_size(job: Job, pg_size: int, matched: int) -> int:
    if pg_size > 0:
        return pg_size
    sizes = [r.world_size for r in job.ranks if r.world_size]
    return max(sizes) if sizes else matched


def collectives_table(job: Job) -> pd.DataFrame:
    """One row per matched collective instance, in time order (columns: COLLECTIVE_COLUMNS).

    bytes is the largest message of the instance (all-to-all-v ranks send different amounts:
    size_agree says whether every rank's message had the same size); wait_ns is the mean over
    ranks of (last arrival - own arrival); transfer_ns the median of (own end - last arrival).
    """
    arr = match(job)
    if not len(arr):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in COLLECTIVE_COLUMNS})
    rows = []
    for _inst, g in arr.groupby("instance", sort=False):
        start = g["start_ns"].to_numpy(dtype=I64)
        last = int(start.max())
        transfer = int(np.median(np.maximum(g["end_ns"].to_numpy(dtype=I64) - last, 0)))
        nbytes = int(g["bytes"].max())
        n = _group_size(job, int(g["pg_size"].max()), len(g))
        kind = str(g["kind"].iloc[0])
        algbw = nbytes / transfer if transfer > 0 and nbytes > 0 else np.nan  # bytes/ns = GB/s
        rows.append(
            {
                "kind": kind,
                "process_group": str(g["group"].iloc[0]),
                "seq": int(g["seq"].iloc[0]) if g["matched_by"].iloc[0] == "seq" else -1,
                "ranks": len(g),
                "bytes": nbytes,
                "start_ns": int(start.min()),
                "arrival_skew_ns": last - int(start.min()),
                "wait_ns": int(np.mean(last - start)),
                "transfer_ns": transfer,
                "last_rank": int(g["rank"].iloc[int(np.argmax(start))]),
                "first_rank": int(g["rank"].iloc[int(np.argmin(start))]),
                "algbw_gbps": algbw,
                "busbw_gbps": algbw * bus_factor(kind, n),
                "size_agree": bool(g["bytes"].nunique() == 1),
                "matched_by": str(g["matched_by"].iloc[0]),
            }
        )
    out = pd.DataFrame(rows, columns=COLLECTIVE_COLUMNS).sort_values("start_ns", kind="stable")
    return out.reset_index(drop=True)


def kinds_table(job: Job, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per process group and kind: instances, bytes, mean skew / wait / transfer, mean busbw."""
    t = collectives_table(job) if table is None else table
    cols = ["process_group", "kind", "instances", "total_bytes", "mean_bytes",
            "total_transfer_ns", "mean_arrival_skew_ns", "mean_wait_ns", "mean_transfer_ns",
            "mean_busbw_gbps"]  # fmt: skip
    if not len(t):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    g = t.groupby(["process_group", "kind"], sort=True)
    out = g.agg(
        instances=("kind", "size"),
        total_bytes=("bytes", "sum"),
        mean_bytes=("bytes", "mean"),
        total_transfer_ns=("transfer_ns", "sum"),
        mean_arrival_skew_ns=("arrival_skew_ns", "mean"),
        mean_wait_ns=("wait_ns", "mean"),
        mean_transfer_ns=("transfer_ns", "mean"),
        mean_busbw_gbps=("busbw_gbps", "mean"),
    ).reset_index()
    for col in ("mean_bytes", "mean_arrival_skew_ns", "mean_wait_ns", "mean_transfer_ns"):
        out[col] = out[col].round().astype(I64)
    out = out.sort_values("total_transfer_ns", ascending=False, kind="stable")
    return out[cols].reset_index(drop=True)


def _step_mean(job: Job) -> dict[int, int]:
    return {
        r.rank: round(float(r.steps["dur_ns"].mean())) if len(r.steps) else 0 for r in job.ranks
    }


def stragglers_table(job: Job) -> pd.DataFrame:
    """One row per rank, worst straggler first.

    times_last: collectives (with 2+ ranks) it reached last; mean_lateness_ns: mean of its
    arrival - the first arrival; straggler_score: mean lateness / mean arrival skew of the same
    collectives (1 = always the last by the whole skew, 0 = always first).
    """
    arr = match(job)
    multi = arr[arr.groupby("instance")["rank"].transform("size") >= 2] if len(arr) else arr
    rows = []
    step_mean = _step_mean(job)
    if len(multi):
        first = multi.groupby("instance")["start_ns"].transform("min")
        last = multi.groupby("instance")["start_ns"].transform("max")
        multi = multi.assign(late=multi["start_ns"] - first, skew=last - first)
        multi = multi.assign(is_last=(multi["start_ns"] == last) & (multi["skew"] > 0))
    for red in job.ranks:
        mine = multi[multi["rank"] == red.rank] if len(multi) else multi
        skew = float(mine["skew"].mean()) if len(mine) else 0.0
        late = float(mine["late"].mean()) if len(mine) else 0.0
        rows.append(
            {
                "rank": red.rank,
                "times_last": int(mine["is_last"].sum()) if len(mine) else 0,
                "collectives": len(mine),
                "mean_lateness_ns": round(late),
                "straggler_score": late / skew if skew > 0 else 0.0,
                "step_mean_ns": step_mean[red.rank],
            }
        )
    cols = ["rank", "times_last", "collectives", "mean_lateness_ns", "straggler_score",
            "step_mean_ns"]  # fmt: skip
    out = pd.DataFrame(rows, columns=cols)
    out = out.sort_values(["straggler_score", "times_last", "rank"], ascending=[False, False, True])
    return out.reset_index(drop=True)


def overlap_table(job: Job) -> pd.DataFrame:
    """Per rank: collective time, how much of it ran under compute kernels, and what was exposed."""
    rows = []
    for red in job.ranks:
        t = red.totals
        comm, overlap = t.get("comm_ns", 0), t.get("overlap_ns", 0)
        rows.append(
            {
                "rank": red.rank,
                "comm_ns": comm,
                "compute_ns": t.get("compute_ns", 0),
                "overlap_ns": overlap,
                "exposed_comm_ns": max(comm - overlap, 0),
                "overlap_pct": overlap * 100.0 / comm if comm > 0 else np.nan,
            }
        )
    cols = ["rank", "comm_ns", "compute_ns", "overlap_ns", "exposed_comm_ns", "overlap_pct"]
    return pd.DataFrame(rows, columns=cols)


def ranks_table(job: Job) -> pd.DataFrame:
    """One row per rank: file, steps, step times, GPU busy split, collectives, overlap, slowest."""
    rows = []
    for red in job.ranks:
        dur = red.steps["dur_ns"].to_numpy(dtype=I64)
        t = red.totals
        window, comm = t.get("window_ns", 0), t.get("comm_ns", 0)
        rows.append(
            {
                "rank": red.rank,
                "rank_source": red.source,
                "file": red.path.rsplit("/", 1)[-1],
                "steps": len(dur),
                "step_mean_ns": round(float(dur.mean())) if len(dur) else 0,
                "step_median_ns": int(np.median(dur)) if len(dur) else 0,
                "step_min_ns": int(dur.min()) if len(dur) else 0,
                "step_max_ns": int(dur.max()) if len(dur) else 0,
                "gpu_busy_pct": t.get("busy_ns", 0) * 100.0 / window if window else np.nan,
                "compute_ns": t.get("compute_ns", 0),
                "comm_ns": comm,
                "memcpy_ns": t.get("memory_ns", 0),
                "idle_ns": t.get("idle_ns", 0),
                "overlap_pct": t.get("overlap_ns", 0) * 100.0 / comm if comm else np.nan,
                "collectives": len(red.comms),
                "clock_offset_ns": int(job.offsets.get(red.rank, 0)),
            }
        )
    out = pd.DataFrame(rows)
    if not len(out):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in ("rank", "file", "steps")})
    out["gpu_util_pct"] = out["gpu_busy_pct"]  # the name the single-file ranks view uses
    mean = out["step_mean_ns"].where(out["steps"] > 0)
    out["slowest"] = (mean == mean.max()) & mean.notna()
    fastest = mean.min()
    out["vs_fastest_pct"] = (
        (mean - fastest) * 100.0 / fastest if fastest and fastest > 0 else np.nan
    )
    return out.reset_index(drop=True)


JOB_VIEWS = {
    "ranks": ("Ranks", "per rank: steps, step time, GPU busy split, collectives, overlap"),
    "collectives": ("Collectives", "every collective matched across ranks: skew, wait, bandwidth"),
    "collective-kinds": ("Collective kinds", "collectives per process group and kind"),
    "overlap": ("Overlap", "per rank: collective time hidden under compute kernels"),
    "stragglers": ("Stragglers", "per rank, worst first: how often and how late it arrived"),
}
_TABLES = {
    "ranks": ranks_table,
    "collectives": collectives_table,
    "collective-kinds": kinds_table,
    "overlap": overlap_table,
    "stragglers": stragglers_table,
}


def job_table(job: Job, view: str) -> pd.DataFrame:
    """The table of one job view (a key of JOB_VIEWS)."""
    return _TABLES[view](job)


__all__ = [
    "COLLECTIVE_COLUMNS",
    "JOB_VIEWS",
    "arrivals",
    "collectives_table",
    "job_table",
    "kinds_table",
    "match",
    "overlap_table",
    "ranks_table",
    "stragglers_table",
]
