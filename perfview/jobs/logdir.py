"""Find a log directory's runs, workers and spans on disk, and open a run as a job.

The model is `perfview.core.model.logdir` (TensorBoard's profiler plugin's): `find_runs` walks
the folder and groups each run's files into workers by the `tensorboard_trace_handler` name
`<worker>.<timestamp>.pt.trace.json[.gz]`; every file is parsed and reduced like a job's rank
(`perfview.jobs.local.run_local`: worker processes, each reduction cached, so a reopen parses
nothing), which gives each span its steps and start and each worker the rank its trace states.
A run opens as a job whose ranks are its WORKERS, each worker's spans pooled into one
reduction: two schedule cycles of one process are never two ranks, and two unrelated files
never become a job (they state no ranks, so the run is not one, see `Run.is_job`).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd

from perfview.core.analysis.torch.job import EPOCH_2001_NS, assemble
from perfview.core.analysis.torch.ranks import TRACE_RE
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.job import Job, RankFailure, RankReduction
from perfview.core.model.logdir import RUNS_COLUMNS, LogDir, Run, Span, Worker
from perfview.jobs.local import Result, reopen_rank, run_local
from perfview.store import remote

# `<worker>.<timestamp>.pt.trace.json[.gz]`; the worker (host_PID or worker_name) may hold dots.
HANDLER_NAME = re.compile(r"^(?P<worker>.+)\.(?P<stamp>\d{9,})\.pt\.trace\.json(?:\.gz)?$", re.I)
MAX_FILES = 20_000  # a log directory is walked once; a whole disk is not a log directory
Progress = Callable[[int, int], None]


def stamp_ns(digits: str) -> int:
    """The handler's timestamp in ns, whatever its unit (torch wrote ms, newer torch ns)."""
    value = int(digits)
    for scale in (1, 10**3, 10**6, 10**9):  # ns, µs, ms, s: the first that is after 2001
        if value * scale >= EPOCH_2001_NS:
            return value * scale
    return value * 10**9


def worker_of(name: str) -> tuple[str, int | None]:
    """(worker, timestamp ns) of a trace file name; a name off the convention is its own worker."""
    match = HANDLER_NAME.match(name)
    if match is None:
        return name, None
    return match["worker"], stamp_ns(match["stamp"])


def is_whole(path: Path) -> bool:
    """Whether a trace file is complete, not still being written: gzipped, its stream ends
    (the writer adds the trailer when it closes the file); plain, its JSON parses whole
    (validated by msgspec without building it: a file cut after an event's `}` still fails).
    Reads the file once, in pieces for a gzip stream."""
    try:
        with open(path, "rb") as f:
            if path.suffix == ".gz":
                inflate = zlib.decompressobj(wbits=31)
                while chunk := f.read(1 << 20):
                    inflate.decompress(chunk, 1 << 16)
                    while inflate.unconsumed_tail and not inflate.eof:
                        inflate.decompress(inflate.unconsumed_tail, 1 << 16)
                    if inflate.eof:
                        return True
                return False
            msgspec.json.decode(f.read(), type=msgspec.Raw)
            return True
    except (OSError, zlib.error, msgspec.DecodeError):
        return False


def _run(root: Path, folder: Path, names: list[str]) -> Run:
    groups: dict[str, list[Span]] = {}
    for name in names:
        worker, stamp = worker_of(name)
        groups.setdefault(worker, []).append(Span(folder / name, stamp))
    workers = tuple(
        Worker(w, tuple(sorted(spans, key=lambda s: (s.stamp_ns or 0, s.path.name))))
        for w, spans in sorted(groups.items())
    )
    rel = folder.relative_to(root).as_posix()
    return Run(rel, folder, workers)


def find_runs(
    root: str | Path, pending: list[Path] | None = None, whole: Collection[Path] = ()
) -> list[Run]:
    """Every folder under `root` (itself included) holding trace files, by path; hidden folders
    and symbolic links to folders are not followed. LoadError when there is none.

    With `pending` (a live folder), a file that is not whole yet (`is_whole`) is left out and
    added to `pending` instead: it is read once the training has finished writing it. Files
    in `whole` were read already and are not checked again."""
    top = Path(root)
    if not top.is_dir():
        raise LoadError(f"{root} is not a folder")
    runs: list[Run] = []
    seen = 0
    for here, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        traces = sorted(f for f in files if TRACE_RE.search(f) and not f.startswith("."))
        if pending is not None:
            pending += [
                Path(here, f)
                for f in traces
                if Path(here, f) not in whole and not is_whole(Path(here, f))
            ]
            traces = [f for f in traces if Path(here, f) not in pending]
        seen += len(traces)
        if seen > MAX_FILES:
            raise LoadError(f"{root} holds more than {MAX_FILES:,} trace files: open one run")
        if traces:
            runs.append(_run(top, Path(here), traces))
    if not runs and not pending:
        raise LoadError(f"{root} holds no .json / .json.gz trace files")
    return runs


