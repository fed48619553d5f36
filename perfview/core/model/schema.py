"""Column names and dtypes of every table in the model, and `validate()` that every loader calls.

One fixed schema per table means views, the CLI and the diff code never guess at shapes.
Times are int64 nanoseconds, memory is int64 bytes, strings are categorical.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

CATEGORY = "category"

# Timeline slices (X events, B/E pairs, async b/e pairs). `ts` is relative to Timeline.origin_ns.
EVENTS: dict[str, str] = {
    "ts": "int64",
    "dur": "int64",
    "name": CATEGORY,
    "cat": CATEGORY,
    "kind": CATEGORY,  # see KINDS
    "pid": "int64",  # normalised: string pids are mapped to ids listed in Timeline.lanes
    "tid": "int64",
    "lane": "int32",  # row of Timeline.lanes
    "depth": "int16",  # nesting depth inside the lane, 0 = top
    "parent": "int64",  # row index of the enclosing slice in the same lane, -1 for roots
    "corr": "int64",  # CUPTI correlation id (runtime call <-> kernel/memcpy), -1 if none
    "ext_id": "int64",  # kineto "External id" (cpu_op <-> kernels it launched), -1 if none
    "shape": CATEGORY,  # "Input Dims" as compact text, "" if not recorded
}

# Kinds of slices; derived from `cat` (old capitalised and new kineto names) and the lane's device.
KINDS = (
    "cpu_op",
    "python",
    "annotation",  # user_annotation, ProfilerStep#N
    "gpu_annotation",
    "runtime",  # cuda_runtime / cuda_driver / hip runtime
    "kernel",
    "memcpy",
    "memset",
    "comm",  # collective communication (NCCL kernels are kernels; this is the CPU side)
    "trace",  # the one span covering the profiling window
    "async",
    "other",
)

LANES: dict[str, str] = {
    "lane": "int32",
    "pid": "int64",
    "tid": "int64",
    "sub": "int16",  # 0 = main row set; >0 = extra rows for slices that overlap without nesting
    "process": "object",  # process label (process_name / labels, or the raw pid)
    "thread": "object",  # thread label (thread_name, "stream 7", or the raw tid)
    "label": "object",  # what the timeline shows at the left of the track
    "device": "object",  # "cpu", "gpu:0", … or "" when unknown
    "sort_key": "int64",  # process and thread sort indexes folded into one order
    "max_depth": "int16",
    "n_events": "int64",
}

INSTANTS: dict[str, str] = {
    "ts": "int64",
    "name": CATEGORY,
    "cat": CATEGORY,
    "pid": "int64",
    "tid": "int64",
    "scope": CATEGORY,  # "t" thread, "p" process, "g" global
}

COUNTERS: dict[str, str] = {
    "ts": "int64",
    "pid": "int64",
    "name": CATEGORY,  # "<event name>.<arg key>" or the event name when it has a single series
    "value": "float64",
}

FLOWS: dict[str, str] = {
    "flow_id": "int64",  # interned id (ids may be strings or exceed 2**63 in the file)
    "cat": CATEGORY,
    "name": CATEGORY,
    "src_ts": "int64",
    "dst_ts": "int64",  # -1 when the flow has no end
    "src_event": "int64",  # row in events the start binds to, -1 if none encloses it
    "dst_event": "int64",
}

# torch.profiler [memory] / [OutOfMemory] instants.
MEMORY_EVENTS: dict[str, str] = {
    "ts": "int64",
    "pid": "int64",
    "tid": "int64",
    "device_type": "int16",  # c10 DeviceType: 0 CPU, 1 CUDA, …
    "device_id": "int16",  # -1 for CPU
    "addr": "int64",  # 0 when absent (older files, OOM events)
    "bytes": "int64",  # negative = free
    "total_allocated": "int64",
    "total_reserved": "int64",
    "oom": "bool",
}

# pstats: one row per function, exact as cProfile recorded it.
FUNCTIONS: dict[str, str] = {
    "function": "object",
    "file": "object",
    "line": "int64",
    "ncalls": "int64",
    "primitive_calls": "int64",
    "tottime_ns": "int64",
    "cumtime_ns": "int64",
}

# pstats: one row per (caller, callee) edge; ids index FUNCTIONS rows.
EDGES: dict[str, str] = {
    "caller": "int64",
    "callee": "int64",
    "ncalls": "int64",
    "primitive_calls": "int64",
    "tottime_ns": "int64",
    "cumtime_ns": "int64",
}

# mprof .dat
SAMPLES: dict[str, str] = {"run": "int32", "ts_ns": "int64", "rss_bytes": "int64"}
CHILD_SAMPLES: dict[str, str] = {
    "run": "int32",
    "child": "int32",
    "ts_ns": "int64",
    "rss_bytes": "int64",
}
SPANS: dict[str, str] = {
    "run": "int32",
    "name": "object",
    "start_ns": "int64",
    "end_ns": "int64",
    "mem_start": "int64",
    "mem_end": "int64",
    "level": "int16",  # FUNC stack level, -1 when the file predates it
}

# memory_profiler line-by-line report
LINES: dict[str, str] = {
    "report": "int32",  # index of the appended report (a file may hold several runs)
    "block": "int32",  # index of the function block over the whole file
    "file": "object",
    "line": "int64",
    "mem_bytes": "float64",  # NaN where the line never ran
    "increment_bytes": "float64",
    "occurrences": "float64",  # NaN where absent (older reports) or never ran
    "content": "object",
}

# Scalene's per-line numbers (`scalene --json`), after schema.LINES in a Scalene LineReport.
# Percentages are of the program's elapsed time (CPU, GPU) or of all memory allocated
# (`alloc_pct`); MB figures are converted from Scalene's MiB.
SCALENE_LINES: dict[str, str] = {
    "cpu_python_pct": "float64",  # n_cpu_percent_python: time running Python code
    "cpu_native_pct": "float64",  # n_cpu_percent_c: time in native code
    "cpu_system_pct": "float64",  # n_sys_percent: time in the system (I/O, sleeping)
    "cpu_total_pct": "float64",  # the three summed
    "gpu_pct": "float64",  # n_gpu_percent
    "gpu_peak_bytes": "float64",  # n_gpu_peak_memory_mb
    "mem_avg_bytes": "float64",  # n_avg_mb: average memory the line's allocations held
    "mem_peak_bytes": "float64",  # n_peak_mb: the peak footprint at the line
    "mem_growth_bytes": "float64",  # n_growth_mb (equal to n_peak_mb since Scalene 1.5.x)
    "alloc_bytes": "float64",  # n_malloc_mb: memory allocated by the line
    "alloc_pct": "float64",  # n_usage_fraction x 100: its share of all allocation
    "python_alloc_pct": "float64",  # n_python_fraction x 100: of it, by Python code
    "mallocs": "float64",  # n_mallocs
    "copy_bytes_per_s": "float64",  # n_copy_mb_s: memcpy volume per second
}


def empty(schema: dict[str, str]) -> pd.DataFrame:
    """An empty frame with the schema's columns and dtypes."""
    return pd.DataFrame({col: pd.Series([], dtype=dtype) for col, dtype in schema.items()})


