"""The kinds of document of the page registry (`KINDS`): for each (a pstats profile, a torch
trace, a plain trace, a memory capture, a multi-rank job, a log directory…) the tabs it shows,
in order, and its groups. The pages themselves are declared once in `registry.py`."""

from __future__ import annotations

from perfview.core.pages import predicates as pred
from perfview.core.pages.page import Kind, Tab

_CALLERS = Tab("callers", "Callers/Callees")
_QUERY = Tab("query")  # every kind of file can be asked SQL questions
_FLAME = (Tab("bottom-up"), Tab("sandwich"))  # beside every icicle
KINDS: tuple[Kind, ...] = (
    Kind(
        "pstats",
        pred.format_is("pstats"),
        (
            Tab("icicle"),
            *_FLAME,
            Tab("functions", table=True),
            Tab("callers", "Callers/Callees", True, group=""),  # beside Functions
            Tab("tree"),
            _QUERY,
        ),
    ),
    Kind(
        "torch",
        pred.is_torch_trace,
        (
            Tab("overview"),
            Tab("timeline"),
            Tab("operators", table=True),
            Tab("kernels", table=True),
            Tab("memory"),
            Tab("recommendations"),
            Tab("critical-path"),
            Tab("modules", table=True),
            Tab("idle", "GPU idle", True),
            Tab("idle-gaps", "Idle gaps", True),
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
        pred.format_is("trace"),
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
        pred.format_is("mprof"),
        (Tab("memory", table=True), Tab("samples", table=True), _QUERY),
    ),
    Kind(
        "cuda_snapshot",
        pred.format_is("cuda_snapshot"),
        (
            Tab("timeline", widget="allocations"),
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
        pred.format_is("memray"),
        (
            Tab("icicle", "Flame graph (peak)"),
            *_FLAME,
            Tab("timeline", "Memory over time", widget="allocations"),
            Tab("allocations", "Allocations at peak", True),
            Tab("leaks", table=True),
            _QUERY,
        ),
    ),
    Kind(
        "sampled",
        pred.format_is("sampled"),
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
        pred.format_is("memprof_text"),
        (Tab("lines"), Tab("functions", table=True), _QUERY),
    ),
    Kind(
        "scalene",
        pred.format_is("scalene"),
        (Tab("lines"), Tab("functions", table=True), _QUERY),
    ),
    Kind(
        "job",
        pred.is_job,
        (
            Tab("ranks", table=True),
            Tab("collectives", table=True),
            Tab("collective-kinds", table=True),
            Tab("stragglers", table=True),
            Tab("overlap", "Overlap", True),
            Tab("critical-path-steps", "Critical path", True),
            Tab("heatmap"),
            Tab("job-timeline"),
        ),
    ),
    Kind("logdir", pred.format_is("logdir"), (Tab("runs", table=True),)),
)


__all__ = ["KINDS"]
