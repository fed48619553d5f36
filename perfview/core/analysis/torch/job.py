"""A multi-rank job: per-rank reductions, rank numbers and one time axis for all ranks.

Opening a job never keeps every rank's events: each rank's trace is parsed (in a worker process
or a Dask worker, see `perfview.jobs`) and reduced by `reduce_rank` to a `RankReduction` of a
few small tables (steps, collective kernels, GPU time totals). `assemble` turns the reductions
and the files that failed into a `Job`: rank numbers checked, missing ranks named, and the
clock offsets that put every rank on one time axis.

Clocks: kineto writes absolute times (epoch µs, or `baseTimeNanoseconds` plus relative µs), so
when every rank's origin is an epoch time and the ranks' first common ProfilerStep starts within
half a step of each other, the absolute clocks are trusted as they are; also when the steps start
further apart but the ranks' collectives end closer together on the absolute clocks than after
aligning the steps (ranks of one busy host start a step tens of ms apart on one clock, and a
collective is where they synchronise). Otherwise (clocks of different hosts that disagree, or
traces without epoch times) each rank is shifted so that its first common ProfilerStep starts
where the earliest rank's did, and the job says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import kernels_table, ops_table
from perfview.core.analysis.torch.collectives import comm_kernels
from perfview.core.analysis.torch.common import (
    I64,
    comm_kernel_mask,
    kind_mask,
)
from perfview.core.analysis.torch.critical_path.job_what_if import collective_waits
from perfview.core.analysis.torch.critical_path.path import critical_path_table
from perfview.core.analysis.torch.critical_path.path import steps_table as critical_steps_table
from perfview.core.analysis.torch.overview import steps_table, utilization_table
from perfview.core.analysis.torch.ranks import rank_from_meta, rank_from_name
from perfview.core.analysis.torch.unions import merge_intervals, partition
from perfview.core.model import Bundle, Timeline
from perfview.core.model.job import Job, RankFailure, RankReduction

EPOCH_2001_NS = 978_307_200 * 10**9  # an origin after this is an epoch time, not a relative one
STEP_COLUMNS = ["step", "start_ns", "dur_ns", "kernel_ns", "comm_ns", "memcpy_ns", "gpu_busy_pct"]
CRITICAL_TOP = 20  # contributors kept per step of a rank's critical path
OP_COLUMNS = ["name", "calls", "self_ns", "total_ns"]  # per rank: the ops diff view's columns
KERNEL_COLUMNS = ["name", "calls", "total_ns"]
TOTALS = ("window_ns", "busy_ns", "compute_ns", "comm_ns", "memory_ns", "idle_ns", "overlap_ns")


def _world_size(meta: dict[str, Any]) -> int | None:
    info = meta.get("distributedInfo")
    size = info.get("world_size") if isinstance(info, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def _totals(timeline: Timeline) -> dict[str, int]:
    """GPU time split summed over devices, and how much collective time overlaps compute."""
    util = utilization_table(timeline)
    per_device = util[util["stream"] == "all"]
    out = {k: int(per_device[k].sum()) if len(per_device) else 0 for k in TOTALS[:-1]}
    ev = timeline.events
    comm = comm_kernel_mask(ev)
    compute = kind_mask(ev, ("kernel",)) & ~comm
    ts = ev["ts"].to_numpy(dtype=I64)
    end = ts + ev["dur"].to_numpy(dtype=I64)
    c_start, c_end = merge_intervals(ts[comm], end[comm])
    parts = partition([(ts[compute], end[compute])], c_start, c_end)
    out["overlap_ns"] = int(parts[:, 0].sum()) if len(parts) else 0
    return out


def reduce_rank(timeline: Timeline, path: str | Path, order: int) -> RankReduction:
    """The per-rank reduction of one parsed trace (run where the trace was parsed)."""
    origin = int(timeline.origin_ns)
    steps = steps_table(timeline)
    steps["memcpy_ns"] = steps["memcpy_ns"] + steps["memset_ns"]
    steps = steps[STEP_COLUMNS].copy()
    steps["start_ns"] = steps["start_ns"].astype(I64) + origin
    comms = comm_kernels(timeline)
    comms["start_ns"] = comms["start_ns"] + origin
    critical = critical_path_table(timeline)
    critical = critical.groupby("step", sort=False).head(CRITICAL_TOP)
    return RankReduction(
        path=str(path),
        order=order,
        meta_rank=rank_from_meta(timeline.meta),
        name_rank=rank_from_name(Path(path).name),
        world_size=_world_size(timeline.meta),
        origin_ns=origin,
        duration_ns=int(timeline.duration_ns),
        events=len(timeline.events),
        steps=steps.reset_index(drop=True),
        comms=comms.reset_index(drop=True),
        totals=_totals(timeline),
        critical_steps=critical_steps_table(timeline).reset_index(drop=True),
        critical=critical[["step", "category", "name", "ns"]].reset_index(drop=True),
        waits=collective_waits(timeline),
        ops=ops_table(timeline)[OP_COLUMNS].reset_index(drop=True),
        kernels=kernels_table(timeline)[KERNEL_COLUMNS].reset_index(drop=True),
    )


def _assign_ranks(reductions: list[RankReduction]) -> list[str]:
    """Give each reduction its rank (distributedInfo, file name, file order); duplicates renamed."""
    warnings = []
    taken: set[int] = set()
    for red in sorted(reductions, key=lambda r: r.order):
        if red.meta_rank is not None:
            red.rank, red.source = red.meta_rank, "distributedInfo"
        elif red.name_rank is not None:
            red.rank, red.source = red.name_rank, "file name"
        else:
            red.rank, red.source = red.order, "file order"
        if red.rank in taken:
            new = max(taken) + 1
            warnings.append(
                f"{Path(red.path).name} also says rank {red.rank}; it is shown as rank {new}"
            )
            red.rank, red.source = new, "renumbered (duplicate)"
        taken.add(red.rank)
    return warnings


MAX_LOADER_WARNINGS = 6


def _loader_warnings(reductions: list[RankReduction]) -> list[str]:
    """The loaders' warnings, rank by rank, then one line for the rest (1,024 ranks of the same
    orphan-flow note would bury the failures)."""
    lines = [f"rank {r.rank} ({Path(r.path).name}): {w}" for r in reductions for w in r.warnings]
    if len(lines) <= MAX_LOADER_WARNINGS:
        return lines
    ranks = len({r.rank for r in reductions if r.warnings})
    rest = len(lines) - MAX_LOADER_WARNINGS + 1
    return [*lines[: MAX_LOADER_WARNINGS - 1], f"… {rest} more loader warnings ({ranks} ranks)"]


def _partial(reductions: list[RankReduction]) -> list[str]:
    """One line naming the ranks whose file was cut short (before the loaders' many notes)."""
    cut = [r for r in reductions if r.partial]
    if not cut:
        return []
    names = ", ".join(f"rank {r.rank} ({Path(r.path).name})" for r in cut[:8])
    more = f" and {len(cut) - 8} more" if len(cut) > 8 else ""
    return [
        f"partial ranks (file cut short, only part loaded): {names}{more}; "
        "left out of straggler scoring"
    ]


def _missing(reductions: list[RankReduction], failures: list[RankFailure]) -> list[str]:
    sizes = {r.world_size for r in reductions if r.world_size}
    if not sizes:
        return []
    size = max(sizes)
    have = {r.rank for r in reductions}
    missing = [r for r in range(size) if r not in have]
    if not missing:
        return []
    shown = ", ".join(map(str, missing[:8])) + (", …" if len(missing) > 8 else "")
    opened = f"{len(have)} of {size} ranks opened"
    return [f"{opened}; missing: {shown}" + (" (see the files that failed)" if failures else "")]


def _end_spread(reductions: list[RankReduction], offsets: dict[int, int]) -> float | None:
    """Median over the collectives every rank ran (matched by group, kind and order) of how
    far apart their ends are once shifted by `offsets`; None without such a collective.

    Why ends: a collective is where the ranks synchronise (an all-reduce ends on no rank before
    the last one joins it), while ProfilerSteps start wherever each rank's own work ended: on a
    busy machine the ranks of one host start a step tens of ms apart on one same clock.
    """
    frames = []
    for red in reductions:
        c = red.comms
        if not len(c):
            return None
        f = pd.DataFrame({"pg": c["process_group"].astype(str), "kind": c["kind"].astype(str),
                          "start": c["start_ns"].to_numpy(dtype=I64)})  # fmt: skip
        f["end"] = f["start"] + c["dur_ns"].to_numpy(dtype=I64) + offsets.get(red.rank, 0)
        f = f.sort_values("start", kind="stable")
        f["nth"] = f.groupby(["pg", "kind"]).cumcount()
        frames.append(f.assign(rank=red.rank))
    every = pd.concat(frames, ignore_index=True).groupby(["pg", "kind", "nth"])
    ends = every["end"]
    full = every["rank"].transform("nunique") == len(reductions)
    if not full.any():
        return None
    spread = (ends.transform("max") - ends.transform("min"))[full]
    return float(spread.median())


def align_clocks(reductions: list[RankReduction]) -> tuple[dict[int, int], str]:
    """Offsets (ns, per rank) that put all ranks on one time axis, and a sentence saying how."""
    zero = {r.rank: 0 for r in reductions}
    if len(reductions) < 2:
        return zero, "one rank: its own clock"
    firsts = [set(r.steps["step"].tolist()) for r in reductions]
    common = set.intersection(*firsts) if firsts else set()
    absolute = all(r.origin_ns >= EPOCH_2001_NS for r in reductions)
    if not common:
        if absolute:
            return zero, "absolute clocks (no ProfilerStep common to all ranks to check them)"
        base = min(r.origin_ns for r in reductions)
        return {r.rank: base - r.origin_ns for r in reductions}, (
            "no common ProfilerStep and no absolute clock: every rank starts at its trace start"
        )
    step = min(common)
    starts = {
        r.rank: int(r.steps.loc[r.steps["step"] == step, "start_ns"].iloc[0]) for r in reductions
    }
    durs = np.concatenate([r.steps["dur_ns"].to_numpy(dtype=I64) for r in reductions])
    spread = max(starts.values()) - min(starts.values())
    if absolute and spread <= float(np.median(durs)) / 2:
        return zero, (
            f"absolute clocks: ProfilerStep#{step} starts within {spread / 1e6:.3f} ms on all ranks"
        )
    ref = min(starts.values())
    offsets = {rank: ref - s for rank, s in starts.items()}
    if absolute:
        own, shifted = _end_spread(reductions, zero), _end_spread(reductions, offsets)
        if own is not None and shifted is not None and own < shifted:
            return zero, (
                f"absolute clocks: the ranks' collectives end within {own / 1e6:.3f} ms of each "
                f"other (median), {shifted / 1e6:.3f} ms when aligned at ProfilerStep#{step}, "
                f"which starts {spread / 1e6:.3f} ms apart"
            )
    why = "clocks disagree" if absolute else "no absolute clock"
    return offsets, (
        f"{why} (ProfilerStep#{step} starts {spread / 1e6:.3f} ms apart): "
        f"each rank aligned at its ProfilerStep#{step}"
    )


def assemble(results: list[RankReduction | RankFailure]) -> Job:
    """The job from every file's outcome: ranks assigned, failures and gaps reported, clocks set."""
    reductions = [r for r in results if isinstance(r, RankReduction)]
    failures = sorted((r for r in results if isinstance(r, RankFailure)), key=lambda f: f.order)
    warnings = [f"cannot open {Path(f.path).name}: {f.reason}" for f in failures]
    warnings += _assign_ranks(reductions)
    reductions.sort(key=lambda r: r.rank)
    warnings += _partial(reductions)
    warnings += _loader_warnings(reductions)
    warnings += _missing(reductions, failures)
    offsets, clock = align_clocks(reductions)
    return Job(reductions, failures, offsets, clock, warnings)


def span_ns(job: Job) -> int:
    """From the earliest rank's start to the latest rank's end, on the job's one time axis."""
    starts = [r.origin_ns + job.offsets.get(r.rank, 0) for r in job.ranks]
    ends = [s + r.duration_ns for s, r in zip(starts, job.ranks, strict=True)]
    return max(ends) - min(starts) if starts else 0


def document(job: Job, path: Path) -> Bundle:
    """The job as a document (format "job"): what the page registry's job pages read, in the
    window and in `perfview summary`. `path`: the folder (or the first source) it came from."""
    counts = {"ranks": len(job.ranks), "failed": len(job.failures)}
    return Bundle(
        format="job", path=path, counts=counts, duration_ns=span_ns(job),
        warnings=[*job.warnings], job=job,
    )  # fmt: skip


def heatmap(job: Job, value: str = "dur_ns") -> pd.DataFrame:
    """Rank × step matrix of a steps column (rows: ranks, columns: step numbers; NaN if absent)."""
    frames = [r.steps.assign(rank=r.rank)[["rank", "step", value]] for r in job.ranks]
    if not frames:
        return pd.DataFrame()
    long = pd.concat(frames, ignore_index=True)
    return long.pivot_table(index="rank", columns="step", values=value, aggfunc="first")


__all__ = [
    "Job",
    "RankFailure",
    "RankReduction",
    "align_clocks",
    "assemble",
    "document",
    "heatmap",
    "reduce_rank",
    "span_ns",
]