def _ranked(worker: Worker, results: dict[Path, Result]) -> Worker:
    """The worker with the rank its spans state: distributedInfo first, then a `rank-N` name."""
    reds = [r for s in worker.spans if isinstance(r := results.get(s.path), RankReduction)]
    meta = next((r.meta_rank for r in reds if r.meta_rank is not None), None)
    if meta is not None:
        return Worker(worker.name, worker.spans, meta, "distributedInfo")
    named = next((r.name_rank for r in reds if r.name_rank is not None), None)
    if named is not None:
        return Worker(worker.name, worker.spans, named, "file name")
    return worker


def _started(red: Result, span: Span) -> int:
    if isinstance(red, RankReduction) and red.origin_ns >= EPOCH_2001_NS:
        return red.origin_ns
    if span.stamp_ns is not None:
        return span.stamp_ns
    return span.path.stat().st_mtime_ns


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(sep=" ", timespec="milliseconds")[:23]


def runs_table(runs: Sequence[Run], results: dict[Path, Result]) -> pd.DataFrame:
    """One row per span: RUNS_COLUMNS, plus `path`, `started_ns` and `step_ns` (its steps)."""
    rows = []
    for run in runs:
        for worker in run.workers:
            for i, span in enumerate(worker.spans, start=1):
                red = results[span.path]
                dur = (
                    red.steps["dur_ns"].to_numpy(dtype=np.int64)
                    if isinstance(red, RankReduction)
                    else np.zeros(0, np.int64)
                )
                started = _started(red, span)
                rows.append({
                    "run": run.name, "worker": worker.name, "rank": worker.rank, "span": i,
                    "file": span.path.name, "started": _iso(started), "steps": len(dur),
                    "step_mean_ns": float(dur.mean()) if len(dur) else np.nan,
                    "path": str(span.path), "started_ns": started, "step_ns": dur,
                })  # fmt: skip
    table = pd.DataFrame(rows, columns=[*RUNS_COLUMNS, "path", "started_ns", "step_ns"])
    table["rank"] = table["rank"].astype("Int64")
    return table


def open_logdir(
    root: str | Path,
    workers: int | None = None,
    progress: Progress | None = None,
    *,
    live: bool = False,
    known: dict[Path, Result] | None = None,
) -> LogDir:
    """Find the runs under `root`, parse and reduce every span (cached), rank the workers.

    `live`: leave out the files still being written (`LogDir.pending`); `known`: the spans
    already read (a re-read of a live folder parses only the new files). A URL (`s3://…`) is
    mirrored into the cache first (`perfview.store.remote`), only its new or changed files
    fetched."""
    root = remote.resolve(root)  # a URL: its local mirror, fetched where stale
    pending: list[Path] | None = [] if live else None
    have = known or {}
    runs = find_runs(root, pending, have.keys())
    files = [p for run in runs for p in run.files]
    todo = [p for p in files if p not in have]
    results = {p: have[p] for p in files if p in have}
    results.update(zip(todo, run_local(todo, workers, progress) if todo else [], strict=True))
    outcomes = [results[p] for p in files]
    runs = [Run(r.name, r.path, tuple(_ranked(w, results) for w in r.workers)) for r in runs]
    failures = [
        f"cannot open {Path(r.path).name}: {r.reason}"
        for r in outcomes
        if isinstance(r, RankFailure)
    ]
    return LogDir(Path(root), runs, runs_table(runs, results), failures, results, pending or [])


TREND_COLUMNS = [
    "worker", "run", "span", "file", "started", "steps", "step_mean_ns", "vs_previous_pct",
    "vs_first_pct",
]  # fmt: skip


def span_trend(logdir: LogDir) -> pd.DataFrame:
    """Each worker's mean step time over its spans, across runs, in start order, with the
    change from its previous span and from its first (`perfview diff LOGDIR --spans`).

    A worker is followed by its rank when its traces state one, else by its name; when every
    run is one process, that process is one worker through all runs (its PID changes from run
    to run). Spans without steps are left out (nothing to compare)."""
    table = logdir.table[logdir.table["steps"] > 0].copy()
    one_each = all(len(run.workers) == 1 for run in logdir.runs)
    names = table["worker"].astype(str)
    ranks = table["rank"].astype("string")
    key = names.where(table["rank"].isna(), "rank " + ranks.fillna(""))
    table["worker"] = "the process" if one_each else key
    table = table.sort_values(["worker", "started_ns"], kind="stable")
    mean = table.groupby("worker", sort=False)["step_mean_ns"]
    prev = mean.shift(1)
    first = mean.transform("first")
    table["vs_previous_pct"] = (table["step_mean_ns"] - prev) * 100.0 / prev
    table["vs_first_pct"] = (table["step_mean_ns"] - first) * 100.0 / first
    return table[TREND_COLUMNS].reset_index(drop=True)