def coerce(df: pd.DataFrame, schema: dict[str, str]) -> pd.DataFrame:
    """Return `df` with exactly the schema's columns, in order, cast to the schema's dtypes."""
    out = {}
    for col, dtype in schema.items():
        series = df[col]
        if str(series.dtype) != dtype:
            series = series.astype(cast(Any, dtype))
        out[col] = series
    # no copy: the columns are fresh or shared copy-on-write (pandas >= 3), and a 1 GB trace's
    # events table would otherwise be duplicated at the peak of the load
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)), copy=False)


# Invariants `validate` checks on every load, from a parse or from the cache: cheap vector
# checks (a few ms on a 100 MB trace) so that a damaged entry or a loader's bug fails as a
# clear error instead of being drawn (a flipped bit once showed a self time of 1.17e18 ns).
NON_NEGATIVE: dict[str, tuple[str, ...]] = {
    "events": ("dur", "depth"),
    "lanes": ("lane", "sub", "max_depth", "n_events"),
}
# Columns that hold a row of their own table that comes earlier (or -1): parents before children.
EARLIER_ROW: dict[str, tuple[str, ...]] = {"events": ("parent",)}
# Columns that hold a row of another table: (table, column) -> (target table, -1 allowed).
ROW_REFS: dict[tuple[str, str], tuple[str, bool]] = {
    ("events", "lane"): ("lanes", False),
    ("flows", "src_event"): ("events", True),
    ("flows", "dst_event"): ("events", True),
    ("edges", "caller"): ("functions", False),
    ("edges", "callee"): ("functions", False),
}
# Tables whose every categorical value must be set (a code within its categories, no NaN).
NO_MISSING_CATEGORIES = ("events", "instants", "counters", "flows")
TIMELINE_SCHEMAS: dict[str, dict[str, str]] = {
    "events": EVENTS,
    "lanes": LANES,
    "instants": INSTANTS,
    "counters": COUNTERS,
    "flows": FLOWS,
    "memory": MEMORY_EVENTS,
}
PSTATS_SCHEMAS: dict[str, dict[str, str]] = {"functions": FUNCTIONS, "edges": EDGES}


