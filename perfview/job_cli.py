"""`perfview summary` on a multi-rank job: a folder, a glob or several trace files.

    perfview summary FOLDER|GLOB|FILE… [--view VIEW] [--workers N]
                     [--cluster ADDRESS [--output DIR]]

A job is a document like any file: its views are the page registry's pages with a "job" table
(`summary.views_for("job")`: ranks, collectives, collective-kinds, overlap, stragglers). Ranks
are parsed and reduced in worker processes (`perfview.jobs`), or on a Dask cluster with
`--cluster` (`perfview.jobs.cluster`); the tables are the same either way. The JSON document is
the one of every summary plus `clock` (how the ranks were put on one time axis) and `failed`
(files that could not be opened, while the others were).
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import sys
from pathlib import Path
from typing import Any

from perfview import logdir_cli
from perfview.cli_common import CliError, cannot_open, internal_failure, write_summary
from perfview.core.analysis.torch.job import Job, document
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.pages import summary

# Views that only make sense across ranks: asking one of them of a single file opens it as a job.
CROSS_RANK_VIEWS = tuple(name for name, view in summary.VIEWS.items() if view.across_ranks)


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


def run_job(args: argparse.Namespace) -> int:
    """Open the job, build the view's table and print it like any other summary."""
    if not getattr(args, "more", []) and not args.cluster and os.path.isdir(args.file):
        return logdir_cli.run_logdir(args)
    view = args.view or summary.DEFAULT_VIEWS["job"]
    names = summary.views_for("job")
    if view not in names:
        views = ", ".join(names)
        raise CliError(
            f"{args.file} is a folder or several rank traces: only --view {views} read them"
        )
    sources = [args.file, *getattr(args, "more", [])]
    try:
        job = _open(args, sources)
        doc = document(job, Path(args.file))
    except LoadError as exc:
        raise cannot_open(args.file, str(exc)) from exc
    except ImportError as exc:
        need = "--cluster needs the 'cluster' extra (pip install perfview[cluster])"
        raise CliError(f"{need}: {exc}") from exc
    except Exception as exc:
        raise internal_failure(f"opening {args.file}", exc) from exc
    try:
        table = summary.summarize(doc, view, getattr(args, "edit", None) or ())
    except LoadError as exc:  # ViewError, EditError: one sentence about the view or an edit
        raise CliError(str(exc)) from exc
    except Exception as exc:
        raise internal_failure(f"building view {view!r} for {args.file}", exc) from exc
    shown, extra = summary_parts(doc)
    write_summary(shown, view, table, args.top, args.format, sys.stdout, extra=extra)
    return 0


def summary_parts(doc: Bundle) -> tuple[Bundle, dict[str, Any]]:
    """What a job's summary document says besides its rows: its header with the format named
    "trace", as it always has been (scripts read that field), and the `clock` and `failed`
    keys. Shared with the assistants' server (`perfview.assist`), whose rows are this
    command's."""
    job = doc.job
    assert job is not None  # a job document (`job.document`)
    extra: dict[str, Any] = {
        "clock": job.clock,
        "failed": [{"path": f.path, "reason": f.reason} for f in job.failures],
    }
    return dataclasses.replace(doc, format="trace"), extra


def open_side(source: str) -> Job:
    """One side of `perfview diff`: a run folder's workers (their spans pooled), or the files
    of a glob as ranks."""
    from perfview.jobs import open_job

    if os.path.isdir(source):
        return logdir_cli.open_run(source)
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
