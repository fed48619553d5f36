"""Per-rank parse-and-reduce on a local pool of worker processes.

Parsing a trace is CPU-bound Python/numba work, so ranks go to separate processes
(`ProcessPoolExecutor` with the spawn context: no fork of a process that may hold threads, Qt
or a numba runtime), one per core. Each worker returns a `RankReduction` (a few small frames)
or a `RankFailure` with the reason, never the event table.
"""

from __future__ import annotations

import atexit
import glob
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from perfview import streamed
from perfview.core.analysis.torch.job import Job, RankFailure, RankReduction, assemble, reduce_rank
from perfview.core.analysis.torch.ranks import TRACE_RE, trace_files
from perfview.core.model import Timeline
from perfview.core.model.errors import LoadError
from perfview.store import remote

Result = RankReduction | RankFailure


def job_files(sources: Sequence[str | Path]) -> list[Path]:
    """The trace files of a job: a folder's traces, a glob's matches, or the files given.

    Raises LoadError with one sentence when nothing matches.
    """
    files: list[Path] = []
    for source in sources:
        path = remote.resolve(source)  # a URL: its local mirror
        streamed.settle(path)  # a file still downloading (one opened alone before): whole
        if path.is_dir():
            files.extend(trace_files(path))
        elif path.exists():
            files.append(path)
        elif glob.has_magic(str(source)):
            files.extend(Path(p) for p in sorted(glob.glob(str(source))) if Path(p).is_file())
        else:
            raise LoadError(f"{source} does not exist")
    unique = sorted(dict.fromkeys(p.resolve() for p in files), key=lambda p: (p.name, str(p)))
    if not unique:
        raise LoadError(f"{', '.join(map(str, sources))} holds no .json / .json.gz trace files")
    return unique


def job_sources(sources: Sequence[str | Path]) -> list[str]:
    """`job_files` as text, with the trace files under a URL kept as URLs (not fetched here):
    what a cluster's workers are given, each reading its own file."""
    urls = [u for s in sources if remote.is_url(s) for u in remote.list_traces(str(s))]
    local = [s for s in sources if not remote.is_url(s)]
    files = [str(f) for f in job_files(local)] if local else []
    name = remote.url_name
    return sorted(dict.fromkeys([*files, *urls]), key=lambda p: (name(p), p))


def parse_and_reduce(
    path: str,
    order: int,
    keep: Callable[[Timeline, RankReduction], None] | None = None,
    *,
    compiled: bool | None = None,
) -> Result:
    """Parse one rank's trace and reduce it; `keep(timeline, reduction)` stores what the caller
    keeps of it (cached reduction, Parquet columns). A bad file, or a failure to keep, becomes a
    RankFailure, never an error: the other ranks still open. `compiled`: as
    `LoadOptions.compiled` (a worker passes WORKER_COMPILED)."""
    from perfview.loaders import LoadOptions, internal_error, load  # deferred: the worker's

    try:
        fresh = LoadOptions(read_cache=False, write_cache=False, compiled=compiled)
        bundle = load(remote.resolve(path), options=fresh)  # a URL: read where this runs
        if bundle.timeline is None:
            return RankFailure(path, order, "it holds no trace timeline")
        reduction = reduce_rank(bundle.timeline, path, order)
        reduction.warnings = [str(w) for w in bundle.warnings]
        if keep is not None:
            keep(bundle.timeline, reduction)
        return reduction
    except LoadError as exc:
        return RankFailure(path, order, str(exc))
    except Exception as exc:  # a worker must report, not die
        return RankFailure(path, order, internal_error(exc))


# A worker process parses every rank with the compiled scanner, whatever its size. The loader
# keeps files under 16 MB on its msgspec path, which costs nothing to start in a GUI process;
# a worker parsing rank after rank is better served by the scanner (measured on a 8.6 MB kineto
# rank: 0.30 s instead of 0.58 s).
WORKER_COMPILED = True


def rank_task(path: str, order: int, compiled: bool | None = None) -> Result:
    """A local worker's task: parse and reduce one rank, its reduction kept in the cache."""
    from perfview.jobs import reductions

    def keep(_tl: Timeline, red: RankReduction) -> None:
        reductions.put(Path(path), red)

    return parse_and_reduce(path, order, keep, compiled=compiled)


def reopen_rank(path: str) -> Timeline:
    """A rank's trace parsed again here (a what-if that edits its events needs them; the job
    keeps only reductions). LoadError when it is gone or holds no timeline."""
    from perfview.loaders import load

    timeline = load(path).timeline
    if timeline is None:
        raise LoadError(f"{path} holds no trace timeline")
    return timeline


def default_workers(n_files: int) -> int:
    """One worker per core, no more than files; 1 means parse in this process."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(n_files, cores or 1))


def run_local(
    files: Sequence[Path],
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Result]:
    """Every file's outcome, in file order; `progress(done, total)` after each rank."""
    from perfview.jobs import reductions

    # Ranks whose reduction is cached are read here: a reopen starts no worker at all.
    cached = {i: reductions.get(Path(f), i) for i, f in enumerate(files)}
    todo = [i for i, hit in cached.items() if hit is None]
    results: dict[int, Result] = {i: hit for i, hit in cached.items() if hit is not None}
    n = default_workers(len(todo)) if workers is None else max(1, workers)
    done = len(results)
    if progress and done:
        progress(done, len(files))
    if n == 1 or len(todo) <= 1:
        for i in todo:
            results[i] = rank_task(str(files[i]), i)
            done += 1
            if progress:
                progress(done, len(files))
        return [results[i] for i in range(len(files))]
    pool = _pool(n)
    futures = {i: pool.submit(rank_task, str(files[i]), i, WORKER_COMPILED) for i in todo}
    broken = False
    for i, fut in futures.items():
        try:
            results[i] = fut.result()
        except Exception as exc:  # the worker process itself died (killed, out of memory)
            results[i] = RankFailure(str(files[i]), i, f"its worker died ({exc})")
            broken = True
        done += 1
        if progress:
            progress(done, len(files))
    if broken:  # a dead worker breaks the whole pool: start a fresh one next time
        _drop_pool(n)
    return [results[i] for i in range(len(files))]


# Worker pools kept between jobs: a fresh worker spends ~1-4 s importing pandas and loading
# the compiled scanner before its first rank, which a reopen (or the next folder) then skips.
_POOLS: dict[int, ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(n: int) -> ProcessPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get(n)
        if pool is None:
            ctx = multiprocessing.get_context("spawn")
            pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx)
            _POOLS[n] = pool
        return pool


def _drop_pool(n: int) -> None:
    with _POOLS_LOCK:
        pool = _POOLS.pop(n, None)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pools() -> None:
    """Stop the kept worker processes (at exit, or to give the memory back)."""
    for n in list(_POOLS):
        _drop_pool(n)


atexit.register(shutdown_pools)


def open_job(
    sources: Sequence[str | Path],
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Job:
    """Open a job from a folder, a glob or files (see `job_files`), ranks parsed in parallel."""
    files = job_files(sources)
    job = assemble(run_local(files, workers, progress))
    job.reopen = reopen_rank
    if not job.ranks:
        reasons = "; ".join(f"{Path(f.path).name}: {f.reason}" for f in job.failures[:3])
        raise LoadError(f"no rank trace could be opened ({reasons})")
    return job


__all__ = [
    "TRACE_RE",
    "WORKER_COMPILED",
    "default_workers",
    "job_files",
    "job_sources",
    "open_job",
    "parse_and_reduce",
    "rank_task",
    "reopen_rank",
    "run_local",
    "shutdown_pools",
]
