"""A profile log directory as TensorBoard's profiler plugin read it: runs, workers and spans.

`profile(schedule=…, on_trace_ready=tensorboard_trace_handler("log/run1"))` writes one file
`<worker>.<timestamp>.pt.trace.json[.gz]` per schedule cycle, where `<worker>` is `host_PID`
(or the handler's `worker_name`). So a folder of such files is NOT a folder of ranks: the
files of one worker are successive spans of one process. The plugin's model, kept here:

- a **run** is a folder holding trace files (at any depth under the opened folder);
- a **worker** is the `<worker>` prefix of the handler's file name (a file that does not follow
  the convention is a worker of its own, named by the file); its rank comes from the trace's
  `distributedInfo` or a `rank-N` style name, when the trace states one;
- a **span** is one file of a worker, ordered by the timestamp in its name.

A run whose workers (two or more) all state distinct ranks is a multi-rank job; any other run
is a set of independent workers. Only the records live here; `perfview.jobs.logdir` finds
them on disk and opens them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from perfview.core.model.job import RankFailure, RankReduction

# The `runs` view's columns: one row per span.
RUNS_COLUMNS = ["run", "worker", "rank", "span", "file", "started", "steps", "step_mean_ns"]


@dataclass(frozen=True)
class Span:
    """One trace file of a worker: one schedule cycle. `stamp_ns`: the time in its name."""

    path: Path
    stamp_ns: int | None


@dataclass(frozen=True)
class Worker:
    """One process of a run, its spans in time order. `rank` is filled in once the spans are
    parsed (the rank a trace states is in its metadata); `rank_source` says where it came from."""

    name: str
    spans: tuple[Span, ...]
    rank: int | None = None
    rank_source: str = ""


@dataclass(frozen=True)
class Run:
    """A folder holding trace files; `name` is its path under the opened folder ("." for it)."""

    name: str
    path: Path
    workers: tuple[Worker, ...]

    @property
    def files(self) -> list[Path]:
        return [s.path for w in self.workers for s in w.spans]

    @property
    def is_job(self) -> bool:
        """Two or more workers, each stating a rank, no rank twice: a multi-rank job."""
        ranks = [w.rank for w in self.workers]
        return len(ranks) >= 2 and None not in ranks and len(set(ranks)) == len(ranks)


@dataclass
class LogDir:
    """An opened log directory: its runs and the `runs` view (one row per span, RUNS_COLUMNS,
    plus `path`, `started_ns` and `step_ns`: every step's duration, for the span trend)."""

    root: Path
    runs: list[Run]
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RUNS_COLUMNS))
    failures: list[str] = field(default_factory=list)
    # Every span's reduction (or why it failed), by path: what a run's job is assembled from.
    results: dict[Path, RankReduction | RankFailure] = field(default_factory=dict, repr=False)
    # Files still being written when the folder was read (a live folder): read once whole.
    pending: list[Path] = field(default_factory=list)


__all__ = ["RUNS_COLUMNS", "LogDir", "Run", "Span", "Worker"]
