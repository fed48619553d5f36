"""The entries of the page registry: every page perfview has (`PAGES`) and every kind of
document with its tabs (`KINDS`). Adding a page is one `Page` here plus a `Tab` in the kinds that
show it; see docs/architecture.md."""

from __future__ import annotations

from typing import Any

from perfview.core.analysis import aggregate, cuda_memory_views, memray_views, sampled, tree_table
from perfview.core.analysis.torch import kernels as torch_kernels
from perfview.core.analysis.torch import (
    memory_alloc,
    modules,
    op_kernels,
    overview,
    ranks,
    recommend,
    streams,
)
from perfview.core.analysis.torch.common import comm_kernel_mask, step_rows
from perfview.core.analysis.torch.overview_table import overview_table
from perfview.core.model import Bundle, LineReport, MemoryProfile, PstatsProfile, Timeline
from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.memray_model import MemrayCapture
from perfview.core.pages import data as page_data
from perfview.core.pages.page import HasData, Kind, Page, Tab, Tables, ViewError


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


def _snapshot(bundle: Bundle) -> CudaSnapshot:
    if bundle.cuda_snapshot is None:
        raise ViewError(f"{bundle.path} holds no CUDA memory snapshot")
    return bundle.cuda_snapshot


def _memray(bundle: Bundle) -> MemrayCapture:
    if bundle.memray is None:
        raise ViewError(f"{bundle.path} holds no memray capture")
    return bundle.memray


def _has_history(bundle: Bundle) -> bool:
    return bundle.cuda_snapshot is None or len(bundle.cuda_snapshot.trace) > 0


def _has_oom(bundle: Bundle) -> bool:
    return bundle.cuda_snapshot is not None and cuda_memory_views.has_oom(bundle.cuda_snapshot)


def _has_kind(kind: str) -> HasData:
    def check(bundle: Bundle) -> bool:
        tl = bundle.timeline
        return tl is not None and bool((tl.events["kind"] == kind).any())

    return check


def _has_memory(bundle: Bundle) -> bool:
    if bundle.format in ("cuda_snapshot", "memray"):
        return True
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


def _has_tree(bundle: Bundle) -> bool:
    return bundle.profile is not None or (
        bundle.timeline is not None and len(bundle.timeline.events) > 0
    )


def _has_modules(bundle: Bundle) -> bool:
    return bundle.timeline is not None and modules.has_modules(bundle.timeline)


def _has_comm(bundle: Bundle) -> bool:
    return bundle.timeline is not None and bool(comm_kernel_mask(bundle.timeline.events).any())


