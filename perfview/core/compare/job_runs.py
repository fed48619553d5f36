"""Two multi-rank jobs compared over their ranks, with the significance rules of several runs.

`perfview diff JOB_A JOB_B --view ranks|collectives|ops|kernels`. A job is many ranks running
the same program, so the ranks of a side are samples like the runs of `compare.runs`: per row
the median of each side, the Hodges-Lehmann change with its Mann-Whitney interval, and the
verdict (`runs.verdict`), from the same functions.

- `ops`, `kernels`: a row per operator / kernel name; the samples are its time on each rank
  of A and of B (the per-rank tables kept in each `RankReduction`). One op made slower on
  every rank is `slower`; a rank without the op counts 0 there.
- `collectives`: a row per collective, matched between the jobs (and between the ranks of a
  job) by process group, kind and sequence number: the trace's `Seq` when every rank recorded
  it, else the collective's place among that rank's collectives of that group and kind (NCCL
  and gloo issue a group's collectives in the same order on every rank). The samples are each
  rank's time in that collective (`dur_ns`), what it waited for the last rank (`wait_ns`).
- `ranks`: a row per rank number; its samples are that rank's ProfilerSteps in A and in B.
  Metrics: `compute_ns`, the step's time outside collectives (default), `step_ns` and
  `collective_ns`. Why outside collectives by default: one slow rank makes every rank's steps
  slower, since the others wait for it inside the collectives, so only the time outside them
  points at the slow rank.

Totals (what `--fail-above` also gates): ops, kernels, collectives: each rank's sum of the
metric, ranks as samples; ranks: the metric of each step averaged over the ranks, steps as
samples.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import (
    I64,
)
from perfview.core.analysis.torch.job_views import match
from perfview.core.analysis.torch.unions import merge_intervals
from perfview.core.compare import significance
from perfview.core.compare.diff import MIN_SHARE_PCT
from perfview.core.compare.runs import (
    VERDICT_GONE,
    VERDICT_NEW,
    Correction,
    RowSamples,
    RunsComparison,
    compare_frames,
    shift_columns,
    total_shift,
)
from perfview.core.model.job import Job, RankReduction

# Ops that start a collective (see the module docstring): not in the ops view.
COMM_OPS = r"^(?:c10d::|[nr]ccl:|gloo:|record_param_comms)"


class _View:
    """A view over ranks: metrics (default first), row key, the total's label, sample word."""

    def __init__(self, metrics: tuple[str, ...], key: list[str], total: str, samples: str):
        self.metrics, self.key, self.total, self.samples = metrics, key, total, samples


VIEWS: dict[str, _View] = {
    "ranks": _View(("compute_ns", "step_ns", "collective_ns"), ["rank"],
                   "time per step (mean over ranks)", "steps"),
    "collectives": _View(("dur_ns", "transfer_ns", "wait_ns"),
                         ["process_group", "kind", "in_step"],
                         "time in collectives per step (median over ranks)", "steps"),
    "ops": _View(("self_ns", "total_ns", "calls"), ["name"],
                 "time in operators (sum of op self time per rank)", "ranks"),
    "kernels": _View(("total_ns", "calls"), ["name"], "time in GPU kernels (sum per rank)",
                     "ranks"),
}  # fmt: skip


