"""`perfview summary FOLDER` and `perfview diff RUN_A RUN_B` on a profile log directory.

A folder is read as TensorBoard's profiler plugin read a `--logdir` (`perfview.jobs.logdir`):
runs (folders holding traces, at any depth), workers (`host_PID` of the
`tensorboard_trace_handler` file name, or the trace's rank) and spans (one file per schedule
cycle). So

    perfview summary LOG --view runs      one row per span: run, worker, rank, span, file,
                                          started, steps, step_mean_ns
    perfview summary LOG/RUN              a multi-rank run: the job views (ranks, stragglers, …)
                                          with each worker's spans pooled; any other run: `runs`
    perfview diff LOG/RUN_A LOG/RUN_B     two runs, worker by worker, spans pooled
    perfview diff LOG --spans             each worker's mean step time over its spans, across
                                          runs: the change from its previous and first span

A folder of per-rank traces (a job) reads exactly as before: one worker per rank file.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from perfview.cli_common import CliError, cannot_open, internal_failure, write_summary
from perfview.core.analysis.torch.job import document
from perfview.core.model.errors import LoadError
from perfview.core.model.job import Job
from perfview.core.model.logdir import LogDir, Run
from perfview.core.pages import summary
from perfview.jobs.logdir import logdir_document

RUNS_VIEW = "runs"


def _open(folder: str, workers: int | None = None) -> LogDir:
    from perfview.jobs.logdir import open_logdir

    try:
        return open_logdir(folder, workers)
    except LoadError as exc:
        raise cannot_open(folder, str(exc)) from exc


def job_run(folder: str, logdir: LogDir) -> Run:
    """The one run a job view reads; one sentence when the folder is not one."""
    if len(logdir.runs) > 1:
        names = ", ".join(r.name for r in logdir.runs[:4]) + (", …" if len(logdir.runs) > 4 else "")
        raise CliError(
            f"{folder} is a log directory of {len(logdir.runs)} runs ({names}): "
            f"--view {RUNS_VIEW} lists them; give one run's folder for its job views"
        )
    run = logdir.runs[0]
    if len(run.workers) > 1 and not run.is_job:
        raise CliError(
            f"{folder} is not a multi-rank job: its {len(run.workers)} workers do not state "
            f"distinct ranks (no distributedInfo or rank-N name); --view {RUNS_VIEW} lists them, "
            "or give the files themselves to read them as ranks in name order"
        )
    return run


def _run_job(folder: str, logdir: LogDir) -> Job:
    from perfview.jobs.logdir import run_job

    run = job_run(folder, logdir)
    try:
        return run_job(run, logdir.results)
    except LoadError as exc:
        raise cannot_open(folder, str(exc)) from exc


def open_run(folder: str) -> Job:
    """One side of `perfview diff`: the run in `folder`, its workers the ranks, spans pooled."""
    logdir = _open(folder)
    if len(logdir.runs) > 1:
        job_run(folder, logdir)  # raises: a diff compares two runs, not two log directories
    from perfview.jobs.logdir import run_job

    try:
        return run_job(logdir.runs[0], logdir.results)
    except LoadError as exc:
        raise cannot_open(folder, str(exc)) from exc


def default_view(logdir: LogDir) -> str:
    """A single run that is a job opens on the job's first view; anything else on `runs`."""
    one = len(logdir.runs) == 1 and logdir.runs[0].is_job
    return summary.DEFAULT_VIEWS["job"] if one else RUNS_VIEW


def run_logdir(args: argparse.Namespace) -> int:
    """`perfview summary FOLDER [--view V]`: the runs view, or a run's job views."""
    folder = args.file
    job_views = summary.views_for("job")
    if args.view is not None and args.view != RUNS_VIEW and args.view not in job_views:
        views = ", ".join([*job_views, RUNS_VIEW])
        raise CliError(f"{folder} is a folder of traces: only --view {views} read it")
    logdir = _open(folder, args.workers)
    view = args.view or default_view(logdir)
    extra: dict[str, Any] = {}
    try:
        if view == RUNS_VIEW:
            doc = logdir_document(logdir)
        else:
            job = _run_job(folder, logdir)
            doc = document(job, Path(folder))
            extra = {
                "clock": job.clock,
                "failed": [{"path": f.path, "reason": f.reason} for f in job.failures],
            }
        table = summary.summarize(doc, view, getattr(args, "edit", None) or ())
    except CliError:
        raise
    except LoadError as exc:  # ViewError, EditError: one sentence about the view or an edit
        raise CliError(str(exc)) from exc
    except Exception as exc:
        raise internal_failure(f"building view {view!r} for {folder}", exc) from exc
    # A job's output names its format "trace", as it always has: scripts read that field.
    shown = dataclasses.replace(doc, format="trace") if doc.format == "job" else doc
    write_summary(shown, view, table, args.top, args.format, sys.stdout, extra=extra)
    return 0


def run_span_diff(args: argparse.Namespace) -> int:
    """`perfview diff LOGDIR --spans`: the trend of each worker over its spans."""
    from perfview.jobs.logdir import span_trend

    if args.b is not None:
        raise CliError("--spans reads one log directory: perfview diff LOGDIR --spans")
    logdir = _open(args.a)
    table = span_trend(logdir)
    write_summary(logdir_document(logdir), "spans", table, args.top, args.format, sys.stdout)
    return 0


__all__ = [
    "RUNS_VIEW",
    "default_view",
    "job_run",
    "open_run",
    "run_logdir",
    "run_span_diff",
]
