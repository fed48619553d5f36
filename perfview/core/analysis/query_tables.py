"""The tables `perfview query` and the Query page offer, and their columns in words.

Kept apart from `core.query` (which builds the tables) so the README, the CLI's help and the
Query page's tooltip describe the same schema from one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfview.core.model import schema


@dataclass(frozen=True)
class TableDoc:
    """What a table holds, and its columns with one phrase each (README and the Query page)."""

    description: str
    columns: tuple[tuple[str, str], ...]


_SLICE_COLS: tuple[tuple[str, str], ...] = (
    ("id", "row number of the slice; `parent`, `args.slice`, `kernels.op` refer to it"),
    ("ts", "start, int64 ns from the first event of the trace"),
    ("dur", "duration in ns"),
    ("end_ts", "ts + dur"),
    ("name", "slice name, text"),
    ("cat", "category, text"),
    ("kind", "cpu_op, python, annotation, gpu_annotation, runtime, kernel, memcpy, memset, …"),
    ("pid", "process id, numeric: string pids are mapped, see lanes"),
    ("tid", "thread id, or the GPU stream"),
    ("lane", "row of `lanes` the slice is drawn on"),
    ("depth", "nesting depth in its lane, 0 = top"),
    ("parent", "id of the enclosing slice, -1 for a root"),
    ("corr", "CUDA correlation id (runtime call ↔ GPU activity), -1 if none"),
    ("ext_id", "kineto External id (op ↔ its launches), -1 if none"),
    ("shape", "recorded input shapes, '' if none"),
)

TABLES: dict[str, TableDoc] = {
    "slices": TableDoc("every slice of a trace (complete, B/E and async events)", _SLICE_COLS),
    "lanes": TableDoc(
        "one row per track (process × thread or GPU stream)",
        (
            ("lane", "track number (slices.lane)"),
            ("pid", "process id"),
            ("tid", "thread id / stream"),
            ("sub", "0, or the extra row of slices that overlap without nesting"),
            ("process", "process label"),
            ("thread", "thread label"),
            ("label", "the track's label in the timeline"),
            ("device", "cpu, gpu:0, … or ''"),
            ("sort_key", "display order"),
            ("max_depth", "deepest nesting on the track"),
            ("n_events", "slices on the track"),
        ),
    ),
    "flows": TableDoc(
        "flow arrows (s/f events)",
        (
            ("flow_id", "flow id"),
            ("cat", "category"),
            ("name", "name"),
            ("src_ts", "start time (ns)"),
            ("dst_ts", "end time (ns), -1 when the flow has no end"),
            ("src_event", "slices.id the arrow leaves, -1 if none"),
            ("dst_event", "slices.id the arrow enters, -1 if none"),
        ),
    ),
    "counters": TableDoc(
        "counter samples (C events), one row per series and time",
        (
            ("ts", "time (ns)"),
            ("pid", "process id"),
            ("name", "series: `event.key`, or the event name"),
            ("value", "sample value (float)"),
        ),
    ),
    "instants": TableDoc(
        "instant events (i/I/R marks)",
        (
            ("ts", "time (ns)"),
            ("name", "name"),
            ("cat", "category"),
            ("pid", "process id"),
            ("tid", "thread id"),
            ("scope", "t thread, p process, g global"),
        ),
    ),
    "args": TableDoc(
        "each slice's `args` as JSON text (slices without args have no row); read a key with "
        "`args->>'key'` or `json_extract(args, '$.key')`",
        (("slice", "slices.id"), ("args", "JSON text")),
    ),
    "kernels": TableDoc(
        "GPU activities (kernels, memcpy, memset) with the op that launched them",
        (
            ("id", "slices.id of the activity"),
            ("ts", "start (ns)"),
            ("dur", "duration (ns)"),
            ("name", "kernel name"),
            ("kind", "kernel, memcpy or memset"),
            ("device", "gpu:N"),
            ("stream", "stream (slices.tid)"),
            ("lane", "track"),
            ("corr", "correlation id"),
            ("ext_id", "External id"),
            ("runtime", "slices.id of the runtime call with the same correlation id, -1"),
            ("op", "ops.id of the launching cpu_op, -1 if unattributed"),
            ("via", "how the op was found: correlation, external_id or ''"),
        ),
    ),
    "ops": TableDoc(
        "CPU operators (kind cpu_op), a subset of slices",
        (
            ("id", "slices.id"),
            ("ts", "start (ns)"),
            ("dur", "duration (ns)"),
            ("name", "operator name"),
            ("shape", "input shapes"),
            ("pid", "process id"),
            ("tid", "thread id"),
            ("lane", "track"),
            ("depth", "nesting depth"),
            ("parent", "slices.id of the enclosing slice"),
            ("ext_id", "External id"),
        ),
    ),
    "memory": TableDoc(
        "torch.profiler [memory] events",
        (
            ("ts", "time (ns)"),
            ("pid", "process id"),
            ("tid", "thread id"),
            ("device_type", "0 CPU, 1 CUDA, …"),
            ("device_id", "-1 for CPU"),
            ("addr", "block address"),
            ("bytes", "allocated (negative: freed)"),
            ("total_allocated", "bytes allocated after the event"),
            ("total_reserved", "bytes reserved after the event"),
            ("oom", "an out-of-memory event"),
        ),
    ),
    "functions": TableDoc(
        "pstats: one row per function, as cProfile recorded it",
        (
            ("id", "function id (edges.caller / edges.callee)"),
            ("function", "function name"),
            ("file", "file"),
            ("line", "first line"),
            ("ncalls", "calls"),
            ("primitive_calls", "non-recursive calls"),
            ("tottime_ns", "self time"),
            ("cumtime_ns", "time including callees"),
        ),
    ),
    "edges": TableDoc(
        "pstats: caller → callee pairs",
        tuple(
            (c, "")
            for c in ("caller", "callee", "ncalls", "primitive_calls", "tottime_ns", "cumtime_ns")
        ),
    ),
    "samples": TableDoc(
        "mprof: memory samples",
        (("run", "run index"), ("ts_ns", "unix time (ns)"), ("rss_bytes", "memory")),
    ),
    "children": TableDoc(
        "mprof: child-process samples",
        (("run", "run index"), ("child", "child index"), ("ts_ns", ""), ("rss_bytes", "")),
    ),
    "spans": TableDoc(
        "mprof: @profile function spans",
        tuple(
            (c, "") for c in ("run", "name", "start_ns", "end_ns", "mem_start", "mem_end", "level")
        ),
    ),
    "lines": TableDoc(
        "line reports (memory_profiler, Scalene): one row per reported source line; a Scalene "
        "profile adds its per-line numbers (the columns of `scalene_functions` after `line`)",
        tuple(
            (c, "")
            for c in (
                "report",
                "block",
                "file",
                "line",
                "mem_bytes",
                "increment_bytes",
                "occurrences",
                "content",
            )
        ),
    ),
    "blocks": TableDoc(
        "line reports: one row per profiled function (memory_profiler) or file (Scalene)",
        tuple((c, "") for c in ("block", "report", "file", "function", "first_line", "n_lines")),
    ),
    "scalene_functions": TableDoc(
        "Scalene: its own per-function sums; percentages of elapsed time (CPU, GPU) and of all "
        "memory allocated",
        tuple((c, "") for c in ("file", "function", "line", *schema.SCALENE_LINES)),
    ),
}


__all__ = ["TABLES", "TableDoc"]
