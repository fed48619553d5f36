"""`perfview summary` on a multi-rank job: a folder, a glob or several trace files.

    perfview summary FOLDER|GLOB|FILE… [--view ranks|collectives|collective-kinds|overlap|
                     stragglers] [--workers N] [--cluster ADDRESS [--output DIR]]

Ranks are parsed and reduced in worker processes (`perfview.jobs`), or on a Dask cluster with
`--cluster` (`perfview.jobs.cluster`); the tables are the same either way. The JSON document is
the one of every summary plus `clock` (how the ranks were put on one time axis) and `failed`
(files that could not be opened, while the others were).
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from pathlib import Path
from typing import Any

from perfview.cli_common import CliError, cannot_open, internal_failure, write_summary
from perfview.core.analysis.torch.job import Job
from perfview.core.analysis.torch.job_views import JOB_VIEWS, job_table
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError

# Views that only make sense across ranks: asking one of them of a single file opens it as a job.
CROSS_RANK_VIEWS = tuple(v for v in JOB_VIEWS if v != "ranks")


def is_job_source(source: str) -> bool:
    """A folder, or a glob pattern that names no existing file."""
    return os.path.isdir(source) or (not os.path.exists(source) and glob.has_magic(source))


def wants_job(args: argparse.Namespace) -> bool:
    """A folder, a glob, several files, a cross-rank view or --cluster make a job."""
    sources = [args.file, *getattr(args, "more", [])]
    if len(sources) > 1 or getattr(args, "cluster", None) or args.view in CROSS_RANK_VIEWS:
        return True
    return is_job_source(args.file)


def _open(args: argparse.Namespace, sources: list[str]) -> Job:
    if args.cluster:
        from perfview.jobs import cluster  # deferred: dask is an optional extra

        out = Path(args.output) if args.output else None
        return cluster.open_job_on_cluster(sources, args.cluster, out)
    from perfview.jobs import open_job

    return open_job(sources, workers=args.workers)


def _span(job: Job) -> int:
    starts = [r.origin_ns + job.offsets.get(r.rank, 0) for r in job.ranks]
    ends = [s + r.duration_ns for s, r in zip(starts, job.ranks, strict=True)]
    return max(ends) - min(starts) if starts else 0


def run_job(args: argparse.Namespace) -> int:
    """Open the job, build the view's table and print it like any other summary."""
    view = args.view or "ranks"
    if view not in JOB_VIEWS:
        views = ", ".join(JOB_VIEWS)
        raise CliError(
            f"{args.file} is a folder or several rank traces: only --view {views} read them"
        )
    sources = [args.file, *getattr(args, "more", [])]
    try:
        job = _open(args, sources)
        table = job_table(job, view)
    except LoadError as exc:
        raise cannot_open(args.file, str(exc)) from exc
    except ImportError as exc:
        need = "--cluster needs the 'cluster' extra (pip install perfview[cluster])"
        raise CliError(f"{need}: {exc}") from exc
    except Exception as exc:
        raise internal_failure(f"building view {view!r} for {args.file}", exc) from exc
    bundle, extra = summary_parts(job, args.file)
    write_summary(bundle, view, table, args.top, args.format, sys.stdout, extra=extra)
    return 0


def summary_parts(job: Job, source: str) -> tuple[Bundle, dict[str, Any]]:
    """What a job's summary document says besides its rows: a header bundle (ranks, failed,
    the span on the common clock) and the `clock` and `failed` keys. Shared with the
    assistants' server (`perfview.assist`), whose rows are this command's."""
    counts = {"ranks": len(job.ranks), "failed": len(job.failures)}
    bundle = Bundle(
        format="trace", path=Path(source), counts=counts, duration_ns=_span(job),
        warnings=[*job.warnings],
    )  # fmt: skip
    extra: dict[str, Any] = {
        "clock": job.clock,
        "failed": [{"path": f.path, "reason": f.reason} for f in job.failures],
    }
    return bundle, extra


def open_side(source: str) -> Job:
    from perfview.jobs import open_job

    try:
        return open_job([source])
    except LoadError as exc:
        raise cannot_open(source, str(exc)) from exc


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The job options of `perfview summary`."""
    p.add_argument("more", nargs="*", metavar="MORE", help="more rank traces of the same job")
    p.add_argument(
        "--workers", type=int, default=None, help="worker processes for a job (default: cores)"
    )
    p.add_argument(
        "--cluster", metavar="ADDRESS", help="parse the ranks on a Dask scheduler (tcp://host:port)"
    )
    p.add_argument(
        "--output",
        metavar="DIR",
        help="with --cluster: where the workers write each rank's Parquet columns and manifest",
    )


__all__ = [
    "CROSS_RANK_VIEWS",
    "add_arguments",
    "is_job_source",
    "open_side",
    "run_job",
    "summary_parts",
    "wants_job",
]