def validate(df: pd.DataFrame, schema: dict[str, str], table: str = "table") -> None:
    """Raise ValueError if `df` does not have exactly the schema's columns and dtypes, or breaks
    one of its table's invariants (`check_invariants`).

    Loaders call this last, so a wrong dtype fails loudly in tests rather than in a view.
    """
    cols = list(df.columns)
    if cols != list(schema):
        raise ValueError(f"{table}: columns {cols} != {list(schema)}")
    for col, dtype in schema.items():
        actual = str(df[col].dtype)
        if dtype == "object":
            if actual not in ("object", "str", "string"):
                raise ValueError(f"{table}.{col}: dtype {actual}, expected text")
        elif actual != dtype:
            raise ValueError(f"{table}.{col}: dtype {actual}, expected {dtype}")
    if not isinstance(df.index, pd.RangeIndex):
        raise ValueError(f"{table}: index must be a RangeIndex")
    check_invariants(df, table)


def check_invariants(df: pd.DataFrame, table: str) -> None:
    """The checks of one table alone: non-negative columns, parents before children, kinds
    from KINDS, categorical codes within their categories."""
    n = len(df)
    for col in NON_NEGATIVE.get(table, ()):
        values = df[col].to_numpy()
        if n and values.min() < 0:
            raise ValueError(f"{table}.{col}: negative value at row {int(np.argmin(values))}")
    for col in EARLIER_ROW.get(table, ()):
        values = df[col].to_numpy()
        bad = (values < -1) | (values >= np.arange(n))
        if bad.any():
            raise ValueError(f"{table}.{col}: row {int(np.argmax(bad))} points at a later row")
    if table == "events" and not set(df["kind"].cat.categories) <= set(KINDS):
        raise ValueError(f"{table}.kind: unknown kinds")
    if table in NO_MISSING_CATEGORIES:
        for col, dtype in schema_of(table).items():
            if dtype != CATEGORY or not n:
                continue
            codes = df[col].cat.codes.to_numpy()
            if codes.min() < 0 or codes.max() >= len(df[col].cat.categories):
                raise ValueError(f"{table}.{col}: a code outside its categories")


def schema_of(table: str) -> dict[str, str]:
    return TIMELINE_SCHEMAS.get(table) or PSTATS_SCHEMAS[table]


def validate_tables(tables: dict[str, pd.DataFrame]) -> None:
    """`validate` every table of a set (a Timeline's, a pstats profile's), then check the rows
    one table names in another: lanes of events, events of flows, functions of edges.

    Raise ValueError naming the table and column; callers turn it into a LoadError (or, for a
    cached entry, into a fresh parse)."""
    for name, df in tables.items():
        validate(df, schema_of(name), name)
    for (table, col), (target, none_ok) in ROW_REFS.items():
        if table not in tables or target not in tables or not len(tables[table]):
            continue
        values = tables[table][col].to_numpy()
        low = -1 if none_ok else 0
        if values.min() < low or values.max() >= len(tables[target]):
            raise ValueError(f"{table}.{col}: a row outside {target} (0..{len(tables[target])})")
    lanes = tables.get("lanes")
    if lanes is not None and not np.array_equal(lanes["lane"].to_numpy(), np.arange(len(lanes))):
        raise ValueError("lanes.lane: lanes are not numbered by row")


def int64(values: object) -> np.ndarray:
    """Convenience: an int64 numpy array from any sequence."""
    return np.asarray(values, dtype=np.int64)
