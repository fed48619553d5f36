"""What a multi-rank job is once opened: per-rank reductions, the files that failed, one clock.

Only the records live here (a `Bundle` of format "job" holds a `Job`, so the model owns its
type); how a rank is reduced and how ranks are put on one time axis is computed in
`perfview.core.analysis.torch.job`, the cross-rank tables in `...torch.job_views`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from perfview.core.model.errors import is_partial


@dataclass
class RankReduction:
    """What one rank's trace reduces to; small enough to send between processes."""

    path: str
    order: int  # position of the file in the job (name order)
    meta_rank: int | None  # distributedInfo.rank
    name_rank: int | None  # rank from the file name
    world_size: int | None
    origin_ns: int  # absolute ns of the trace's time 0
    duration_ns: int
    events: int
    steps: pd.DataFrame  # analysis.torch.job.STEP_COLUMNS, start_ns absolute
    comms: pd.DataFrame  # collectives.COMM_COLUMNS, start_ns absolute
    totals: dict[str, int]  # analysis.torch.job.TOTALS
    rank: int = -1
    source: str = ""
    warnings: list[str] = field(default_factory=list)  # the loader's (a truncated file, …)
    # the rank's own critical path: per step (critical_path.path.steps_table) and its top
    # contributors (step, category, name, ns: CRITICAL_TOP per step)
    critical_steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    critical: pd.DataFrame = field(default_factory=pd.DataFrame)
    # what each collective kernel's start and each step's end waited on (at_ns → after_ns:
    # critical_path.job_what_if.collective_waits), for what-if replays across ranks
    waits: pd.DataFrame = field(default_factory=pd.DataFrame)
    # the rank's operators and kernels by name (analysis.torch.job.OP_COLUMNS, KERNEL_COLUMNS):
    # what `perfview diff JOB_A JOB_B --view ops|kernels` compares over the ranks of each side
    ops: pd.DataFrame = field(default_factory=pd.DataFrame)
    kernels: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def partial(self) -> bool:
        """Whether the rank's file was cut short (only part of it loaded): such a rank is
        marked in the job tables and left out of straggler scoring."""
        return any(is_partial(w) for w in self.warnings)


@dataclass(frozen=True)
class RankFailure:
    """A file of the job that could not be opened, and the one-sentence reason."""

    path: str
    order: int
    reason: str


@dataclass
class Job:
    """Every rank that opened, sorted by rank, plus what went wrong and how clocks were aligned."""

    ranks: list[RankReduction]
    failures: list[RankFailure] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)  # rank → ns added to its absolute times
    clock: str = ""
    warnings: list[str] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tables (match)
    # parses a rank's trace again (its path → a Timeline: Any, as this module is imported by
    # the one defining Timeline), for a what-if that edits its events; None where the ranks
    # were reduced elsewhere (a cluster) and cannot be read here
    reopen: Callable[[str], Any] | None = field(default=None, repr=False)

    def by_rank(self) -> dict[int, RankReduction]:
        return {r.rank: r for r in self.ranks}


__all__ = ["Job", "RankFailure", "RankReduction"]