def logdir_document(logdir: LogDir) -> Bundle:
    """The log directory as a document (format "logdir"): the `runs` page reads it."""
    counts = {"runs": len(logdir.runs), "spans": len(logdir.table)}
    return Bundle(
        format="logdir", path=logdir.root, counts=counts, warnings=[*logdir.failures],
        logdir=logdir,
    )  # fmt: skip


def pooled(spans: list[RankReduction], order: int) -> RankReduction:
    """One worker's spans as one reduction: steps and collectives concatenated, totals summed,
    from the first span's start to the last span's end (a lone span is returned as it is)."""
    if len(spans) == 1:
        return spans[0]
    first = min(spans, key=lambda r: r.origin_ns)
    end = max(r.origin_ns + r.duration_ns for r in spans)
    return RankReduction(
        path=first.path, order=order, meta_rank=first.meta_rank, name_rank=first.name_rank,
        world_size=first.world_size, origin_ns=first.origin_ns,
        duration_ns=end - first.origin_ns, events=sum(r.events for r in spans),
        steps=pd.concat([r.steps for r in spans], ignore_index=True),
        comms=pd.concat([r.comms for r in spans], ignore_index=True),
        totals={k: sum(r.totals.get(k, 0) for r in spans) for k in first.totals},
        warnings=[w for r in spans for w in r.warnings],
        ops=_by_name([r.ops for r in spans]), kernels=_by_name([r.kernels for r in spans]),
    )  # fmt: skip


def _by_name(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-name tables of several spans as one: every numeric column summed per name."""
    frames = [f for f in frames if len(f.columns)]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True).groupby("name", sort=False).sum().reset_index()


def run_job(run: Run, results: dict[Path, Result]) -> Job:
    """The run as a job whose ranks are its workers, each worker's spans pooled."""
    outcomes: list[Result] = []
    for order, worker in enumerate(run.workers):
        reds = [r for s in worker.spans if isinstance(r := results[s.path], RankReduction)]
        outcomes += [r for s in worker.spans if isinstance(r := results[s.path], RankFailure)]
        if reds:
            outcomes.append(pooled(reds, order))
    job = assemble(outcomes)
    spans = sum(len(w.spans) for w in run.workers)
    if spans == len(run.workers):  # a rank is one file: a what-if may parse it again
        job.reopen = reopen_rank
    if spans > len(run.workers):
        job.warnings.insert(
            0,
            f"{spans} spans of {len(run.workers)} worker(s): each worker's spans are pooled "
            "(--view runs lists them)",
        )
    if not job.ranks:
        reasons = "; ".join(f"{Path(f.path).name}: {f.reason}" for f in job.failures[:3])
        raise LoadError(f"no trace of the run could be opened ({reasons})")
    return job


def span_count(run: Run) -> int:
    """How many spans the run's busiest worker has (each span: one schedule cycle)."""
    return max((len(w.spans) for w in run.workers), default=0)


def span_run(run: Run, index: int) -> Run:
    """The run with each worker's `index`-th span (0-based, in time order) only: one schedule
    cycle of the job. A worker with fewer spans is left out (its rank is missing there)."""
    workers = tuple(
        Worker(w.name, (w.spans[index],), w.rank, w.rank_source)
        for w in run.workers
        if index < len(w.spans)
    )
    return Run(run.name, run.path, workers)


def span_labels(logdir: LogDir, run: Run) -> tuple[str, ...]:
    """Each span's label, "Span N · HH:MM:SS": when its first worker's file started."""
    rows = logdir.table[logdir.table["run"] == run.name]
    labels = []
    for i in range(1, span_count(run) + 1):
        started = rows.loc[rows["span"] == i, "started"]
        when = f" · {min(started)[11:19]}" if len(started) else ""
        labels.append(f"Span {i}{when}")
    return tuple(labels)


__all__ = [
    "HANDLER_NAME",
    "find_runs",
    "is_whole",
    "logdir_document",
    "open_logdir",
    "pooled",
    "run_job",
    "runs_table",
    "span_count",
    "span_labels",
    "span_run",
    "span_trend",
    "stamp_ns",
    "worker_of",
]
