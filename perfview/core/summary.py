"""View name → table: the one dispatch the CLI (`perfview summary --view`) and the GUI share.

`VIEWS` is a registry (a dict of `View` records), not an if/else chain: a new view (overview,
steps, ranks, …) is one more entry. Each view maps the bundle formats it understands to a
function of the bundle, and says when it has anything to show (`has_data`), so the GUI can hide
an empty Kernels tab while `summarize` still answers with an empty table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from perfview.core import aggregate, sampled, units
from perfview.core.errors import LoadError
from perfview.core.model import Bundle, LineReport, MemoryProfile, PstatsProfile, Timeline
from perfview.core.torch import kernels as torch_kernels
from perfview.core.torch import memory_alloc, op_kernels, overview, ranks, recommend
from perfview.core.torch.common import step_rows

TableFn = Callable[[Bundle], pd.DataFrame]
HasData = Callable[[Bundle], bool]

# How messages name each format ("FILE is a cProfile profile").
FORMAT_PHRASES: dict[str, str] = {
    "pstats": "a cProfile profile",
    "trace": "a trace",
    "mprof": "an mprof memory recording",
    "memprof_text": "a memory_profiler line report",
    "sampled": "a sampled profile",
}


class ViewError(LoadError):
    """The view does not exist or does not apply to this file; `str()` is one user sentence.

    A LoadError subclass so callers that already turn LoadError into "exit 2, one line" need
    nothing new.
    """


@dataclass(frozen=True)
class View:
    """One named table: how to build it per format, and whether a bundle has data for it."""

    name: str
    title: str
    description: str
    tables: Mapping[str, TableFn]
    has_data: HasData = field(default=lambda bundle: True)


def _timeline(bundle: Bundle) -> Timeline:
    if bundle.timeline is None:
        raise ViewError(f"{bundle.path} holds no trace timeline")
    return bundle.timeline


def _profile(bundle: Bundle) -> PstatsProfile:
    if bundle.profile is None:
        raise ViewError(f"{bundle.path} holds no cProfile statistics")
    return bundle.profile


def _memory(bundle: Bundle) -> MemoryProfile:
    if bundle.memory is None:
        raise ViewError(f"{bundle.path} holds no memory samples")
    return bundle.memory


def _lines(bundle: Bundle) -> LineReport:
    if bundle.lines is None:
        raise ViewError(f"{bundle.path} holds no line report")
    return bundle.lines


def _has_kind(kind: str) -> HasData:
    def check(bundle: Bundle) -> bool:
        tl = bundle.timeline
        return tl is not None and bool((tl.events["kind"] == kind).any())

    return check


def _has_memory(bundle: Bundle) -> bool:
    if bundle.format == "trace":
        return bundle.timeline is not None and len(bundle.timeline.memory) > 0
    return True


def _is_torch(bundle: Bundle) -> bool:
    return bundle.timeline is not None and bundle.timeline.is_torch


def _has_steps(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(step_rows(bundle.timeline)) > 0


def _has_gpu(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and bool(tl.events["kind"].isin(["kernel", "memcpy", "memset"]).any())


def _has_shapes(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and bool((tl.events["shape"].astype(str) != "").any())


VIEWS: dict[str, View] = {
    view.name: view
    for view in (
        View(
            "functions",
            "Functions",
            "per function: calls and times (pstats); per function memory (line reports); "
            "self and total weight per frame (sampled profiles)",
            {
                "pstats": lambda b: aggregate.functions_table(_profile(b)),
                "memprof_text": lambda b: aggregate.line_functions_table(_lines(b)),
                "sampled": sampled.bundle_functions,
            },
        ),
        View(
            "callers",
            "Callers",
            "every caller → callee edge with exact pstats numbers",
            {"pstats": lambda b: aggregate.callers_table(_profile(b))},
        ),
        View(
            "overview",
            "Overview",
            "torch trace overview: GPUs, step times, step breakdown, GPU utilisation",
            {"trace": lambda b: overview.overview_table(_timeline(b))},
            has_data=_is_torch,
        ),
        View(
            "steps",
            "Steps",
            "ProfilerStep durations with the per-step time breakdown",
            {"trace": lambda b: overview.steps_table(_timeline(b))},
            has_data=_has_steps,
        ),
        View(
            "utilization",
            "GPU utilization",
            "per device and stream: busy, compute, communication, memory and idle time",
            {"trace": lambda b: overview.utilization_table(_timeline(b))},
            has_data=_has_gpu,
        ),
        View(
            "ops",
            "Ops",
            "operators (or slices) by name: calls, self and total time",
            {"trace": lambda b: aggregate.ops_table(_timeline(b))},
        ),
        View(
            "operators",
            "Operators",
            "torch operators by name: calls, host and device (GPU) self/total time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b))},
            has_data=_has_kind("cpu_op"),
        ),
        View(
            "operators-by-shape",
            "Operators by shape",
            "torch operators by name and input shape, host and device time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
        ),
        View(
            "op-kernels",
            "Op → kernels",
            "GPU kernels/copies grouped by the operator that launched them",
            {"trace": lambda b: op_kernels.op_kernels_table(_timeline(b))},
            has_data=_has_gpu,
        ),
        View(
            "ops-by-shape",
            "Ops by shape",
            "operators by name and input shapes",
            {"trace": lambda b: aggregate.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
        ),
        View(
            "kernels",
            "Kernels",
            "GPU kernels by name, with launch configuration, occupancy and tensor-core use",
            {"trace": lambda b: torch_kernels.kernels_table(_timeline(b))},
            has_data=_has_kind("kernel"),
        ),
        View(
            "lanes",
            "Lanes",
            "threads and GPU streams: events, busy time, depth",
            {"trace": lambda b: aggregate.lanes_table(_timeline(b))},
        ),
        View(
            "memory",
            "Memory",
            "per run peak and final memory (mprof); per device allocations (torch traces)",
            {
                "mprof": lambda b: aggregate.memory_table(_memory(b)),
                "trace": lambda b: aggregate.trace_memory_table(_timeline(b)),
            },
            has_data=_has_memory,
        ),
        View(
            "allocations",
            "Allocations",
            "torch memory allocations paired with their frees (op, size, lifetime)",
            {"trace": lambda b: memory_alloc.allocations_table(_timeline(b))},
            has_data=_has_memory,
        ),
        View(
            "ranks",
            "Ranks",
            "step times per rank (a folder of per-rank traces; one row for a single file)",
            {"trace": ranks.single_rank_table},
            has_data=_is_torch,
        ),
        View(
            "recommendations",
            "Recommendations",
            "findings with evidence: GPU utilisation, data loading, launches, copies, precision",
            {"trace": lambda b: recommend.recommendations_table(_timeline(b))},
            has_data=_is_torch,
        ),
        View(
            "lines",
            "Lines",
            "memory_profiler lines, biggest increment first",
            {"memprof_text": lambda b: aggregate.lines_table(_lines(b))},
        ),
        View(
            "samples",
            "Samples",
            "raw mprof memory samples",
            {"mprof": lambda b: aggregate.samples_table(_memory(b))},
        ),
        View(
            "threads",
            "Threads",
            "profiles or thread roots of a sampled profile: samples and weight",
            {"sampled": lambda b: sampled.threads_table(sampled.sampled(b))},
        ),
    )
}

# The most useful first view per format (a trace without cpu_op falls back to slices by name).
DEFAULT_VIEWS: dict[str, str] = {
    "pstats": "functions",
    "trace": "ops",
    "mprof": "memory",
    "memprof_text": "lines",
    "sampled": "functions",
}


def default_view(bundle: Bundle) -> str:
    """The view to show first for this bundle's format."""
    return DEFAULT_VIEWS.get(bundle.format, next(iter(available_views(bundle)), "ops"))


