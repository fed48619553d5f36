"""What each document page shows, computed in one call that may run on a worker thread.

On a 1 GB trace the numbers behind a page cost far more than its widgets: the Kernels page's
per-launch rows take seconds (decoding every kernel's args), the Memory page's curves and
allocation table over a second, the Overview's step breakdown most of a second. Built inside a
widget's constructor, that work froze the window. Here it is split off: `prepare(name,
bundle, tables)` returns a plain data object (or None for pages that need nothing heavy), the
GUI runs it in a worker (`perfview.qt.tasks`) and hands the result to the page's widget, which
then only builds widgets. Everything here is pure (no Qt), so it is tested without a display.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import memory_alloc, op_kernels, overview, recommend
from perfview.core.analysis.torch.critical_path import idle_gaps, path
from perfview.core.analysis.torch.no_steps import NoStepsData
from perfview.core.analysis.torch.recommend import Finding
from perfview.core.model import Timeline
from perfview.core.pages.page import BarChart

# Columns of the allocation table the Memory page shows, in order.
ALLOC_COLUMNS = ["op", "alloc_ts_ns", "size_bytes", "lifetime_ns", "free_ts_ns", "device",
                 "freed", "addr"]  # fmt: skip


@dataclass(frozen=True)
class OverviewData:
    """Everything the Overview page shows, computed from a Timeline in one call."""

    devices: pd.DataFrame
    stats: overview.StepStats
    steps: pd.DataFrame
    utilization: pd.DataFrame
    findings: list[Finding] | None  # None: not looked for yet (`with_findings`)
    no_steps: NoStepsData | None = None  # the page's stand-in when the trace has no steps

    @classmethod
    def compute(cls, timeline: Timeline, *, findings: bool = True) -> OverviewData:
        """`findings=False` leaves out the recommendations: on a 1 GB trace they are most of
        the page's cost (~1 s), so a new tab shows the rest first (`with_findings` later)."""
        stats = overview.step_stats(timeline)
        return cls(
            overview.devices_table(timeline),
            stats,
            overview.steps_table(timeline),
            overview.utilization_table(timeline),
            recommend.recommendations(timeline) if findings else None,
            None if stats.count else NoStepsData.compute(timeline),
        )

    def with_findings(self, timeline: Timeline) -> OverviewData:
        """This data with its recommendations found (itself when they are there already)."""
        if self.findings is not None:
            return self
        return dataclasses.replace(self, findings=recommend.recommendations(timeline))


@dataclass(frozen=True)
class KernelsData:
    """The Kernels page: kernels by name, every launch, and which ops launched what."""

    table: pd.DataFrame
    rows: pd.DataFrame
    op_kernels: pd.DataFrame
    spread: pd.DataFrame  # the top kernels' duration percentiles (`kernels.duration_spread`)

    @classmethod
    def compute(cls, timeline: Timeline, table: pd.DataFrame | None = None) -> KernelsData:
        from perfview.core.analysis.torch import kernels

        frame = table if table is not None else kernels.kernels_table(timeline)
        rows = kernels.kernel_rows(timeline)
        spread = kernels.duration_spread(rows, top=KERNEL_SPREAD_TOP)
        return cls(frame, rows, op_kernels.op_kernels_table(timeline), spread)


KERNEL_SPREAD_TOP = 8
# The Kernels page's chart: each top kernel's launch durations as a percentile strip (a box
# plot laid flat: the p25-p75 box dark, the tails lighter), on a log axis.
KERNEL_SPREAD_CHART = BarChart(
    f"Launch durations of the {KERNEL_SPREAD_TOP} kernels with the most GPU time "
    "(min · p25 · median · p75 · p95 · max; log scale)",
    ("name",),
    (
        ("min_ns", "under min", "#00000000"),
        ("p25_ns", "min – p25", "#a0cbe8"),
        ("median_ns", "p25 – median", "#4e79a7"),
        ("p75_ns", "median – p75", "#2b5a86"),
        ("p95_ns", "p75 – p95", "#a0cbe8"),
        ("max_ns", "p95 – max", "#f28e2b"),
    ),
    rising=True,
    hover=("launches", "total_ns"),
    log=True,
)


@dataclass(frozen=True)
class LaunchDelaysData:
    """The Launch delays page: per-stream table, every launch's delay and their histogram,
    from one `launch_delays` pass (the table, the bars and the outliers agree by
    construction)."""

    table: pd.DataFrame
    rows: pd.DataFrame
    histogram: pd.DataFrame

    @classmethod
    def compute(cls, timeline: Timeline, table: pd.DataFrame | None = None) -> LaunchDelaysData:
        from perfview.core.analysis.torch import streams

        rows = streams.launch_delays(timeline)
        frame = table if table is not None else streams.launch_delay_table(timeline, rows)
        return cls(frame, rows, streams.delay_histogram(rows))


def longest_call(timeline: Timeline, name: str, shape: str | None = None) -> int:
    """Row of the longest cpu_op called `name` (and with input `shape`), -1 when none."""
    ev = timeline.events
    mask = (ev["kind"] == "cpu_op").to_numpy() & (ev["name"] == name).to_numpy()
    if shape is not None:
        mask &= (ev["shape"].astype(str) == shape).to_numpy()
    rows = np.flatnonzero(mask)
    if not len(rows):
        return -1
    return int(rows[int(np.argmax(ev["dur"].to_numpy()[rows]))])


