"""`perfview diff JOB_A JOB_B`: two multi-rank jobs compared per rank or per collective kind.

Rows match on text keys like every diff (`perfview.core.compare.diff`): the rank number for
`job-ranks`, (process group, kind) for `job-collectives`. Totals: the mean step time over all
ranks, and the summed transfer time of every collective, so two jobs of different lengths or
rank counts still compare.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.job import Job
from perfview.core.analysis.torch.job_views import kinds_table, ranks_table
from perfview.core.compare import diff_views
from perfview.core.compare.diff import Comparison, compare_tables

JOB_DIFF_VIEWS = diff_views.views_for("job")


def _side(job: Job, view: str) -> tuple[pd.DataFrame, list[str], float]:
    if view == "job-ranks":
        t = ranks_table(job)
        t["rank"] = t["rank"].astype(str)
        if not len(t):
            return t, ["rank"], 0.0
        steps = t["step_mean_ns"].to_numpy(dtype=float)[t["steps"].to_numpy() > 0]
        return t, ["rank"], float(steps.mean()) if len(steps) else 0.0
    t = kinds_table(job)
    total = float(np.nansum(t["total_transfer_ns"].to_numpy(dtype=float))) if len(t) else 0.0
    return t, ["process_group", "kind"], total


def diff_jobs(
    a: Job, b: Job, path_a: Path, path_b: Path, view: str | None = None, metric: str | None = None
) -> Comparison:
    """Compare job B against baseline A; ValueError (one sentence) for a bad view or metric."""
    view = view or JOB_DIFF_VIEWS[0]
    if view not in JOB_DIFF_VIEWS:
        raise ValueError(f"two jobs compare in the views {', '.join(JOB_DIFF_VIEWS)}, not {view!r}")
    spec = diff_views.VIEWS[view]
    metric = metric or spec.default_metric
    if metric not in spec.metrics:
        raise ValueError(
            f"view {view!r} has no metric {metric!r}; choose one of {', '.join(spec.metrics)}"
        )
    frame_a, key, total_a = _side(a, view)
    frame_b, _, total_b = _side(b, view)
    for frame in (frame_a, frame_b):
        for m in spec.metrics:
            if m not in frame:
                frame[m] = pd.Series(dtype=float)
    table = compare_tables(frame_a, frame_b, key, list(spec.metrics), sort_by=metric)
    return Comparison(
        view=view, metric=metric, table=table, key=key, info=[], metrics=list(spec.metrics),
        total_a=total_a, total_b=total_b, total_label=spec.total_label, path_a=path_a,
        path_b=path_b, format="job", inputs=(frame_a, frame_b),
    )  # fmt: skip


__all__ = ["JOB_DIFF_VIEWS", "diff_jobs"]