def _covered_before(starts: np.ndarray, ends: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Length of the merged intervals' union before each time `t`."""
    if not len(starts):
        return np.zeros(len(t), dtype=I64)
    lengths = np.concatenate([[0], np.cumsum(ends - starts)])
    i = np.searchsorted(starts, t, side="right")  # intervals starting at or before t
    partial = np.where(i > 0, np.minimum(t, ends[np.maximum(i - 1, 0)]) - starts[i - 1], 0)
    return np.asarray(lengths[np.maximum(i - 1, 0)] * (i > 0) + np.maximum(partial, 0), I64)


def rank_steps(red: RankReduction) -> pd.DataFrame:
    """One rank's steps: `step`, `step_ns`, `collective_ns` (the part of the step's window
    during which one of the rank's collectives ran) and `compute_ns` (the rest)."""
    steps = red.steps
    start = steps["start_ns"].to_numpy(dtype=I64)
    end = start + steps["dur_ns"].to_numpy(dtype=I64)
    c = red.comms
    c_start = c["start_ns"].to_numpy(dtype=I64)
    s, e = merge_intervals(c_start, c_start + c["dur_ns"].to_numpy(dtype=I64))
    comm = _covered_before(s, e, end) - _covered_before(s, e, start)
    return pd.DataFrame(
        {"step": steps["step"].to_numpy(), "step_ns": end - start, "collective_ns": comm,
         "compute_ns": end - start - comm}
    )  # fmt: skip


def _step_of(job: Job, arr: pd.DataFrame) -> np.ndarray:
    """The ProfilerStep each arrival falls in, on its rank's own steps (-1: outside them)."""
    out = np.full(len(arr), -1, dtype=I64)
    rank = arr["rank"].to_numpy(dtype=I64)
    start = arr["start_ns"].to_numpy(dtype=I64)
    for red in job.ranks:
        here = np.nonzero(rank == red.rank)[0]
        steps = red.steps
        if not len(here) or not len(steps):
            continue
        shift = int(job.offsets.get(red.rank, 0))
        s = steps["start_ns"].to_numpy(dtype=I64) + shift
        order = np.argsort(s, kind="stable")
        s = s[order]
        e = s + steps["dur_ns"].to_numpy(dtype=I64)[order]
        number = steps["step"].to_numpy(dtype=I64)[order]
        i = np.searchsorted(s, start[here], side="right") - 1
        inside = (i >= 0) & (start[here] < e[np.maximum(i, 0)])
        out[here] = np.where(inside, number[np.maximum(i, 0)], -1)
    return out


def _collective_frames(job: Job) -> list[pd.DataFrame]:
    """Per ProfilerStep (the samples): its collectives keyed (group, kind, k-th of that group
    and kind in the step), each summarised over the ranks by the median of `dur_ns`,
    `transfer_ns` (own end − last arrival) and `wait_ns` (last arrival − own arrival).

    Why one value per collective and not one per rank: the ranks of one collective wait for
    each other, so their times rise and fall together (one late rank makes all of them long):
    as samples they are one observation counted four times. The unit that repeats
    independently of that is the step: the k-th all-reduce of every step is the same
    collective run again. Without ProfilerSteps the whole trace is one step (one sample a row).
    """
    arr = match(job)
    cols = ["process_group", "kind", "in_step", *VIEWS["collectives"].metrics]
    if not len(arr):
        return [pd.DataFrame(columns=cols)]
    last = arr.groupby("instance")["start_ns"].transform("max")
    arr["wait_ns"] = last - arr["start_ns"]
    arr["transfer_ns"] = np.maximum(arr["end_ns"] - last, 0)
    arr["step"] = _step_of(job, arr)
    if (arr["step"] >= 0).any():
        arr = arr[arr["step"] >= 0]
    else:
        arr["step"] = 0
    g = arr.groupby("instance", sort=True)
    inst = g.agg(
        process_group=("group", "first"), kind=("kind", "first"), step=("step", "max"),
        start_ns=("start_ns", "min"), dur_ns=("dur_ns", "median"),
        transfer_ns=("transfer_ns", "median"), wait_ns=("wait_ns", "median"),
    ).sort_values("start_ns", kind="stable")  # fmt: skip
    inst["in_step"] = inst.groupby(["process_group", "kind", "step"]).cumcount().astype(I64)
    return [f[cols] for _, f in inst.groupby("step", sort=True)]


def sample_frames(job: Job, view: str) -> list[pd.DataFrame]:
    """The samples of `view` (not ranks) in one job: per rank (ops, kernels) or per step
    (collectives), a frame of the view's key and metrics."""
    if view == "collectives":
        return _collective_frames(job)
    spec = VIEWS[view]
    out = []
    for red in job.ranks:
        frame = red.ops if view == "ops" else red.kernels
        if not len(frame.columns):
            frame = pd.DataFrame({c: pd.Series(dtype=float) for c in ["name", *spec.metrics]})
        elif view == "ops":
            frame = frame[~frame["name"].astype(str).str.contains(COMM_OPS, regex=True)]
        out.append(frame[["name", *spec.metrics]])
    return out


def _over_ranks(
    a: Job, b: Job, view: str, metric: str, confidence: float, min_share_pct: float
) -> RunsComparison:
    spec = VIEWS[view]
    sides = [sample_frames(a, view), sample_frames(b, view)]
    key = spec.key
    metrics = list(spec.metrics)
    for side in sides:
        for i, f in enumerate(side):
            f = f.astype({m: np.float64 for m in metrics})
            side[i] = f.astype({k: str for k in key}) if len(f) else f
    frames = [*sides[0], *sides[1]]
    na = len(sides[0])
    table, correction, rows = compare_frames(
        frames, na, key, [], metrics, metric, confidence, True, min_share_pct
    )
    totals = np.array([float(f[metric].sum()) for f in frames])
    fewest = min(len(sides[0]), len(sides[1]))
    return _comparison(a, b, view, metric, table, totals[:na], totals[na:], confidence,
                       fewest, correction, rows, min_share_pct)  # fmt: skip


def _by_rank_steps(
    a: Job, b: Job, metric: str, confidence: float, min_share_pct: float
) -> RunsComparison:
    steps_a = {r.rank: rank_steps(r) for r in a.ranks}
    steps_b = {r.rank: rank_steps(r) for r in b.ranks}
    ranks = sorted(set(steps_a) | set(steps_b))
    empty = pd.DataFrame({m: pd.Series(dtype=float) for m in VIEWS["ranks"].metrics})
    cols: dict[str, object] = {"rank": np.array([str(r) for r in ranks], dtype=object)}
    for m in VIEWS["ranks"].metrics:
        med = [[float(np.median(side.get(r, empty)[m])) if len(side.get(r, empty)) else 0.0
                for r in ranks] for side in (steps_a, steps_b)]  # fmt: skip
        cols |= {f"{m}_a": np.array(med[0]), f"{m}_b": np.array(med[1])}
        cols[f"{m}_delta"] = cols[f"{m}_b"] - cols[f"{m}_a"]  # type: ignore[operator]
    sample_a = [_samples(steps_a.get(r), metric) for r in ranks]
    sample_b = [_samples(steps_b.get(r), metric) for r in ranks]
    runs_a = np.array([len(steps_a[r]) if r in steps_a else 0 for r in ranks])
    runs_b = np.array([len(steps_b[r]) if r in steps_b else 0 for r in ranks])
    shifts, correction = shift_columns(
        sample_a, sample_b, confidence, (runs_a > 0) & (runs_b > 0), min_share_pct
    )
    verdicts = shifts.pop("verdict")
    cols |= shifts
    cols["runs_a"], cols["runs_b"] = runs_a, runs_b
    verdicts[cols["runs_a"] == 0] = VERDICT_NEW  # type: ignore[comparison-overlap]
    verdicts[cols["runs_b"] == 0] = VERDICT_GONE  # type: ignore[comparison-overlap]
    cols["verdict"] = verdicts
    table = pd.DataFrame(cols)
    fewest = min((len(s) for s in [*steps_a.values(), *steps_b.values()]), default=0)
    return _comparison(a, b, "ranks", metric, table, _step_means(a, metric),
                       _step_means(b, metric), confidence, fewest, correction,
                       RowSamples(sample_a, sample_b), min_share_pct)  # fmt: skip


def _samples(steps: pd.DataFrame | None, metric: str) -> np.ndarray:
    """A rank's steps' values; a side without the rank (or its steps) counts one 0."""
    if steps is None or not len(steps):
        return np.zeros(1)
    return steps[metric].to_numpy(dtype=np.float64)


def _step_means(job: Job, metric: str) -> np.ndarray:
    """Per step number: the metric averaged over the ranks that ran it (the total's samples)."""
    frames = [rank_steps(r) for r in job.ranks]
    if not frames or not sum(len(f) for f in frames):
        return np.zeros(1)
    means = pd.concat(frames, ignore_index=True).groupby("step")[metric].mean()
    return means.to_numpy(dtype=np.float64)


def _comparison(
    a: Job, b: Job, view: str, metric: str, table: pd.DataFrame, totals_a: np.ndarray,
    totals_b: np.ndarray, confidence: float, fewest: int, correction: Correction,
    rows: RowSamples, min_share_pct: float,
) -> RunsComparison:  # fmt: skip
    spec = VIEWS[view]
    paths_a = [Path(r.path) for r in a.ranks]
    paths_b = [Path(r.path) for r in b.ranks]
    return RunsComparison(
        view=view, metric=metric, table=table, key=spec.key, info=[], metrics=list(spec.metrics),
        paths_a=paths_a, paths_b=paths_b, format="job",
        total=total_shift(totals_a, totals_b, confidence), total_label=spec.total,
        confidence=confidence, coverage=correction.coverage, method=correction.method,
        samples=spec.samples, fewest=fewest, correction=correction, rows=rows,
        min_share_pct=min_share_pct,
    )  # fmt: skip


def diff_job_runs(
    a: Job,
    b: Job,
    view: str = "ranks",
    metric: str | None = None,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    min_share_pct: float = MIN_SHARE_PCT,
) -> RunsComparison:
    """Job B against job A in one view over ranks; ValueError (one sentence) for a bad view,
    a bad metric or a job without ranks. Rows under `min_share_pct` % are `small`, untested
    (`runs.shift_columns`)."""
    if view not in VIEWS:
        raise ValueError(
            f"two jobs compare over ranks in the views {', '.join(VIEWS)}, not {view!r}"
        )
    spec = VIEWS[view]
    metric = metric or spec.metrics[0]
    if metric not in spec.metrics:
        raise ValueError(
            f"view {view!r} has no metric {metric!r}; choose one of {', '.join(spec.metrics)}"
        )
    if not a.ranks or not b.ranks:
        raise ValueError("each job needs at least one rank that opened")
    if view == "ranks":
        return _by_rank_steps(a, b, metric, confidence, min_share_pct)
    return _over_ranks(a, b, view, metric, confidence, min_share_pct)


def diff_job_runs_all(
    a: Job, b: Job, confidence: float = significance.DEFAULT_CONFIDENCE
) -> tuple[dict[str, RunsComparison], dict[str, str]]:
    """Every view over ranks (comparisons by view, errors by view): the window's compare tab
    of two jobs. `kernels` is left out when neither job ran a GPU kernel."""
    out: dict[str, RunsComparison] = {}
    errors: dict[str, str] = {}
    for view in VIEWS:
        if view == "kernels" and not any(len(r.kernels) for r in [*a.ranks, *b.ranks]):
            continue
        try:
            out[view] = diff_job_runs(a, b, view, confidence=confidence)
        except (ValueError, KeyError) as exc:
            errors[view] = str(exc)
    return out, errors


__all__ = ["VIEWS", "diff_job_runs", "diff_job_runs_all", "rank_steps", "sample_frames"]
