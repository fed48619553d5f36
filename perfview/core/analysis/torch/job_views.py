"""The cross-rank tables of a job: ranks, collectives, collective kinds, overlap, stragglers.

Which page shows which table (and `perfview summary --view`'s names for them) is declared once in
the page registry (`perfview.core.pages.registry`, the "job" kind); this module only computes.

All of them read a `Job` (per-rank reductions, see `analysis.torch.job`), never events.
How collectives are matched across ranks and what skew, wait and transfer mean is explained in
`analysis.torch.collectives`. Matching, per process group (or, when the trace names none,
per GPU stream, which NCCL gives each communicator):

1. every rank has `Seq`: instances are (group, seq);
2. every rank recorded the same sequence of kinds in the group: instances are (group, n-th);
3. otherwise (a rank's trace is sampled or cut short, so kernels are missing): kernels of one
   kind that overlap in time on the common axis are one instance. A collective's kernels must
   overlap, since none can end before the last rank arrived.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.collectives import bus_factor
from perfview.core.analysis.torch.common import I64
from perfview.core.analysis.torch.critical_path import job_path, job_what_if
from perfview.core.analysis.torch.job import Job

COLLECTIVE_COLUMNS = [
    "kind", "process_group", "seq", "ranks", "bytes", "at_ns", "arrival_skew_ns", "wait_ns",
    "transfer_ns", "last_rank", "first_rank", "algbw_gbps", "busbw_gbps", "size_agree",
    "matched_by", "start_ns",
]  # fmt: skip


def arrivals(job: Job) -> pd.DataFrame:
    """Every rank's collective kernels on the common time axis, one row each, with `group`.

    One concat, then whole-column operations: per-rank pandas calls cost ~20 ms each, which is
    20 s at 1,024 ranks.
    """
    frames = [red.comms for red in job.ranks]
    if not frames or not sum(len(f) for f in frames):
        return pd.DataFrame(columns=["rank", "group", "nth", "kind", "start_ns", "end_ns"])
    c = pd.concat(frames, ignore_index=True)
    sizes = [len(f) for f in frames]
    ranks = np.repeat(np.array([r.rank for r in job.ranks], dtype=I64), sizes)
    shift = np.repeat(np.array([job.offsets.get(r.rank, 0) for r in job.ranks], dtype=I64), sizes)
    c["rank"] = ranks
    c["start_ns"] = c["start_ns"].to_numpy(dtype=I64) + shift
    c["end_ns"] = c["start_ns"] + c["dur_ns"]
    pg = c["process_group"].astype(str)
    c["group"] = pg.where(pg != "", "stream " + c["stream"].astype(str))
    c["nth"] = c.groupby(["rank", "group"], sort=False).cumcount().astype(I64)
    return c


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
    """`arrivals` plus `instance` (an id shared by one collective's kernels) and `matched_by`.

    Computed once per job (every cross-rank view starts from it); callers get a copy.
    """
    cached = job.cache.get("match")
    if cached is None:
        cached = job.cache["match"] = _match(job)
    return cached.copy()


def _match(job: Job) -> pd.DataFrame:
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


def collectives_table(job: Job) -> pd.DataFrame:
    """One row per matched collective instance, in time order (columns: COLLECTIVE_COLUMNS).

    bytes is the largest message of the instance (all-to-all-v ranks send different amounts:
    size_agree says whether every rank's message had the same size); wait_ns is the mean over
    ranks of (last arrival - own arrival); transfer_ns the median of (own end - last arrival).
    Vectorised over instances: a 1,024-rank job has millions of arrivals.
    """
    arr = match(job)
    if not len(arr):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in COLLECTIVE_COLUMNS})
    g = arr.groupby("instance", sort=True)
    last_each = g["start_ns"].transform("max")
    # Differences first, in int64: absolute ns (~1.7e18) lose 256 ns to float64 means.
    arr = arr.assign(
        _tr=np.maximum(arr["end_ns"] - last_each, 0), _wait=last_each - arr["start_ns"]
    )
    g = arr.groupby("instance", sort=True)
    out = g.agg(
        kind=("kind", "first"),
        process_group=("group", "first"),
        seq=("seq", "first"),
        ranks=("rank", "size"),
        bytes=("bytes", "max"),
        start_ns=("start_ns", "min"),
        _last=("start_ns", "max"),
        wait_ns=("_wait", "mean"),
        transfer_ns=("_tr", "median"),
        _pg=("pg_size", "max"),
        _sizes=("bytes", "nunique"),
        matched_by=("matched_by", "first"),
    )
    out["arrival_skew_ns"] = out["_last"] - out["start_ns"]
    out["wait_ns"] = out["wait_ns"].round().astype(I64)
    out["transfer_ns"] = out["transfer_ns"].round().astype(I64)
    rank = arr["rank"].to_numpy(dtype=I64)
    out["last_rank"] = rank[arr.index.get_indexer(pd.Index(g["start_ns"].idxmax()))]
    out["first_rank"] = rank[arr.index.get_indexer(pd.Index(g["start_ns"].idxmin()))]
    out["seq"] = np.where(out["matched_by"] == "seq", out["seq"], -1).astype(I64)
    sizes = [r.world_size for r in job.ranks if r.world_size]
    world = max(sizes) if sizes else 0
    n = np.where(out["_pg"] > 0, out["_pg"], world if world else out["ranks"])
    transfer = out["transfer_ns"].to_numpy(dtype=np.float64)
    nbytes = out["bytes"].to_numpy(dtype=np.float64)
    ok = (transfer > 0) & (nbytes > 0)
    out["algbw_gbps"] = np.where(ok, nbytes / np.where(ok, transfer, 1), np.nan)  # B/ns = GB/s
    factor = [bus_factor(k, int(m)) for k, m in zip(out["kind"], n, strict=True)]
    out["busbw_gbps"] = out["algbw_gbps"] * np.asarray(factor, dtype=np.float64)
    out["size_agree"] = out["_sizes"] == 1
    # When, as time since the job's first collective: instances are milliseconds apart, which
    # a wall clock (absolute start_ns, kept last for exports) wrote as the same second.
    out["at_ns"] = out["start_ns"] - out["start_ns"].min()
    out = out.sort_values("start_ns", kind="stable")[COLLECTIVE_COLUMNS]
    return out.astype({"bytes": I64, "ranks": I64, "start_ns": I64, "at_ns": I64}).reset_index(
        drop=True
    )


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
    collectives (1 = always the last by the whole skew, 0 = always first). partial: the rank's
    file was cut short; it is left out of the matching and its score is NaN (listed last).
    """
    arr = match(job)
    partial = {r.rank for r in job.ranks if r.partial}
    if len(arr) and partial:  # a rank cut short looks late for the wrong reason: not scored
        arr = arr[~arr["rank"].isin(partial)]
    multi = arr[arr.groupby("instance")["rank"].transform("size") >= 2] if len(arr) else arr
    stats = pd.DataFrame(index=pd.Index([r.rank for r in job.ranks], name="rank"))
    if len(multi):
        first = multi.groupby("instance")["start_ns"].transform("min")
        last = multi.groupby("instance")["start_ns"].transform("max")
        skew = last - first
        multi = multi.assign(
            late=multi["start_ns"] - first,
            skew=skew,
            is_last=(multi["start_ns"] == last) & (skew > 0),
        )
        per = multi.groupby("rank").agg(
            times_last=("is_last", "sum"), collectives=("rank", "size"),
            late=("late", "mean"), skew=("skew", "mean"),
        )  # fmt: skip
        stats = stats.join(per)
    stats = stats.reindex(columns=["times_last", "collectives", "late", "skew"]).fillna(0)
    step_mean = _step_mean(job)
    skew_v = stats["skew"].to_numpy(dtype=np.float64)
    late_v = stats["late"].to_numpy(dtype=np.float64)
    rows = pd.DataFrame(
        {
            "rank": stats.index.to_numpy(dtype=I64),
            "times_last": stats["times_last"].to_numpy(dtype=I64),
            "collectives": stats["collectives"].to_numpy(dtype=I64),
            "mean_lateness_ns": np.round(late_v).astype(I64),
            "straggler_score": np.where(skew_v > 0, late_v / np.where(skew_v > 0, skew_v, 1), 0.0),
            "step_mean_ns": [step_mean[r] for r in stats.index],
            "partial": [r in partial for r in stats.index],
        }
    )
    rows["straggler_score"] = rows["straggler_score"].where(~rows["partial"])
    cols = ["rank", "times_last", "collectives", "mean_lateness_ns", "straggler_score",
            "step_mean_ns", "partial"]  # fmt: skip
    out = rows[cols]
    out = out.sort_values(
        ["straggler_score", "times_last", "rank"],
        ascending=[False, False, True],
        na_position="last",
    )
    return out.reset_index(drop=True)


def lateness_by_step(job: Job) -> pd.DataFrame:
    """Rank × step matrix of how late each rank reached the collectives of that step (mean ns
    of own arrival - first arrival). Step times hide a straggler (the others wait for it, so
    every rank's step lasts as long); its lateness does not. Rows: ranks, columns: steps."""
    arr = match(job)
    if not len(arr):
        return pd.DataFrame()
    first = arr.groupby("instance")["start_ns"].transform("min")
    arr = arr.assign(late=(arr["start_ns"] - first).astype(np.float64))
    steps = pd.concat(
        [
            r.steps.assign(rank=r.rank, start_ns=r.steps["start_ns"] + job.offsets.get(r.rank, 0))
            for r in job.ranks
        ],
        ignore_index=True,
    )
    if not len(steps):
        return pd.DataFrame()
    steps["end_ns"] = steps["start_ns"] + steps["dur_ns"]
    left = arr[["rank", "start_ns", "late"]].astype({"start_ns": I64, "rank": I64})
    right = steps[["rank", "start_ns", "end_ns", "step"]].astype({"start_ns": I64, "rank": I64})
    joined = pd.merge_asof(
        left.sort_values("start_ns"), right.sort_values("start_ns"), on="start_ns", by="rank"
    )
    joined = joined[joined["start_ns"] < joined["end_ns"]]
    if not len(joined):
        return pd.DataFrame()
    return joined.pivot_table(index="rank", columns="step", values="late", aggfunc="mean")


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
    """One row per rank: file, steps, step times, GPU busy split, collectives, overlap, slowest,
    and from the stragglers view times_last and straggler_score."""
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
                "partial": red.partial,
            }
        )
    out = pd.DataFrame(rows)
    if not len(out):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in ("rank", "file", "steps")})
    out["gpu_util_pct"] = out["gpu_busy_pct"]  # the name the single-file ranks view uses
    mean = out["step_mean_ns"].where((out["steps"] > 0) & ~out["partial"])  # not cut short
    out["slowest"] = (mean == mean.max()) & mean.notna()
    fastest = mean.min()
    out["vs_fastest_pct"] = (
        (mean - fastest) * 100.0 / fastest if fastest and fastest > 0 else np.nan
    )
    late = stragglers_table(job).set_index("rank")
    out["times_last"] = out["rank"].map(late["times_last"]).fillna(0).astype(I64)
    score = out["rank"].map(late["straggler_score"])
    out["straggler_score"] = score.where(out["partial"], score.fillna(0.0))  # NaN: not scored
    return out.reset_index(drop=True)


def what_if_table(job: Job, edits: Sequence[str]) -> pd.DataFrame:
    """`--view what-if --edit …` on a job: per step, measured and predicted time, speedup and
    the rank bounding the predicted step (`job_what_if`)."""
    return job_what_if.what_if_job(job, match(job), edits)


def critical_steps_table(job: Job) -> pd.DataFrame:
    """Per step, the rank that bounds it and its own critical path (`job_path`)."""
    return job_path.critical_steps(job, match(job))


def critical_path_table(job: Job) -> pd.DataFrame:
    """Per step, the bounding rank's top critical path contributors (`job_path`)."""
    return job_path.critical_path(job, match(job))


__all__ = [
    "COLLECTIVE_COLUMNS",
    "arrivals",
    "collectives_table",
    "critical_path_table",
    "critical_steps_table",
    "kinds_table",
    "lateness_by_step",
    "match",
    "overlap_table",
    "ranks_table",
    "stragglers_table",
]
