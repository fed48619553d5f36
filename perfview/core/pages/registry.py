"""The pages of the page registry: every page perfview has (`PAGES`), declared once. Which of
them each kind of document shows, in which order, is in `kinds.py`. Adding a page is one `Page`
here plus a `Tab` in the kinds that show it; see docs/architecture.md. The predicates and
accessors the entries use are in `predicates.py`."""

from __future__ import annotations

import importlib
from types import ModuleType

from perfview.core.analysis import (
    aggregate,
    cuda_memory_views,
    memray_views,
    sampled,
    scalene_tables,
    tree_table,
)
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
from perfview.core.analysis.torch.overview_table import overview_table
from perfview.core.model.logdir import RUNS_COLUMNS
from perfview.core.pages import predicates as pred
from perfview.core.pages.page import BarChart, Page


def _torch(module: str) -> ModuleType:
    """A torch analysis module, imported when a page's table is asked for rather than with the
    registry: the window imports the registry as it starts, and the job and critical-path
    modules cost it ~25 ms there (`bench_gui_probe.py --startup`)."""
    return importlib.import_module(f"perfview.core.analysis.torch.{module}")


# one colour per meaning across the charts: GPU work blue, the host's fault red, waiting on
# other GPU work orange, unexplained grey, communication purple
_BUSY, _HOST, _WAIT, _OTHER, _COMM = "#4e79a7", "#e15759", "#f28e2b", "#bab0ac", "#b07aa1"
_IDLE_CHART = BarChart(
    "Each stream's analysis window: busy, and idle by cause",
    ("device", "stream"),
    (
        ("busy_ns", "busy", _BUSY),
        ("host_wait_ns", "host wait", _HOST),
        ("kernel_wait_ns", "kernel wait", _WAIT),
        ("other_ns", "other", _OTHER),
    ),
)
_OVERLAP_CHART = BarChart(
    "Communication time: hidden under compute, or exposed",
    ("rank", "stream"),
    (("overlapped_ns", "overlapped with compute", _BUSY),),
    rest=("comm_ns", "exposed communication", _COMM),
)
_JOB_OVERLAP_CHART = BarChart(
    "Communication time per rank: hidden under compute, or exposed",
    ("rank",),
    (("overlap_ns", "overlapped with compute", _BUSY), ("exposed_comm_ns", "exposed", _COMM)),
)
_COLLECTIVES_CHART = BarChart(
    "Per collective instance: arrival skew, then transfer (hover: bandwidth)",
    ("kind", "at_ns"),
    (("arrival_skew_ns", "arrival skew", _WAIT), ("transfer_ns", "transfer", _COMM)),
    hover=("bytes", "algbw_gbps", "busbw_gbps", "last_rank"),
)
PAGES: dict[str, Page] = {
    page.name: page
    for page in (
        Page(
            "functions",
            "Functions",
            "per function: calls and times (pstats); per function memory (line reports); "
            "self and total weight per frame (sampled profiles)",
            {
                "pstats": lambda b: aggregate.functions_table(pred.profile(b)),
                "memprof_text": lambda b: aggregate.line_functions_table(pred.lines(b)),
                "scalene": lambda b: scalene_tables.functions_table(pred.lines(b)),
                "sampled": sampled.bundle_functions,
            },
            widget="functions",
        ),
        Page(
            "callers",
            "Callers",
            "every caller → callee edge with exact pstats numbers",
            {"pstats": lambda b: aggregate.callers_table(pred.profile(b))},
            widget="callers",
            needs_tree=True,
            per_thread=True,
            group="Flame graphs",
        ),
        Page(
            "overview",
            "Overview",
            "torch trace overview: GPUs, step times, step breakdown, GPU utilisation",
            {"trace": lambda b: overview_table(pred.timeline(b))},
            has_data=pred.is_torch,
            widget="overview",
            prepare=pred.overview_data,
            prepare_when=pred.is_torch,
            prepare_first=pred.overview_first,
            derives=pred.overview_derives,
            stored="overview",
            group="Overview",
        ),
        Page(
            "steps",
            "Steps",
            "ProfilerStep durations with the per-step time breakdown",
            {"trace": lambda b: overview.steps_table(pred.timeline(b))},
            has_data=pred.has_steps,
            widget=None,
        ),
        Page(
            "utilization",
            "GPU utilization",
            "per device and stream: busy, compute, communication, memory and idle time",
            {"trace": lambda b: overview.utilization_table(pred.timeline(b))},
            has_data=pred.has_gpu,
            widget=None,
            definition=overview.UTILIZATION_DEFINITION,
        ),
        Page(
            "ops",
            "Ops",
            "operators (or slices) by name: calls, self and total time",
            {"trace": lambda b: aggregate.ops_table(pred.timeline(b))},
            group="Operators",
        ),
        Page(
            "operators",
            "Operators",
            "torch operators by name: calls, host and device (GPU) self/total time",
            {"trace": lambda b: op_kernels.ops_table(pred.timeline(b))},
            has_data=pred.has_kind("cpu_op"),
            widget="operators",
            prepare=pred.ops_data,
            prepare_when=pred.is_torch,
            group="Operators",
        ),
        Page(
            "operators-by-shape",
            "Operators by shape",
            "torch operators by name and input shape, host and device time",
            {"trace": lambda b: op_kernels.ops_table(pred.timeline(b), by_shape=True)},
            has_data=pred.has_shapes,
            widget=None,
        ),
        Page(
            "op-kernels",
            "Op → kernels",
            "GPU kernels/copies grouped by the operator that launched them",
            {"trace": lambda b: op_kernels.op_kernels_table(pred.timeline(b))},
            has_data=pred.has_gpu,
            widget=None,
        ),
        Page(
            "ops-by-shape",
            "Ops by shape",
            "operators by name and input shapes",
            {"trace": lambda b: aggregate.ops_table(pred.timeline(b), by_shape=True)},
            has_data=pred.has_shapes,
            group="Operators",
        ),
        Page(
            "kernels",
            "Kernels",
            "GPU kernels by name, with launch configuration, occupancy and tensor-core use",
            {"trace": lambda b: torch_kernels.kernels_table(pred.timeline(b))},
            has_data=pred.has_kind("kernel"),
            widget="kernels",
            definition=torch_kernels.KERNELS_DEFINITION,
            prepare=pred.kernels_data,
            prepare_when=pred.is_torch,
        ),
        Page(
            "lanes",
            "Lanes",
            "threads and GPU streams: events, busy time, depth",
            {"trace": lambda b: aggregate.lanes_table(pred.timeline(b))},
            group="Timeline",
        ),
        Page(
            "memory",
            "Memory",
            "per run peak and final memory (mprof); per device allocations (torch traces)",
            {
                "mprof": lambda b: aggregate.memory_table(pred.memory(b)),
                "trace": lambda b: aggregate.trace_memory_table(pred.timeline(b)),
            },
            has_data=pred.has_memory,
            widget="memory",
            prepare=pred.memory_data,
            prepare_when=pred.has_torch_memory,
        ),
        Page(
            "allocations",
            "Allocations",
            "torch trace allocations with their frees; live CUDA blocks; memray sites at peak",
            {
                "trace": lambda b: memory_alloc.allocations_table(pred.timeline(b)),
                "cuda_snapshot": lambda b: cuda_memory_views.allocations_table(pred.snapshot(b)),
                "memray": lambda b: memray_views.allocations_table(pred.memray(b)),
            },
            has_data=pred.has_memory,
            widget=None,
        ),
        Page(
            "segments",
            "Segments",
            "CUDA allocator segments: reserved, used and free bytes, fragmentation",
            {"cuda_snapshot": lambda b: cuda_memory_views.segments_table(pred.snapshot(b))},
            widget="segments",
            definitions=cuda_memory_views.SEGMENT_DEFINITIONS,
        ),
        Page(
            "leaks",
            "Leaks",
            "memray: allocation sites never freed before tracking stopped",
            {"memray": lambda b: memray_views.leaks_table(pred.memray(b))},
            widget="leaks",
        ),
        Page(
            "oom",
            "Out of memory",
            "the allocation events that led to each out-of-memory error",
            {"cuda_snapshot": lambda b: cuda_memory_views.oom_table(pred.snapshot(b))},
            has_data=pred.has_oom,
            widget=None,
        ),
        Page(
            "ranks",
            "Ranks",
            "per rank: steps, step time, GPU busy split, collectives, overlap (a folder of "
            "per-rank traces; one row for a single file)",
            {
                "trace": ranks.single_rank_table,
                "job": lambda b: _torch("job_views").ranks_table(pred.job(b)),
            },
            has_data=pred.any_of(pred.is_torch, pred.is_job),
        ),
        Page(
            "collectives",
            "Collectives",
            "every collective matched across ranks: skew, wait, bandwidth",
            {"job": lambda b: _torch("job_views").collectives_table(pred.job(b))},
            across_ranks=True,
            charts={"job": _COLLECTIVES_CHART},
            definitions={
                "at": "when the instance's first rank arrived, since the job's first collective",
                "arrival skew": "last rank's arrival − first rank's: how unevenly the ranks "
                "reached the call",
                "wait": "mean over ranks of (last arrival − own arrival): time kernels sat "
                "waiting for peers",
                "transfer": "median over ranks of (own end − last arrival): the part that "
                "moved data",
                "busbw": "bytes / transfer × nccl-tests' factor of the kind and group size "
                "(all-reduce 2(n−1)/n): comparable with the link's bandwidth",
            },
        ),
        Page(
            "collective-kinds",
            "Collective kinds",
            "collectives per process group and kind",
            {"job": lambda b: _torch("job_views").kinds_table(pred.job(b))},
            across_ranks=True,
        ),
        Page(
            "recommendations",
            "Recommendations",
            "findings with evidence: GPU utilisation, data loading, launches, copies, precision",
            {"trace": lambda b: recommend.recommendations_table(pred.timeline(b))},
            has_data=pred.is_torch,
            widget="recommendations",
            prepare=pred.recommendations_data,
            prepare_when=pred.is_torch,
            group="Overview",
        ),
        Page(
            "modules",
            "Modules",
            "per nn.Module (with_stack/with_modules traces): calls, forward and backward time",
            {"trace": lambda b: modules.modules_table(pred.timeline(b))},
            has_data=pred.has_modules,
            group="Operators",
        ),
        Page(
            "overlap",
            "Comm/compute overlap",
            "per rank (and stream, in one trace's window): collective time, compute time, "
            "how much of it overlapped",
            {
                "trace": lambda b: streams.overlap_table(pred.timeline(b)),
                "job": lambda b: _torch("job_views").overlap_table(pred.job(b)),
            },
            has_data=pred.any_of(pred.has_comm, pred.is_job),
            across_ranks=True,
            definition=streams.OVERLAP_DEFINITION,
            group="GPU",
            charts={"trace": _OVERLAP_CHART, "job": _JOB_OVERLAP_CHART},
            definitions={
                "comm": "time the stream's collective (communication) kernels ran, overlaps "
                "counted once",
                "compute": "time the device's other kernels ran, on any stream",
                "overlap %": "the share of communication time during which compute kernels "
                "ran too; the rest is exposed communication the step waits for",
            },
        ),
        Page(
            "stragglers",
            "Stragglers",
            "per rank, worst first: how often and how late it arrived",
            {"job": lambda b: _torch("job_views").stragglers_table(pred.job(b))},
            across_ranks=True,
        ),
        Page(
            "runs",
            "Runs",
            "a profile log directory: per run, worker and span (one schedule cycle's file) "
            "its start, steps and mean step time",
            {"logdir": lambda b: pred.logdir(b).table[list(RUNS_COLUMNS)]},
            widget=None,
        ),
        Page(
            "heatmap",
            "Heat map",
            "rank × step: lateness at the step's collectives, and step time",
            widget="rank-heatmap",
        ),
        Page(
            "job-timeline",
            "Timeline",
            "every rank's collectives on the job's one time axis",
            widget="job-timeline",
        ),
        Page(
            "idle",
            "GPU idle time",
            "per GPU stream: idle waiting on the host (nothing queued), on other work, other",
            {"trace": lambda b: streams.idle_table(pred.timeline(b))},
            has_data=pred.has_gpu,
            definition=streams.IDLE_DEFINITION,
            group="GPU",
            charts={"trace": _IDLE_CHART},
            definitions={
                "host wait": "idle with nothing queued: the gap before the next kernel's "
                "launch call, when the GPU waited for the CPU",
                "kernel wait": "idle with the next kernel already launched: it waited on "
                "other kernels, events or synchronisation",
                "other": "gaps whose next activity has no launch call, and the tail after the "
                "stream's last activity",
                "idle %": "idle time (host wait + kernel wait + other) over the analysis "
                "window (the profiler steps, else the whole trace)",
            },
        ),
        Page(
            "critical-path",
            "Critical path",
            "per step: the chain of dependencies that bounds it, its time by category and name",
            {
                "trace": lambda b: _torch("critical_path.path").critical_path_table(
                    pred.timeline(b)
                ),
                "job": lambda b: _torch("job_views").critical_path_table(pred.job(b)),
            },
            has_data=pred.any_of(pred.is_torch, pred.is_job),
            widget="critical-path",
            prepare=pred.critical_path_data,
            prepare_when=pred.is_torch,
            group="GPU",
        ),
        Page(
            "critical-path-steps",
            "Critical path per step",
            "per step: its time, its critical path's length and the category bounding it",
            {
                "trace": lambda b: _torch("critical_path.path").steps_table(pred.timeline(b)),
                "job": lambda b: _torch("job_views").critical_steps_table(pred.job(b)),
            },
            has_data=pred.any_of(pred.is_torch, pred.is_job),
            widget=None,
        ),
        Page(
            "idle-gaps",
            "GPU idle gaps",
            "per step and GPU stream: idle time by cause (CPU op, launch latency, sync drain, "
            "data loader, collective, another stream)",
            {
                "trace": lambda b: _torch("critical_path.idle_gaps").idle_gaps_table(
                    pred.timeline(b)
                )
            },
            has_data=pred.has_gpu,
            group="GPU",
        ),
        Page(
            "what-if",
            "What if",
            "per step: measured and predicted time after --edit changes (a replay of the "
            "dependency graph; on a job, across ranks, with the rank bounding it)",
            {
                "trace": lambda b: _torch("critical_path.what_if").what_if_table(
                    pred.timeline(b), ()
                ),
                "job": lambda b: pred.what_if_edited(b, ()),
            },
            has_data=pred.any_of(pred.is_torch, pred.is_job),
            widget=None,
            edited=pred.what_if_edited,
        ),
        Page(
            "launch-delays",
            "Launch delays",
            "per GPU stream: launch → start delay of kernels and copies, with outliers",
            {"trace": lambda b: streams.launch_delay_table(pred.timeline(b))},
            has_data=pred.has_gpu,
            group="GPU",
            widget="launch-delays",
            prepare=pred.launch_delays_data,
            prepare_when=pred.has_gpu,
            definitions={
                "launch delay": "from the start of the CPU's launch call to the start of the "
                "kernel or copy on the GPU: queueing behind earlier work, plus launch overhead",
                "outliers": "launches slower than Q3 + 3 × IQR of the stream's delays (and "
                "at least twice the median)",
            },
        ),
        Page(
            "lines",
            "Lines",
            "line reports: memory_profiler's lines, biggest increment first; Scalene's lines "
            "with CPU, GPU or memory recorded, most CPU first",
            {
                "memprof_text": lambda b: aggregate.lines_table(pred.lines(b)),
                "scalene": lambda b: scalene_tables.lines_table(pred.lines(b)),
            },
            widget="lines",
        ),
        Page(
            "samples",
            "Samples",
            "raw mprof memory samples",
            {"mprof": lambda b: aggregate.samples_table(pred.memory(b))},
        ),
        Page(
            "timeline",
            "Timeline",
            "slices over time (traces); memory over time: CUDA snapshot history, memray snapshots",
            {
                "cuda_snapshot": lambda b: cuda_memory_views.timeline_table(pred.snapshot(b)),
                "memray": lambda b: memray_views.timeline_table(pred.memray(b)),
            },
            has_data=pred.has_history,
            shown_when=pred.has_events,
            widget="timeline",
            prepare=pred.timeline_data,
            prepare_when=pred.has_events,
            ahead=True,
            stored="layout",
            group="Timeline",
        ),
        Page("query", "Query", "SQL over the file's tables (DuckDB)", widget="query"),
        Page(
            "bottom-up",
            "Bottom-up",
            "the inverted flame graph: hottest frames on top",
            widget="bottom-up",
            needs_tree=True,
            per_thread=True,
            group="Flame graphs",
        ),
        Page(
            "sandwich",
            "Sandwich",
            "a function's callers above it, its callees below",
            widget="sandwich",
            needs_tree=True,
            per_thread=True,
            group="Flame graphs",
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
            "(traces: --lanes cpu|gpu|all|LANE; sampled profiles: --thread NAME|ID)",
            {
                "pstats": tree_table.icicle_table,
                "trace": tree_table.icicle_table,
                "sampled": tree_table.icicle_table,
            },
            has_data=pred.has_tree,
            widget="icicle",
            needs_tree=True,
            per_thread=True,
            group="Flame graphs",
        ),
        Page(
            "tree",
            "Call tree",
            "the same as icicle, shown as an expandable tree",
            {
                "pstats": tree_table.icicle_table,
                "trace": tree_table.icicle_table,
                "sampled": tree_table.icicle_table,
            },
            has_data=pred.has_tree,
            widget="tree",
            needs_tree=True,
            per_thread=True,
            group="Flame graphs",
        ),
    )
}


__all__ = ["PAGES"]