def _any_text(column: pd.Series) -> bool:
    """True when some row of `column` holds non-empty text (a categorical: through its codes,
    not 240k strings made for the question)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        cats = np.asarray(column.cat.categories.astype(str), dtype=object) != ""
        codes = column.cat.codes.to_numpy()
        return bool(len(cats) and cats[codes[codes >= 0]].any())
    return bool((column.astype(str) != "").any())


@dataclass(frozen=True)
class OpDetail:
    """What the Operators page shows for one op: the GPU activities it launched (columns as
    `op_kernels.op_kernels_table`) and the call stack of its longest call."""

    name: str
    shape: str | None
    kernels: pd.DataFrame
    stack: list[str] | None  # None: no cpu_op of that name to take a stack from

    @classmethod
    def compute(cls, timeline: Timeline, name: str, shape: str | None = None) -> OpDetail:
        frame = op_kernels.op_kernels_table(timeline, name, shape)
        row = longest_call(timeline, name, shape)
        stack = op_kernels.call_stack(timeline, row) if row >= 0 else None
        return cls(name, shape, frame, stack)


@dataclass(frozen=True)
class OpsData:
    """The Operators page: the ops table, whether shapes were recorded, the empty kernels
    table's columns, and the detail of the op it opens on (most device self time)."""

    table: pd.DataFrame
    has_shapes: bool
    kernel_columns: pd.DataFrame  # no rows
    busiest: OpDetail | None

    @classmethod
    def compute(cls, timeline: Timeline, table: pd.DataFrame | None = None) -> OpsData:
        frame = table if table is not None else op_kernels.ops_table(timeline)
        empty = op_kernels.op_kernels_table(timeline, op="").iloc[:0].drop(columns="op")
        has_shapes = _any_text(timeline.events["shape"])
        busiest = None
        if len(frame) and float(frame["device_self_ns"].max()) > 0:
            best = int(np.argmax(frame["device_self_ns"].to_numpy()))
            busiest = OpDetail.compute(timeline, str(frame["name"].iloc[best]))
        return cls(frame, has_shapes, empty, busiest)


def display_allocations(allocs: pd.DataFrame) -> pd.DataFrame:
    """Allocation rows as shown: blanks (not -1) for unfreed blocks, freed as yes/no.

    Frees are paired by address; a row without one (2021 traces record no "Addr") says
    "not recorded" with a blank address: "no" would claim the block was never freed.
    """
    out = allocs.copy()
    freed = out["freed"].to_numpy(dtype=bool)
    known = out["addr"].to_numpy(dtype=np.int64) != 0
    for col in ("free_ts_ns", "lifetime_ns"):
        out[col] = out[col].astype("float64").where(freed)
    out["freed"] = np.where(freed, "yes", np.where(known, "no", "not recorded"))
    out["addr"] = out["addr"].astype("Int64").where(known)
    return out


@dataclass(frozen=True)
class MemoryData:
    """The torch Memory page: curves per device, their peaks, the allocations (raw and shown)."""

    curves: pd.DataFrame
    peaks: pd.DataFrame
    allocations: pd.DataFrame
    shown: pd.DataFrame  # `display_allocations(allocations)`: what the table starts with

    @classmethod
    def compute(cls, timeline: Timeline) -> MemoryData:
        allocations = memory_alloc.allocations_table(timeline)[ALLOC_COLUMNS]
        return cls(
            memory_alloc.memory_curves(timeline),
            memory_alloc.memory_peaks(timeline),
            allocations,
            display_allocations(allocations),
        )


__all__ = [
    "ALLOC_COLUMNS",
    "KERNEL_SPREAD_CHART",
    "KERNEL_SPREAD_TOP",
    "CriticalPathData",
    "KernelsData",
    "LaunchDelaysData",
    "MemoryData",
    "OpDetail",
    "OpsData",
    "OverviewData",
    "display_allocations",
    "longest_call",
]


@dataclass(frozen=True)
class CriticalPathData:
    """The Critical path page: per step the path's length and bound, its breakdown by
    category and name, and the GPU idle time by cause. `timeline` is kept for what-if replays,
    which the page runs in a worker as edits change."""

    steps: pd.DataFrame  # path.steps_table
    breakdown: pd.DataFrame  # path.critical_path_table
    idle: pd.DataFrame  # idle_gaps.cause_totals
    rows: dict[tuple[int, str, str], np.ndarray]  # breakdown row → its slices on the path
    path_rows: dict[int, np.ndarray]  # step → every slice its path is named after
    timeline: Timeline
    definition: str = path.DEFINITION

    @classmethod
    def compute(cls, timeline: Timeline) -> CriticalPathData:
        return cls(
            path.steps_table(timeline),
            path.critical_path_table(timeline),
            idle_gaps.cause_totals(timeline),
            path.contributors(timeline),
            path.rows_by_step(timeline),
            timeline,
        )