def applicable_views(bundle: Bundle) -> list[str]:
    """Every view that understands this bundle's format, in registry order (data or not)."""
    return [name for name, view in VIEWS.items() if bundle.format in view.tables]


def available_views(bundle: Bundle) -> list[str]:
    """The views worth showing for this bundle: its format fits and there is data for them."""
    return [name for name in applicable_views(bundle) if VIEWS[name].has_data(bundle)]


def summarize(bundle: Bundle, view: str | None = None) -> pd.DataFrame:
    """The table for `view` (default: `default_view(bundle)`); ViewError when it does not apply."""
    name = view or default_view(bundle)
    spec = VIEWS.get(name)
    if spec is None:
        known = ", ".join(VIEWS)
        raise ViewError(f"there is no view {name!r} (views: {known})")
    table = spec.tables.get(bundle.format)
    if table is None:
        needs = " or ".join(FORMAT_PHRASES.get(f, f) for f in spec.tables)
        what = FORMAT_PHRASES.get(bundle.format, f"a {bundle.format} file")
        fits = ", ".join(applicable_views(bundle)) or "none"
        raise ViewError(f"view {name!r} needs {needs}; {bundle.path} is {what} (its views: {fits})")
    return table(bundle)


# Re-exported: the CLI's table output reads units through the summary module.
column_unit = units.column_unit


__all__ = [
    "DEFAULT_VIEWS",
    "FORMAT_PHRASES",
    "VIEWS",
    "View",
    "ViewError",
    "applicable_views",
    "available_views",
    "column_unit",
    "default_view",
    "summarize",
]