def _has_shapes(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and bool((tl.events["shape"].astype(str) != "").any())


def _timeline_data(bundle: Bundle, _tables: Tables) -> Any:
    from perfview.core.layout.timeline_layout import prepare_timeline

    assert bundle.timeline is not None
    return prepare_timeline(bundle.timeline)


def _has_events(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(bundle.timeline.events) > 0


def _has_torch_memory(bundle: Bundle) -> bool:
    return _is_torch(bundle) and _has_memory(bundle)


def _torch_timeline(bundle: Bundle) -> Timeline:
    assert bundle.timeline is not None
    return bundle.timeline


PAGES: dict[str, Page] = {
    page.name: page
    for page in (
        Page(
            "functions",
            "Functions",
            "per function: calls and times (pstats); per function memory (line reports); "
            "self and total weight per frame (sampled profiles)",
            {
                "pstats": lambda b: aggregate.functions_table(_profile(b)),
                "memprof_text": lambda b: aggregate.line_functions_table(_lines(b)),
                "sampled": sampled.bundle_functions,
            },
            widget="functions",
        ),
        Page(
            "callers",
            "Callers",
            "every caller → callee edge with exact pstats numbers",
            {"pstats": lambda b: aggregate.callers_table(_profile(b))},
            widget="callers",
        ),
        Page(
            "overview",
            "Overview",
            "torch trace overview: GPUs, step times, step breakdown, GPU utilisation",
            {"trace": lambda b: overview_table(_timeline(b))},
            has_data=_is_torch,
            widget="overview",
            prepare=lambda b, _t: page_data.OverviewData.compute(_torch_timeline(b)),
            prepare_when=_is_torch,
        ),
        Page(
            "steps",
            "Steps",
            "ProfilerStep durations with the per-step time breakdown",
            {"trace": lambda b: overview.steps_table(_timeline(b))},
            has_data=_has_steps,
            widget=None,
        ),
        Page(
            "utilization",
            "GPU utilization",
            "per device and stream: busy, compute, communication, memory and idle time",
            {"trace": lambda b: overview.utilization_table(_timeline(b))},
            has_data=_has_gpu,
            widget=None,
        ),
        Page(
            "ops",
            "Ops",
            "operators (or slices) by name: calls, self and total time",
            {"trace": lambda b: aggregate.ops_table(_timeline(b))},
        ),
        Page(
            "operators",
            "Operators",
            "torch operators by name: calls, host and device (GPU) self/total time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b))},
            has_data=_has_kind("cpu_op"),
            widget="operators",
            prepare=lambda b, t: page_data.OpsData.compute(_torch_timeline(b), t.get("operators")),
            prepare_when=_is_torch,
        ),
        Page(
            "operators-by-shape",
            "Operators by shape",
            "torch operators by name and input shape, host and device time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
            widget=None,
        ),
        Page(
            "op-kernels",
            "Op → kernels",
            "GPU kernels/copies grouped by the operator that launched them",
            {"trace": lambda b: op_kernels.op_kernels_table(_timeline(b))},
            has_data=_has_gpu,
            widget=None,
        ),
        Page(
            "ops-by-shape",
            "Ops by shape",
            "operators by name and input shapes",
            {"trace": lambda b: aggregate.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
        ),
        Page(
            "kernels",
            "Kernels",
            "GPU kernels by name, with launch configuration, occupancy and tensor-core use",
            {"trace": lambda b: torch_kernels.kernels_table(_timeline(b))},
            has_data=_has_kind("kernel"),
            widget="kernels",
            prepare=lambda b, t: page_data.KernelsData.compute(
                _torch_timeline(b), t.get("kernels")
            ),
            prepare_when=_is_torch,
        ),
        Page(
            "lanes",
            "Lanes",
            "threads and GPU streams: events, busy time, depth",
            {"trace": lambda b: aggregate.lanes_table(_timeline(b))},
        ),
        Page(
            "memory",
            "Memory",
            "per run peak and final memory (mprof); per device allocations (torch traces)",
            {
                "mprof": lambda b: aggregate.memory_table(_memory(b)),
                "trace": lambda b: aggregate.trace_memory_table(_timeline(b)),
            },
            has_data=_has_memory,
            widget="memory",
            prepare=lambda b, _t: page_data.MemoryData.compute(_torch_timeline(b)),
            prepare_when=_has_torch_memory,
        ),
        Page(
            "allocations",
            "Allocations",
            "torch trace allocations with their frees; live CUDA blocks; memray sites at peak",
            {
                "trace": lambda b: memory_alloc.allocations_table(_timeline(b)),
                "cuda_snapshot": lambda b: cuda_memory_views.allocations_table(_snapshot(b)),
                "memray": lambda b: memray_views.allocations_table(_memray(b)),
            },
            has_data=_has_memory,
            widget=None,
        ),
        Page(
            "segments",
            "Segments",
            "CUDA allocator segments: reserved, used and free bytes, fragmentation",
            {"cuda_snapshot": lambda b: cuda_memory_views.segments_table(_snapshot(b))},
            widget="segments",
        ),
        Page(
            "leaks",
            "Leaks",
            "memray: allocation sites never freed before tracking stopped",
            {"memray": lambda b: memray_views.leaks_table(_memray(b))},
            widget="leaks",
        ),
        Page(
            "oom",
            "Out of memory",
            "the allocation events that led to each out-of-memory error",
            {"cuda_snapshot": lambda b: cuda_memory_views.oom_table(_snapshot(b))},
            has_data=_has_oom,
            widget=None,
        ),
        Page(
            "ranks",
            "Ranks",
            "step times per rank (a folder of per-rank traces; one row for a single file)",
            {"trace": ranks.single_rank_table},
            has_data=_is_torch,
            widget=None,
        ),
        Page(
            "recommendations",
            "Recommendations",
            "findings with evidence: GPU utilisation, data loading, launches, copies, precision",
            {"trace": lambda b: recommend.recommendations_table(_timeline(b))},
            has_data=_is_torch,
            widget="recommendations",
            prepare=lambda b, _t: recommend.recommendations(_torch_timeline(b)),
            prepare_when=_is_torch,
        ),
        Page(
            "modules",
            "Modules",
            "per nn.Module (with_stack/with_modules traces): calls, forward and backward time",
            {"trace": lambda b: modules.modules_table(_timeline(b))},
            has_data=_has_modules,
        ),
        Page(
            "overlap",
            "Comm/compute overlap",
            "per rank and stream: collective time, compute time, how much of it overlapped",
            {"trace": lambda b: streams.overlap_table(_timeline(b))},
            has_data=_has_comm,
        ),
        Page(
            "idle",
            "GPU idle time",
            "per GPU stream: idle waiting on the host (nothing queued), on other work, other",
            {"trace": lambda b: streams.idle_table(_timeline(b))},
            has_data=_has_gpu,
        ),
        Page(
            "launch-delays",
            "Launch delays",
            "per GPU stream: launch → start delay of kernels and copies, with outliers",
            {"trace": lambda b: streams.launch_delay_table(_timeline(b))},
            has_data=_has_gpu,
        ),
        Page(
            "lines",
            "Lines",
            "memory_profiler lines, biggest increment first",
            {"memprof_text": lambda b: aggregate.lines_table(_lines(b))},
            widget="lines",
        ),
        Page(
            "samples",
            "Samples",
            "raw mprof memory samples",
            {"mprof": lambda b: aggregate.samples_table(_memory(b))},
        ),
        Page(
            "timeline",
            "Timeline",
            "slices over time (traces); memory over time: CUDA snapshot history, memray snapshots",
            {
                "cuda_snapshot": lambda b: cuda_memory_views.timeline_table(_snapshot(b)),
                "memray": lambda b: memray_views.timeline_table(_memray(b)),
            },
            has_data=_has_history,
            shown_when=_has_events,
            widget="timeline",
            prepare=_timeline_data,
            prepare_when=_has_events,
        ),
        Page("query", "Query", "SQL over the file's tables (DuckDB)", widget="query"),
        Page(
            "bottom-up",
            "Bottom-up",
            "the inverted flame graph: hottest frames on top",
            widget="bottom-up",
        ),
        Page(
            "sandwich",
            "Sandwich",
            "a function's callers above it, its callees below",
            widget="sandwich",
        ),
        Page(
            "threads",
            "Threads",
            "profiles or thread roots of a sampled profile: samples and weight",
            {"sampled": lambda b: sampled.threads_table(sampled.sampled(b))},
        ),
        Page(
            "icicle",
            "Icicle",
            "the merged call tree in pre-order: depth, name, file, total, self, calls "
            "(traces: --lanes cpu|gpu|all|LANE)",
            {"pstats": tree_table.icicle_table, "trace": tree_table.icicle_table},
            has_data=_has_tree,
            widget="icicle",
        ),
        Page(
            "tree",
            "Call tree",
            "the same as icicle, shown as an expandable tree",
            {"pstats": tree_table.icicle_table, "trace": tree_table.icicle_table},
            has_data=_has_tree,
            widget="tree",
        ),
    )
}


def _format(name: str) -> HasData:
    return lambda bundle: bundle.format == name


_CALLERS = Tab("callers", "Callers/Callees")
_QUERY = Tab("query")  # every kind of file can be asked SQL questions
_FLAME = (Tab("bottom-up"), Tab("sandwich"))  # beside every icicle
KINDS: tuple[Kind, ...] = (
    Kind(
        "pstats",
        _format("pstats"),
        (
            Tab("icicle"),
            *_FLAME,
            Tab("functions", table=True),
            Tab("callers", "Callers/Callees", True),
            Tab("tree"),
            _QUERY,
        ),
    ),
    Kind(
        "torch",
        lambda b: b.format == "trace" and _is_torch(b),
        (
            Tab("overview"),
            Tab("timeline"),
            Tab("operators", table=True),
            Tab("kernels", table=True),
            Tab("memory"),
            Tab("recommendations"),
            Tab("modules", table=True),
            Tab("idle", "GPU idle", True),
            Tab("overlap", "Comm overlap", True),
            Tab("launch-delays", table=True),
            Tab("icicle"),
            *_FLAME,
            Tab("ops", "Ops (host)", True),
            Tab("lanes", table=True),
            _CALLERS,
            Tab("tree"),
            _QUERY,
        ),
    ),
    Kind(
        "trace",
        _format("trace"),
        (
            Tab("timeline"),
            Tab("icicle"),
            *_FLAME,
            Tab("ops", table=True),
            Tab("ops-by-shape", table=True),
            Tab("kernels", table=True),
            Tab("lanes", table=True),
            Tab("memory", table=True),
            _CALLERS,
            Tab("tree"),
            _QUERY,
        ),
    ),
    Kind(
        "mprof",
        _format("mprof"),
        (Tab("memory", table=True), Tab("samples", table=True), _QUERY),
    ),
    Kind(
        "cuda_snapshot",
        _format("cuda_snapshot"),
        (
            Tab("timeline"),
            Tab("segments"),
            Tab("allocations", table=True),
            Tab("oom", table=True),
            Tab("icicle", "Flame graph (live bytes)"),
            *_FLAME,
            _QUERY,
        ),
    ),
    Kind(
        "memray",
        _format("memray"),
        (
            Tab("icicle", "Flame graph (peak)"),
            *_FLAME,
            Tab("timeline", "Memory over time"),
            Tab("allocations", "Allocations at peak", True),
            Tab("leaks", table=True),
            _QUERY,
        ),
    ),
    Kind(
        "sampled",
        _format("sampled"),
        (
            Tab("icicle"),
            Tab("bottom-up"),
            Tab("functions", table=True),
            Tab("sandwich"),
            _CALLERS,
            Tab("tree"),
            Tab("threads", table=True),
            Tab("timeline"),
            _QUERY,
        ),
    ),
    Kind(
        "memprof_text",
        _format("memprof_text"),
        (Tab("lines"), Tab("functions", table=True), _QUERY),
    ),
)


__all__ = ["KINDS", "PAGES"]
