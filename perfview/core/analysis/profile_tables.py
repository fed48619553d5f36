"""Tables for the non-trace formats: pstats functions and edges, mprof runs, line reports.

Pure pandas over the loaders' fixed schemas. Like `analysis.aggregate` (which re-exports
everything here), column names carry their unit (`_ns`, `_bytes`) so every consumer formats the
same way, and each table comes back in the order people read it first (biggest cost on top).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.model import LineReport, MemoryProfile, PstatsProfile


def function_labels(functions: pd.DataFrame) -> pd.Series:
    """`file:line(function)` per row, as pstats prints it (`{built-in …}` for `~:0` entries).

    Diffs and caller tables key on this text, so it must match pstats' `func_std_string`.
    """
    name = functions["function"].astype(str)
    file = functions["file"].astype(str)
    line = functions["line"].astype(np.int64).astype(str)
    builtin = (file == "~") & (functions["line"].to_numpy() == 0)
    braced = name.str.startswith("<") & name.str.endswith(">")
    label = file + ":" + line + "(" + name + ")"
    label = label.where(~builtin, name)
    label = label.where(~(builtin & braced), "{" + name.str.slice(1, -1) + "}")
    return label.astype(object)


def functions_table(profile: PstatsProfile) -> pd.DataFrame:
    """pstats functions: function, file, line, ncalls, primitive_calls, tottime_ns, cumtime_ns.

    Sorted by cumulative time like `pstats.sort_stats("cumulative")`, ties broken by label so the
    order is reproducible across runs.
    """
    funcs = profile.functions
    cols = ["function", "file", "line", "ncalls", "primitive_calls", "tottime_ns", "cumtime_ns"]
    out = funcs[cols].copy()
    out["_label"] = function_labels(funcs).to_numpy()
    out = out.sort_values(["cumtime_ns", "_label"], ascending=[False, True], kind="stable")
    return out.drop(columns="_label").reset_index(drop=True)


def callers_table(profile: PstatsProfile) -> pd.DataFrame:
    """Every caller → callee edge with readable names, sorted by the time the edge carries.

    Columns: caller, callee (`file:line(function)` text), ncalls, primitive_calls, tottime_ns,
    cumtime_ns: exact numbers from pstats, unlike the apportioned icicle tree.
    """
    labels = function_labels(profile.functions).to_numpy()
    edges = profile.edges
    caller = edges["caller"].to_numpy(dtype=np.int64)
    callee = edges["callee"].to_numpy(dtype=np.int64)
    out = pd.DataFrame(
        {
            "caller": _lookup(labels, caller),
            "callee": _lookup(labels, callee),
            "ncalls": edges["ncalls"].to_numpy(dtype=np.int64),
            "primitive_calls": edges["primitive_calls"].to_numpy(dtype=np.int64),
            "tottime_ns": edges["tottime_ns"].to_numpy(dtype=np.int64),
            "cumtime_ns": edges["cumtime_ns"].to_numpy(dtype=np.int64),
        }
    )
    out = out.sort_values(
        ["cumtime_ns", "caller", "callee"], ascending=[False, True, True], kind="stable"
    )
    return out.reset_index(drop=True)


def _lookup(labels: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """labels[ids], with "?" for ids outside the table (a damaged file must not crash a view)."""
    ok = (ids >= 0) & (ids < len(labels))
    out = np.full(len(ids), "?", dtype=object)
    out[ok] = labels[ids[ok]]
    return out


def memory_table(memory: MemoryProfile) -> pd.DataFrame:
    """One row per mprof run (files appended by `mprof run -o` hold several).

    Columns: run, cmdline, samples, start_ns (unix ns of the first sample), duration_ns,
    peak_bytes, final_bytes, peak_ts_ns (time of the peak after the run's start), children
    (distinct child processes sampled), functions (FUNC spans).
    """
    samples = memory.samples.sort_values(["run", "ts_ns"], kind="stable")
    grouped = samples.groupby("run", sort=True)
    out = grouped.agg(
        samples=("ts_ns", "size"),
        start_ns=("ts_ns", "min"),
        end_ns=("ts_ns", "max"),
        peak_bytes=("rss_bytes", "max"),
        final_bytes=("rss_bytes", "last"),
    )
    peak_rows = grouped["rss_bytes"].idxmax().to_numpy()
    out["peak_ts_ns"] = samples.loc[peak_rows, "ts_ns"].to_numpy(dtype=np.int64) - out["start_ns"]
    out["duration_ns"] = out["end_ns"] - out["start_ns"]
    out["children"] = (
        memory.children.groupby("run")["child"].nunique().reindex(out.index, fill_value=0)
    )
    out["functions"] = memory.spans.groupby("run").size().reindex(out.index, fill_value=0)
    out = out.reset_index()
    runs = out["run"].to_numpy(dtype=np.int64)
    cmds = memory.cmdlines
    out["cmdline"] = [cmds[r] if 0 <= r < len(cmds) else "" for r in runs]
    cols = ["run", "cmdline", "samples", "start_ns", "duration_ns", "peak_bytes", "final_bytes"]
    cols += ["peak_ts_ns", "children", "functions"]
    out = out[cols]
    for col in ("samples", "children", "functions"):
        out[col] = out[col].astype(np.int64)
    return out.reset_index(drop=True)


def samples_table(memory: MemoryProfile) -> pd.DataFrame:
    """The raw mprof samples: run, ts_ns (unix), elapsed_ns (since the run's start), rss_bytes."""
    samples = memory.samples.sort_values(["run", "ts_ns"], kind="stable").reset_index(drop=True)
    start = samples.groupby("run")["ts_ns"].transform("min")
    return pd.DataFrame(
        {
            "run": samples["run"].astype(np.int64),
            "ts_ns": samples["ts_ns"],
            "elapsed_ns": (samples["ts_ns"] - start).astype(np.int64),
            "rss_bytes": samples["rss_bytes"],
        }
    )


def entry_rows(lines: pd.DataFrame) -> np.ndarray:
    """True for each function block's entry row: its first line, when it was executed.

    memory_profiler measures a function's first line (the `@profile` decorator) when the
    function is entered, with no earlier line to count from, so that row's "Increment" is the
    process's whole memory at entry (779 MiB in a real report), not growth; reports from
    before 0.58 print 0 there. Growth totals and "largest increment" leave the row out.
    """
    block = lines["block"].to_numpy(dtype=np.int64)
    line = lines["line"].to_numpy(dtype=np.int64)
    first = pd.Series(line).groupby(block).transform("min").to_numpy(dtype=np.int64)
    ran = np.isfinite(lines["mem_bytes"].to_numpy(dtype=np.float64))
    return np.asarray((line == first) & ran, dtype=bool)


def growth_increments(lines: pd.DataFrame) -> pd.Series:
    """Each row's increment, NaN on the entry rows (`entry_rows`): what ranks as growth."""
    inc = lines["increment_bytes"].astype(np.float64)
    return inc.where(~entry_rows(lines))


def lines_table(report: LineReport, order: str = "increment") -> pd.DataFrame:
    """Line report rows: report, function, file, line, mem_bytes, increment_bytes, occurrences,
    content.

    `order="increment"` (the default, what a summary wants) puts the lines that grew memory most
    first, then each function's entry row (its increment is a baseline: `entry_rows`), lines
    that never ran last; `order="source"` keeps the report's own order.
    """
    lines = report.lines
    function = _block_functions(report, lines["block"].to_numpy(dtype=np.int64))
    out = pd.DataFrame(
        {
            "report": lines["report"].astype(np.int64),
            "function": function,
            "file": lines["file"].astype(object),
            "line": lines["line"].astype(np.int64),
            "mem_bytes": lines["mem_bytes"],
            "increment_bytes": lines["increment_bytes"],
            "occurrences": lines["occurrences"],
            "content": lines["content"].astype(object),
        }
    )
    if order == "increment":  # growth first; then the entry rows (a baseline), never-run last
        entry = entry_rows(lines)
        ran = np.isfinite(lines["increment_bytes"].to_numpy(dtype=np.float64))
        out["_group"] = np.where(entry, 1, np.where(ran, 0, 2))
        out = out.sort_values(["_group", "increment_bytes"], ascending=[True, False], kind="stable")
        out = out.drop(columns="_group")
    elif order != "source":
        raise ValueError(f"order must be 'increment' or 'source', not {order!r}")
    return out.reset_index(drop=True)


def _block_functions(report: LineReport, block: np.ndarray) -> np.ndarray:
    """Function name of each row's block ("" when the report did not show a def line)."""
    blocks = report.blocks
    names = pd.Series(
        blocks["function"].astype(object).to_numpy(), index=blocks["block"].to_numpy()
    )
    return names.reindex(block).fillna("").astype(object).to_numpy()


def line_functions_table(report: LineReport) -> pd.DataFrame:
    """Per profiled function: where its memory went, biggest net increment first.

    Columns: report, function, file, first_line, lines, start_mem_bytes (first executed line),
    peak_mem_bytes, increment_bytes (sum of line increments), max_increment_bytes, max_line (the
    line number of that biggest increment). The entry row's increment is memory_profiler's
    baseline at entry, not growth (`entry_rows`), so it is left out of all three.
    """
    lines = report.lines.sort_values(["block", "line"], kind="stable").reset_index(drop=True)
    lines["increment_bytes"] = growth_increments(lines)
    grouped = lines.groupby("block", sort=True)
    out = grouped.agg(
        report=("report", "first"),
        file=("file", "first"),
        first_line=("line", "min"),
        lines=("line", "size"),
        start_mem_bytes=("mem_bytes", "first"),
        peak_mem_bytes=("mem_bytes", "max"),
        increment_bytes=("increment_bytes", "sum"),
        max_increment_bytes=("increment_bytes", "max"),
    )
    inc = lines["increment_bytes"].fillna(-np.inf)
    best = inc.groupby(lines["block"]).idxmax().reindex(out.index).to_numpy()
    out["max_line"] = lines.loc[best, "line"].to_numpy(dtype=np.int64)
    out["max_line"] = out["max_line"].where(out["max_increment_bytes"].notna(), -1)
    out = out.reset_index()
    out["function"] = _block_functions(report, out["block"].to_numpy(dtype=np.int64))
    cols = ["report", "function", "file", "first_line", "lines", "start_mem_bytes"]
    cols += ["peak_mem_bytes", "increment_bytes", "max_increment_bytes", "max_line"]
    out = out[cols].astype({"report": np.int64, "lines": np.int64, "first_line": np.int64})
    out = out.sort_values("increment_bytes", ascending=False, kind="stable")
    return out.reset_index(drop=True)


def pstats_functions_frame(functions: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """pstats' classic columns, keeping the function id as the index (for exact selection).

    Returns the display frame and the plain function names (what a Selection carries).
    percall follows pstats: tottime / ncalls and cumtime / primitive calls.
    """
    ncalls = functions["ncalls"].astype("int64")
    prim = functions["primitive_calls"].astype("int64")
    tot = functions["tottime_ns"].astype("float64")
    cum = functions["cumtime_ns"].astype("float64")
    frame = pd.DataFrame(
        {
            "ncalls": ncalls,
            "tottime_ns": functions["tottime_ns"].astype("int64"),
            "tot_percall_ns": (tot / ncalls.where(ncalls > 0)).astype("float64"),
            "cumtime_ns": functions["cumtime_ns"].astype("int64"),
            "cum_percall_ns": (cum / prim.where(prim > 0)).astype("float64"),
            "function": function_labels(functions).astype(object),
        },
        index=functions.index,
    )
    return frame, functions["function"].astype(object)


__all__ = [
    "callers_table",
    "entry_rows",
    "function_labels",
    "functions_table",
    "growth_increments",
    "line_functions_table",
    "lines_table",
    "memory_table",
    "pstats_functions_frame",
    "samples_table",
]
