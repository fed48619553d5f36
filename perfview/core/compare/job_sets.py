"""Several runs of a multi-rank job per side: each run one sample, summarised over its ranks.

`perfview diff --baseline JOB_A1 JOB_A2 … --candidate JOB_B1 … --view ranks|collectives` (or
`--jobs --view ops|kernels`).
`job_runs` compares two single jobs with their ranks (or steps) as the samples, and says what
that cannot tell: the ranks and steps of one run share its machine, its moment and each rank's
placement, so a run that was slower on rank 1 throughout looks like a change of rank 1. With
several runs of each job, the run is the unit that repeats independently of all that: each row
gets one value per run, the median of that run's own samples (a rank's steps, a collective's
steps, an op's ranks), and the runs of A and of B are compared with the same statistics as
several runs of one trace (`runs.compare_frames`: rank test or Welch on logs, Benjamini-Hochberg
over the rows, `small` rows untested).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from perfview.core.compare import significance
from perfview.core.compare.diff import MIN_SHARE_PCT
from perfview.core.compare.job_runs import VIEWS, rank_steps, sample_frames
from perfview.core.compare.runs import RunsComparison, compare_frames, row_matrix, total_shift
from perfview.core.model.job import Job


def _ranks_frames(job: Job) -> list[pd.DataFrame]:
    """The ranks view's samples of one run: per ProfilerStep number, each rank's values."""
    metrics = list(VIEWS["ranks"].metrics)
    steps = [rank_steps(red).assign(rank=str(red.rank)) for red in job.ranks]
    frame = pd.concat(steps, ignore_index=True) if steps else pd.DataFrame()
    if not len(frame):
        return [pd.DataFrame({c: pd.Series(dtype=float) for c in ["rank", *metrics]})]
    return [g[["rank", *metrics]] for _, g in frame.groupby("step", sort=True)]


def run_summary(job: Job, view: str) -> pd.DataFrame:
    """One run's row values in `view`: the median over its samples (`job_runs.sample_frames`;
    for ranks, its steps), a sample without the row counting 0."""
    spec = VIEWS[view]
    metrics = list(spec.metrics)
    frames = _ranks_frames(job) if view == "ranks" else sample_frames(job, view)
    frames = [f.astype({m: np.float64 for m in metrics}).astype({k: str for k in spec.key})
              for f in frames if len(f)]  # fmt: skip
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in [*spec.key, *metrics]})
    rows, values, _present = row_matrix(frames, spec.key, metrics, [])
    out = rows.copy()
    for m in metrics:
        out[m] = np.median(values[m], axis=1)
    return out


def _total(job: Job, view: str, metric: str) -> float:
    """The run's total: the view's per-sample total (`VIEWS[view].total`), median over them."""
    if view == "ranks":  # a step's metric averaged over the ranks, median over the steps
        frames = [rank_steps(r) for r in job.ranks]
        if not frames or not sum(len(f) for f in frames):
            return 0.0
        means = pd.concat(frames, ignore_index=True).groupby("step")[metric].mean()
        return float(np.median(means.to_numpy(dtype=np.float64)))
    sums = [float(f[metric].astype(np.float64).sum()) for f in sample_frames(job, view) if len(f)]
    return float(np.median(sums)) if sums else 0.0


def diff_job_sets(
    jobs_a: list[Job],
    jobs_b: list[Job],
    view: str = "ranks",
    metric: str | None = None,
    confidence: float = significance.DEFAULT_CONFIDENCE,
    min_share_pct: float = MIN_SHARE_PCT,
    paths: tuple[list[Path], list[Path]] | None = None,
) -> RunsComparison:
    """The runs of job B against the runs of job A, one sample per run; ValueError (one
    sentence) for a bad view or metric, or a side without runs. `paths`: each run's folder."""
    if view not in VIEWS:
        raise ValueError(f"runs of a job compare in the views {', '.join(VIEWS)}, not {view!r}")
    spec = VIEWS[view]
    metric = metric or spec.metrics[0]
    if metric not in spec.metrics:
        raise ValueError(
            f"view {view!r} has no metric {metric!r}; choose one of {', '.join(spec.metrics)}"
        )
    if not jobs_a or not jobs_b:
        raise ValueError("each side needs at least one run of the job")
    if not all(job.ranks for job in [*jobs_a, *jobs_b]):
        raise ValueError("every run needs at least one rank that opened")
    frames = [run_summary(job, view) for job in [*jobs_a, *jobs_b]]
    metrics = list(spec.metrics)
    na = len(jobs_a)
    table, correction, rows = compare_frames(
        frames, na, spec.key, [], metrics, metric, confidence, view != "ranks", min_share_pct
    )
    totals = np.array([_total(job, view, metric) for job in [*jobs_a, *jobs_b]])
    if paths is None:
        paths = ([Path(j.ranks[0].path).parent for j in jobs_a],
                 [Path(j.ranks[0].path).parent for j in jobs_b])  # fmt: skip
    return RunsComparison(
        view=view, metric=metric, table=table, key=spec.key, info=[], metrics=metrics,
        paths_a=paths[0], paths_b=paths[1], format="job",
        total=total_shift(totals[:na], totals[na:], confidence),
        total_label=f"{spec.total}, median in each run",
        confidence=confidence, coverage=correction.coverage, method=correction.method,
        samples="runs", correction=correction, rows=rows, min_share_pct=min_share_pct,
    )  # fmt: skip


def diff_job_sets_all(
    jobs_a: list[Job], jobs_b: list[Job], confidence: float = significance.DEFAULT_CONFIDENCE
) -> tuple[dict[str, RunsComparison], dict[str, str]]:
    """Every view (comparisons by view, errors by view): the window's compare tab of several
    runs of a job a side. `kernels` is left out when no run ran a GPU kernel."""
    out: dict[str, RunsComparison] = {}
    errors: dict[str, str] = {}
    everyone = [*jobs_a, *jobs_b]
    for view in VIEWS:
        if view == "kernels" and not any(len(r.kernels) for j in everyone for r in j.ranks):
            continue
        try:
            out[view] = diff_job_sets(jobs_a, jobs_b, view, confidence=confidence)
        except (ValueError, KeyError) as exc:
            errors[view] = str(exc)
    return out, errors


__all__ = ["diff_job_sets", "diff_job_sets_all", "run_summary"]
