"""Aggregate tables over a trace's slices: operators, kernels, lanes and torch memory events.

Everything here is a pure, vectorised function of the columnar model (`Timeline.events` with the
`schema.EVENTS` columns); views and the CLI only display what these return. Column names carry
their unit as a suffix (`_ns`, `_bytes`, `_pct`) so every consumer formats them the same way.

The tables for the other formats (pstats, mprof, line reports) live in
`perfview.core.analysis.profile_tables` and are re-exported here, so this module is the
one import for every table.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from perfview.core.analysis.ancestors import (
    drop_duplicate_chains,
    member_child_sums,
    member_totals,
    nearest_ancestor,
    same_name_above,
)
from perfview.core.analysis.profile_tables import (
    callers_table,
    functions_table,
    line_functions_table,
    lines_table,
    memory_table,
    samples_table,
)
from perfview.core.model import Timeline

# Kinds that are never operators: the window-wide "Trace" span would otherwise top every table.
_NOT_OPS = ("trace",)


def self_times(events: pd.DataFrame, member: np.ndarray | None = None) -> np.ndarray:
    """Self time (ns) of every slice: its duration minus the durations of its nearest members below.

    With `member=None` every slice counts, so this is `dur - sum(dur of direct children)`. With a
    mask (e.g. kind == cpu_op) a member's children are its nearest *member* descendants, skipping
    non-members in between: torch's key_averages subtracts nested ops even when python_function
    slices sit between them, and this reproduces its numbers. Rows outside the mask keep their own
    member-children subtraction too, which callers simply ignore.
    """
    dur = events["dur"].to_numpy(dtype=np.int64)
    parent = events["parent"].to_numpy(dtype=np.int64)
    mask = np.ones(len(dur), dtype=bool) if member is None else np.asarray(member, dtype=bool)
    out: np.ndarray = dur - member_child_sums(parent, mask, dur)
    return out


def name_codes(events: pd.DataFrame) -> np.ndarray:
    """Integer code per slice name (the categorical codes when the column has them)."""
    names = events["name"]
    if isinstance(names.dtype, pd.CategoricalDtype):
        return names.cat.codes.to_numpy(dtype=np.int64)
    return pd.factorize(names)[0].astype(np.int64)


def nested_in_same_name(events: pd.DataFrame, member: np.ndarray | None = None) -> np.ndarray:
    """True for member slices with a member ancestor of the same name (recursion on a thread).

    A name's total time is how long it was on the stack: the union of its intervals on each
    thread, as Perfetto and speedscope count it. Nested slices lie inside their ancestors, so
    that union is the sum over the slices this function leaves False; summing every slice
    would count f ⊃ f ⊃ f (100, 80, 60 µs) as 240 µs instead of 100 µs.
    """
    parent = events["parent"].to_numpy(dtype=np.int64)
    mask = np.ones(len(parent), dtype=bool) if member is None else np.asarray(member, dtype=bool)
    return same_name_above(parent, name_codes(events), mask)


def drop_nested_duplicates(events: pd.DataFrame, member: np.ndarray) -> np.ndarray:
    """`member` without the slices torch folds into their parent before aggregating.

    torch's EventList removes an op whose parent op has the same name and no other child
    (`_remove_dup_nodes`: e.g. aten::sum dispatching to another aten::sum overload is one call).
    key_averages' counts and self times are computed after that, so ops_table does the same
    for torch traces. Repeats until stable, as torch does, for chains of such ops.
    """
    codes = name_codes(events)  # equal codes, equal names (the categorical's own codes)
    parent = events["parent"].to_numpy(dtype=np.int64)
    rounds = int(events["depth"].max()) + 1 if len(events) else 0
    return drop_duplicate_chains(parent, codes, np.asarray(member, dtype=bool), rounds)


def _kind_mask(events: pd.DataFrame, kinds: Iterable[str]) -> np.ndarray:
    """Rows whose kind is one of `kinds`; on the categorical column, a comparison of its codes
    (pandas' isin hashed every row: 0.02 s at 5M rows)."""
    kind = events["kind"]
    if isinstance(kind.dtype, pd.CategoricalDtype):
        wanted = set(kinds)
        picked = [i for i, c in enumerate(kind.cat.categories) if c in wanted]
        codes = kind.cat.codes.to_numpy()
        if len(picked) == 1:
            return np.asarray(codes == picked[0])
        return np.isin(codes, picked)
    return np.asarray(kind.isin(list(kinds)), dtype=bool)


def _text(series: pd.Series) -> pd.Series:
    """Group keys come back categorical; plain text is what tables, CSV and diffs expect."""
    return series.astype(object).astype(str)


def ops_table(
    timeline: Timeline,
    by_shape: bool = False,
    kinds: Iterable[str] = ("cpu_op",),
    torch_dedup: bool | None = None,
) -> pd.DataFrame:
    """Operator table: one row per name (or per name and input shape), sorted by total time.

    Columns: name, [shape,] calls, self_ns, total_ns, mean_ns, max_ns, self_pct. Self time is
    computed among the chosen kinds (see `self_times`); total time counts a name once while it
    is on a thread's stack (`nested_in_same_name`), mean_ns is the mean call duration. A trace
    with none of those kinds (a plain Chrome trace) falls back to every slice except the window
    span, with self = dur - children.
    `torch_dedup` (default: on for torch traces) applies `drop_nested_duplicates`, so calls and
    self times equal torch's own `key_averages()`.
    """
    events = timeline.events
    member = _kind_mask(events, kinds)
    if not member.any():
        member = ~_kind_mask(events, _NOT_OPS)
    elif timeline.is_torch if torch_dedup is None else torch_dedup:
        member = drop_nested_duplicates(events, member)
    names = events["name"]
    if not by_shape and isinstance(names.dtype, pd.CategoricalDtype):
        fused = _ops_by_name(events, member)
        if fused is not None:
            return fused
    selft = self_times(events, member)
    keys = ["name", "shape"] if by_shape else ["name"]
    frame = events.loc[member, keys].copy()
    dur = events["dur"].to_numpy()
    frame["dur"] = dur[member]
    frame["outer"] = np.where(nested_in_same_name(events, member), 0, dur)[member]
    frame["self"] = selft[member]
    grouped = frame.groupby(keys, observed=True, sort=False)
    out = grouped.agg(
        calls=("dur", "size"),
        self_ns=("self", "sum"),
        total_ns=("outer", "sum"),
        sum_ns=("dur", "sum"),
        max_ns=("dur", "max"),
    ).reset_index()
    for key in keys:
        out[key] = _text(out[key])
    return _ops_columns(out, keys)


def _ops_columns(out: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The operators table's derived columns, column order and row order."""
    out["calls"] = out["calls"].astype(np.int64)
    out["mean_ns"] = _mean_ns(out["sum_ns"], out["calls"])
    total_self = float(out["self_ns"].sum())
    out["self_pct"] = out["self_ns"] * 100.0 / total_self if total_self else 0.0
    out = out[[*keys, "calls", "self_ns", "total_ns", "mean_ns", "max_ns", "self_pct"]]
    return _sorted(out, "total_ns", keys)


def _ops_by_name(events: pd.DataFrame, member: np.ndarray) -> pd.DataFrame | None:
    """`ops_table` by name from one compiled pass over the categorical name codes
    (`ancestors.member_totals`) instead of the separate ancestor passes and pandas' groupby:
    the same numbers, ~0.1 s less at 1 GB. None where the one-pass answers do not hold."""
    names = events["name"]
    categories = names.cat.categories
    totals = member_totals(
        events["parent"].to_numpy(dtype=np.int64),
        names.cat.codes.to_numpy(dtype=np.int64),
        member,
        events["dur"].to_numpy(dtype=np.int64),
        len(categories),
    )
    if totals is None:
        return None
    calls, self_ns, stack_ns, sum_ns, max_ns = totals
    seen = np.flatnonzero(calls)
    out = pd.DataFrame(
        {
            "name": _text(pd.Series(categories[seen])),
            "calls": calls[seen],
            "self_ns": self_ns[seen],
            "total_ns": stack_ns[seen],
            "sum_ns": sum_ns[seen],
            "max_ns": max_ns[seen],
        }
    )
    return _ops_columns(out, ["name"])


def kernels_table(timeline: Timeline, kinds: Iterable[str] = ("kernel",)) -> pd.DataFrame:
    """GPU kernels by name: name, calls, total_ns, mean_ns, min_ns, max_ns, total_pct.

    `total_pct` is the share of all kernel time, the number people look at first on a GPU trace.
    """
    events = timeline.events
    mask = _kind_mask(events, kinds)
    frame = pd.DataFrame(
        {"name": events["name"].to_numpy()[mask], "dur": events["dur"].to_numpy()[mask]}
    )
    out = (
        frame.groupby("name", observed=True, sort=False)
        .agg(
            calls=("dur", "size"),
            total_ns=("dur", "sum"),
            min_ns=("dur", "min"),
            max_ns=("dur", "max"),
        )
        .reset_index()
    )
    out["name"] = _text(out["name"])
    out["calls"] = out["calls"].astype(np.int64)
    out["mean_ns"] = _mean_ns(out["total_ns"], out["calls"])
    total = float(out["total_ns"].sum())
    out["total_pct"] = out["total_ns"] * 100.0 / total if total else 0.0
    out = out[["name", "calls", "total_ns", "mean_ns", "min_ns", "max_ns", "total_pct"]]
    return _sorted(out, "total_ns", ["name"])


def busy_ns(lane: np.ndarray, ts: np.ndarray, end: np.ndarray, n_lanes: int) -> np.ndarray:
    """Length of the union of intervals per lane (overlaps counted once).

    After sorting by (lane, start), an interval adds only the part past the furthest end seen so
    far in its lane (a per-lane running maximum), which is exact for any overlap pattern.
    """
    busy = np.zeros(n_lanes, dtype=np.int64)
    if not len(ts):
        return busy
    order = np.lexsort((ts, lane))
    lane, ts, end = lane[order], ts[order], end[order]
    run_max = pd.Series(end).groupby(lane).cummax().to_numpy(dtype=np.int64)
    first = np.ones(len(ts), dtype=bool)
    first[1:] = lane[1:] != lane[:-1]
    prev_end = np.empty_like(run_max)
    prev_end[0] = ts[0]
    prev_end[1:] = run_max[:-1]
    prev_end = np.where(first, ts, prev_end)
    gain = np.clip(end - np.maximum(ts, prev_end), 0, None)
    np.add.at(busy, lane, gain)
    return busy


def lanes_table(timeline: Timeline) -> pd.DataFrame:
    """One row per lane: lane, label, device, events, busy_ns, busy_pct, max_depth.

    busy_ns is the union of the lane's top-level slices, i.e. how long that thread or stream was
    doing anything; busy_pct relates it to the trace duration.
    """
    events, lanes = timeline.events, timeline.lanes
    n_lanes = int(max(len(lanes), int(events["lane"].max()) + 1 if len(events) else 0))
    lane = events["lane"].to_numpy(dtype=np.int64)
    counts = np.bincount(lane, minlength=n_lanes)
    depth = np.full(n_lanes, -1, dtype=np.int64)
    np.maximum.at(depth, lane, events["depth"].to_numpy(dtype=np.int64))
    top = events["parent"].to_numpy() < 0
    ts = events["ts"].to_numpy(dtype=np.int64)[top]
    end = ts + events["dur"].to_numpy(dtype=np.int64)[top]
    busy = busy_ns(lane[top], ts, end, n_lanes)
    ids = lanes["lane"].to_numpy(dtype=np.int64)
    duration = timeline.duration_ns or 0
    out = pd.DataFrame(
        {
            "lane": ids,
            "label": lanes["label"].astype(str).to_numpy(),
            "device": lanes["device"].astype(str).to_numpy(),
            "events": counts[ids].astype(np.int64),
            "busy_ns": busy[ids],
            "busy_pct": busy[ids] * 100.0 / duration if duration else np.nan,
            "max_depth": np.maximum(depth[ids], 0),
        }
    )
    return out.reset_index(drop=True)


def _device_label(device_type: np.ndarray, device_id: np.ndarray) -> np.ndarray:
    """c10 DeviceType numbers to the names torch prints (0 cpu, 1 cuda, …)."""
    names = {0: "cpu", 1: "cuda", 2: "mkldnn", 3: "opengl", 4: "opencl", 5: "ideep", 6: "hip"}
    names.update({7: "fpga", 8: "maia", 9: "xla", 10: "vulkan", 11: "metal", 12: "xpu", 13: "mps"})
    labels = [
        names.get(int(t), f"device{int(t)}") + ("" if int(i) < 0 else f":{int(i)}")
        for t, i in zip(device_type, device_id, strict=True)
    ]
    return np.asarray(labels, dtype=object)


def trace_memory_table(timeline: Timeline) -> pd.DataFrame:
    """torch.profiler `[memory]` events per device: allocs, frees, bytes and the peaks.

    Columns: device, allocs, frees, alloc_bytes, peak_allocated_bytes, peak_reserved_bytes,
    final_allocated_bytes, peak_ts_ns (trace-relative time of the allocated peak), ooms.
    Files from before torch 1.10 have no `Total Allocated`; for a device whose totals are all 0
    the allocated curve is rebuilt as the running sum of `Bytes` (counted from the trace start,
    so memory allocated before profiling began is missing from it).
    """
    mem = timeline.memory.sort_values("ts", kind="stable")
    columns = [
        "device",
        "allocs",
        "frees",
        "alloc_bytes",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
        "final_allocated_bytes",
        "peak_ts_ns",
        "ooms",
    ]
    if not len(mem):
        return pd.DataFrame({col: pd.Series([], dtype=object) for col in columns})
    keys = [mem["device_type"], mem["device_id"]]
    change = mem["bytes"].where(~mem["oom"], 0)
    recorded = mem["total_allocated"].groupby(keys).transform("max") > 0
    allocated = mem["total_allocated"].where(recorded, change.groupby(keys).cumsum())
    frame = mem.assign(
        alloc=(mem["bytes"] > 0) & ~mem["oom"],
        free=(mem["bytes"] < 0) & ~mem["oom"],
        alloc_bytes=change.clip(lower=0),
        allocated=allocated,
    )
    grouped = frame.groupby(["device_type", "device_id"], sort=True)
    out = grouped.agg(
        allocs=("alloc", "sum"),
        frees=("free", "sum"),
        alloc_bytes=("alloc_bytes", "sum"),
        peak_allocated_bytes=("allocated", "max"),
        peak_reserved_bytes=("total_reserved", "max"),
        final_allocated_bytes=("allocated", "last"),
        ooms=("oom", "sum"),
    )
    peak_rows = grouped["allocated"].idxmax()
    out["peak_ts_ns"] = mem.loc[peak_rows.to_numpy(), "ts"].to_numpy(dtype=np.int64)
    out = out.reset_index()
    out["device"] = _device_label(out["device_type"].to_numpy(), out["device_id"].to_numpy())
    for col in ("allocs", "frees", "ooms"):
        out[col] = out[col].astype(np.int64)
    return out[columns].reset_index(drop=True)


def _mean_ns(total: pd.Series, calls: pd.Series) -> pd.Series:
    """Mean in whole ns: the model keeps times as integers, sub-ns precision means nothing here."""
    return (total / calls.clip(lower=1)).round().astype(np.int64)


def _sorted(frame: pd.DataFrame, by: str, keys: list[str]) -> pd.DataFrame:
    """Sort by `by` descending with the key columns as a stable tie-break (reproducible output)."""
    ordered = frame.sort_values([by, *keys], ascending=[False] + [True] * len(keys), kind="stable")
    return ordered.reset_index(drop=True)


__all__ = [
    "busy_ns",
    "callers_table",
    "drop_nested_duplicates",
    "functions_table",
    "kernels_table",
    "lanes_table",
    "line_functions_table",
    "lines_table",
    "memory_table",
    "name_codes",
    "nearest_ancestor",
    "nested_in_same_name",
    "ops_table",
    "samples_table",
    "self_times",
    "trace_memory_table",
]
