"""The data model every loader fills and every view reads.

Everything is columnar (pandas frames with the fixed schemas of `perfview.core.model.schema`, numpy
arrays for trees); no per-event Python objects survive a load. A `Bundle` is what one file
becomes; it holds whichever parts its format has.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from perfview.core.model import schema

# Every kind of file perfview reads; `Bundle.format` and each loader's NAME is one of them,
# except "job": a folder (or glob, or several files) of per-rank traces, opened by `perfview.jobs`,
# and "logdir": a profile log directory's runs, workers and spans (`perfview.jobs.logdir`).
Format = Literal[
    "pstats",
    "trace",
    "mprof",
    "memprof_text",
    "scalene",
    "cuda_snapshot",
    "memray",
    "sampled",
    "job",
    "logdir",
]

if TYPE_CHECKING:
    from perfview.core.model.cuda_memory import CudaSnapshot
    from perfview.core.model.job import Job
    from perfview.core.model.logdir import LogDir
    from perfview.core.model.memray_model import MemrayCapture


@dataclass(frozen=True)
class ArgsStore:
    """Every slice's raw JSON `args` text in one buffer, decoded only when a view asks for one.

    Keeping bytes plus spans costs one allocation instead of a dict per event. The blob holds
    the args in file order (so a loader copies them once, sequentially, or not at all); event
    i's args are blob[starts[i]:starts[i] + lens[i]] (lens 0: none).

    `check(starts, ends)`, when set, vouches for the blob's bytes in those spans before they
    are read (raising a LoadError that says what to do when they are damaged): a blob read
    back from the cache is checked where it is read, not whole on every reopen (a 10 GB
    trace's args are 3 GB, and a view reads a few). Readers go through `raw`, `get`,
    `check_spans` or `checked_blob`, never the blob alone.
    """

    blob: bytes = b""
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lens: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    check: Callable[[np.ndarray, np.ndarray], None] | None = field(
        default=None, compare=False, repr=False
    )

    @classmethod
    def from_offsets(cls, blob: bytes, offsets: np.ndarray) -> ArgsStore:
        """A store whose rows are consecutive: row i is blob[offsets[i]:offsets[i+1]]."""
        offsets = np.asarray(offsets, dtype=np.int64)
        return cls(blob=blob, starts=offsets[:-1].copy(), lens=np.diff(offsets))

    def raw(self, row: int) -> bytes:
        if row < 0 or row >= len(self.starts):
            return b""
        a, n = int(self.starts[row]), int(self.lens[row])
        if self.check is not None and n > 0:
            self.check(np.array([a], np.int64), np.array([a + n], np.int64))
        return self.blob[a : a + n]

    def check_spans(self, rows: np.ndarray) -> None:
        """Vouch for the args of `rows` (event rows in range) before reading them together."""
        if self.check is not None and len(rows):
            starts = np.asarray(self.starts[rows], dtype=np.int64)
            self.check(starts, starts + np.asarray(self.lens[rows], dtype=np.int64))

    def checked_blob(self) -> bytes:
        """The whole blob, every byte vouched for (a search or query reads it all)."""
        if self.check is not None and len(self.blob):
            self.check(np.zeros(1, np.int64), np.array([len(self.blob)], np.int64))
        return self.blob

    def get(self, row: int) -> dict[str, Any]:
        """Decoded args of one event ({} when it had none or they were not JSON)."""
        raw = self.raw(row)
        if not raw:
            return {}
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {"value": value}


@dataclass
class Timeline:
    """A trace: slices on lanes (process/thread/GPU stream), instants, counters, flows, memory.

    All `ts` columns are int64 ns relative to `origin_ns` (the absolute ns of the first event,
    including kineto's baseTimeNanoseconds), so no precision is lost to floats.
    """

    events: pd.DataFrame  # schema.EVENTS, sorted by (lane, ts, -dur)
    lanes: pd.DataFrame  # schema.LANES, in display order of `lane`
    instants: pd.DataFrame  # schema.INSTANTS
    counters: pd.DataFrame  # schema.COUNTERS
    flows: pd.DataFrame  # schema.FLOWS
    memory: pd.DataFrame  # schema.MEMORY_EVENTS
    args: ArgsStore = field(default_factory=ArgsStore)
    origin_ns: int = 0
    duration_ns: int = 0
    # Trace-level metadata: deviceProperties, distributedInfo, displayTimeUnit, schemaVersion, …
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_torch(self) -> bool:
        """True when the trace came from torch.profiler / kineto (decides the default views)."""
        return bool(self.meta.get("torch"))


@dataclass
class CallTree:
    """A merged call tree as struct-of-arrays. Node 0 is a synthetic root (frame -1).

    `frames` has columns name, file, line (one row per distinct function); `frame[i]` indexes it.
    `metrics` maps a metric name (`total_ns`, `self_ns`, `calls`, …) to a float64 array aligned
    with the nodes. `estimated` is True when the tree was reconstructed from caller/callee pairs
    (cProfile keeps no full stacks), so per-path numbers are apportioned, not measured.
    Children of a node are contiguous in `child_index[child_offsets[i]:child_offsets[i+1]]`.
    """

    parent: np.ndarray  # int32
    frame: np.ndarray  # int32
    frames: pd.DataFrame
    metrics: dict[str, np.ndarray]
    estimated: bool = False
    # What the view should tell the user about this tree (time it could not place, and why).
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.parent)

    @cached_property
    def _children(self) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.parent)
        par = self.parent[1:].astype(np.int64)
        order = np.argsort(par, kind="stable") + 1
        counts = np.bincount(par, minlength=n) if n else np.zeros(0, dtype=np.int64)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return offsets, order.astype(np.int64)

    def children(self, node: int) -> np.ndarray:
        offsets, index = self._children
        return index[offsets[node] : offsets[node + 1]]

    @cached_property
    def depth(self) -> np.ndarray:
        """Depth of every node (root = 0). Parents always precede children in node order."""
        depth = np.zeros(len(self.parent), dtype=np.int32)
        for i in range(1, len(self.parent)):
            depth[i] = depth[self.parent[i]] + 1
        return depth

    def name(self, node: int) -> str:
        f = int(self.frame[node])
        return "(root)" if f < 0 else str(self.frames["name"].iat[f])


@dataclass
class PstatsProfile:
    """cProfile output, kept exactly: per-function stats and the caller → callee edges."""

    functions: pd.DataFrame  # schema.FUNCTIONS; row index = function id
    edges: pd.DataFrame  # schema.EDGES
    total_ns: int = 0  # pstats' total_tt
    total_calls: int = 0
    primitive_calls: int = 0


@dataclass
class MemoryProfile:
    """mprof `.dat`: sampled memory over time; each appended run keeps its own `run` index."""

    samples: pd.DataFrame  # schema.SAMPLES (absolute unix ns)
    children: pd.DataFrame  # schema.CHILD_SAMPLES
    spans: pd.DataFrame  # schema.SPANS (FUNC lines)
    cmdlines: list[str] = field(default_factory=list)  # one per run


@dataclass(frozen=True)
class LineColumn:
    """A number column of a line report as the source view shows it: its header, the `lines`
    column it reads, and how it is drawn ("bytes", "increment": memory_profiler's heat-coloured
    growth, "count", "pct": a share heat-coloured by its size, "rate": bytes per second)."""

    header: str
    column: str
    kind: str


# memory_profiler's own columns, in its report's order
MEMORY_PROFILER_COLUMNS = (
    LineColumn("Mem usage", "mem_bytes", "bytes"),
    LineColumn("Increment", "increment_bytes", "increment"),
    LineColumn("Occurrences", "occurrences", "count"),
)


@dataclass
class LineReport:
    """A line-by-line report (memory_profiler's, Scalene's): one row per source line of each
    block (a profiled function, or a whole profiled file). `columns` are the numbers the source
    view shows for each line; `functions` is the report's own per-function table, when it
    has one (Scalene's)."""

    lines: pd.DataFrame  # schema.LINES, then the columns `columns` names that it lacks
    blocks: pd.DataFrame  # columns: block, report, file, function, first_line, n_lines
    columns: tuple[LineColumn, ...] = MEMORY_PROFILER_COLUMNS
    functions: pd.DataFrame | None = None
    block_kind: str = "Function"  # what a block is, for the view's chooser ("File" for Scalene)


@dataclass
class SampledProfile:
    """A sampling profiler's output (speedscope, collapsed stacks, pyinstrument).

    The merged tree lives in `Bundle.tree`; its `total_ns`/`self_ns` metrics hold the weight in
    `unit`: nanoseconds for time units, else bytes or plain sample counts ("samples"), and
    `calls` counts the samples through a node. `threads` has one row per profile or thread
    root (columns: thread, name, samples, weight).
    """

    unit: str  # "ns" | "bytes" | "samples"
    threads: pd.DataFrame
    source: str = ""  # the loader's NAME: speedscope, collapsed, pyinstrument


@dataclass
class Bundle:
    """Everything one file (or one job's folder of ranks) became. `format` names the loader
    that made it, or "job"."""

    format: Format
    path: Path
    timeline: Timeline | None = None
    profile: PstatsProfile | None = None
    tree: CallTree | None = None  # icicle tree (estimated for pstats, exact for traces)
    memory: MemoryProfile | None = None
    lines: LineReport | None = None
    sampled: SampledProfile | None = None
    counts: dict[str, int] = field(default_factory=dict)
    duration_ns: int = 0
    warnings: list[str] = field(default_factory=list)
    cuda_snapshot: CudaSnapshot | None = None  # torch.cuda.memory._dump_snapshot() pickles
    memray: MemrayCapture | None = None  # memray run captures
    job: Job | None = None  # a multi-rank job: its per-rank reductions, never its events
    logdir: LogDir | None = None  # a log directory: its runs, workers and spans

    @property
    def title(self) -> str:
        return self.path.name


__all__ = [
    "MEMORY_PROFILER_COLUMNS",
    "ArgsStore",
    "Bundle",
    "CallTree",
    "Format",
    "LineColumn",
    "LineReport",
    "MemoryProfile",
    "PstatsProfile",
    "SampledProfile",
    "Timeline",
    "schema",
]
