"""Operators with device time: kernel → launching op links, op tables, op → kernels, call stacks.

Linking (as the TensorBoard plugin and HTA do): a GPU activity (kernel, memcpy, memset) has the
CUPTI `correlation` id of the runtime call that launched it (`cudaLaunchKernel`, …); that runtime
slice sits on a CPU thread inside the operator that issued it, so the launching op is the
runtime slice's nearest `cpu_op` ancestor. When a GPU activity has no matching runtime slice
(runtime events not recorded), its `External id` is matched to a cpu_op's External id instead.
(The kernel's External id is not used first: several traces, e.g. HTA's sampled ranks, write the
correlation id there, which matches no op.)

Device self time of an op = time of the GPU activities it launched itself; device total adds
those of the cpu_ops nested below it. Ops that torch folds into an identically named parent
(`aggregate.drop_nested_duplicates`) hand their device time to that parent, as host time does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis import aggregate
from perfview.core.analysis.torch.common import (
    GPU_KINDS,
    I64,
    kind_mask,
    per_events,
    text,
)
from perfview.core.model import Timeline


@per_events
def launches(timeline: Timeline) -> pd.DataFrame:
    """One row per GPU activity: gpu_row, runtime_row (-1 if none), op_row (-1 if unattributed).

    `via` says how the op was found: "correlation" (through the runtime call), "external_id" or
    "" when neither link exists. Remembered (`per_events`): the Operators, Kernels and
    Op → kernels pages all start from it, each computed it again.
    """
    ev = timeline.events
    gpu = np.flatnonzero(kind_mask(ev, GPU_KINDS))
    corr = ev["corr"].to_numpy(dtype=I64)
    ext = ev["ext_id"].to_numpy(dtype=I64)
    parent = ev["parent"].to_numpy(dtype=I64)
    is_op = kind_mask(ev, ("cpu_op",))
    runtime = np.flatnonzero(kind_mask(ev, ("runtime",)) & (corr >= 0))
    rt = pd.Series(runtime, index=corr[runtime])
    rt = rt[~rt.index.duplicated(keep="first")]
    runtime_row = rt.reindex(corr[gpu]).fillna(-1).to_numpy(dtype=I64, copy=True)
    runtime_row[corr[gpu] < 0] = -1
    op_of = aggregate.nearest_ancestor(parent, is_op)
    op_row = np.where(runtime_row >= 0, op_of[np.clip(runtime_row, 0, None)], -1).astype(I64)
    via = np.where(op_row >= 0, "correlation", "").astype(object)
    missing = (op_row < 0) & (ext[gpu] >= 0)
    if missing.any():
        ops = np.flatnonzero(is_op & (ext >= 0))
        by_ext = pd.Series(ops, index=ext[ops])
        by_ext = by_ext[~by_ext.index.duplicated(keep="first")]
        found = by_ext.reindex(ext[gpu][missing]).fillna(-1).to_numpy(dtype=I64, copy=True)
        op_row[np.flatnonzero(missing)] = found
        via[np.flatnonzero(missing)[found >= 0]] = "external_id"
    return pd.DataFrame(
        {"gpu_row": gpu.astype(I64), "runtime_row": runtime_row, "op_row": op_row, "via": via}
    )


def _op_members(timeline: Timeline) -> np.ndarray:
    ev = timeline.events
    member = kind_mask(ev, ("cpu_op",))
    return aggregate.drop_nested_duplicates(ev, member) if timeline.is_torch else member


def device_times(timeline: Timeline, member: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(device_self, device_total) in ns per event row; meaningful on `member` rows only."""
    ev = timeline.events
    n = len(ev)
    parent = ev["parent"].to_numpy(dtype=I64)
    dur = ev["dur"].to_numpy(dtype=I64)
    links = launches(timeline)
    links = links[links["op_row"] >= 0]
    op = links["op_row"].to_numpy(dtype=I64)
    gdur = dur[links["gpu_row"].to_numpy(dtype=I64)]
    up = aggregate.nearest_ancestor(parent, member)
    op = np.where(member[op], op, up[op])  # a folded duplicate hands its time to its parent
    keep = op >= 0
    op, gdur = op[keep], gdur[keep]
    dself = np.zeros(n, dtype=I64)
    np.add.at(dself, op, gdur)
    dtotal = dself.copy()
    cur = up[op]
    for _ in range(n + 1):  # climb one level per pass, all kernels at once
        live = cur >= 0
        if not live.any():
            break
        np.add.at(dtotal, cur[live], gdur[live])
        cur, gdur = up[cur[live]], gdur[live]
    return dself, dtotal


def ops_table(timeline: Timeline, by_shape: bool = False) -> pd.DataFrame:
    """Operators by name (or name + input shape), host and device times, sorted by device total.

    Columns: name, [shape,] calls, host_self_ns, host_total_ns, device_self_ns, device_total_ns,
    host_self_pct, device_self_pct (shares of all ops' self time). Host numbers equal
    `aggregate.ops_table` (torch's key_averages for calls and self time; totals count an op
    once while it is on the stack, where key_averages adds nested same-name calls again).
    """
    ev = timeline.events
    member = _op_members(timeline)
    hself = aggregate.self_times(ev, member)
    dself, dtotal = device_times(timeline, member)
    keys = ["name", "shape"] if by_shape else ["name"]
    frame = ev.loc[member, keys].copy()
    inner = aggregate.nested_in_same_name(ev, member)  # recursion: count the outermost only
    frame["dur"] = ev["dur"].to_numpy(dtype=I64)[member]
    frame["htotal"] = np.where(inner, 0, ev["dur"].to_numpy(dtype=I64))[member]
    frame["hself"] = hself[member]
    frame["dself"] = dself[member]
    frame["dtotal"] = np.where(inner, 0, dtotal)[member]
    out = (
        frame.groupby(keys, observed=True, sort=False)
        .agg(
            calls=("dur", "size"),
            host_self_ns=("hself", "sum"),
            host_total_ns=("htotal", "sum"),
            device_self_ns=("dself", "sum"),
            device_total_ns=("dtotal", "sum"),
        )
        .reset_index()
    )
    for key in keys:
        out[key] = text(out[key])
    out["calls"] = out["calls"].astype(I64)
    for col, src in (("host_self_pct", "host_self_ns"), ("device_self_pct", "device_self_ns")):
        total = float(out[src].sum())
        out[col] = out[src] * 100.0 / total if total else 0.0
    out = out.sort_values(
        ["device_total_ns", "host_total_ns", *keys], ascending=[False, False] + [True] * len(keys)
    )
    return out.reset_index(drop=True)


def op_kernels_table(
    timeline: Timeline, op: str | None = None, shape: str | None = None
) -> pd.DataFrame:
    """GPU activities grouped by (launching op name, kernel name): what each op ran on the GPU.

    Columns: op, kernel, kind, calls, total_ns, mean_ns, min_ns, max_ns. `op`/`shape` restrict
    to one operator (the rows shown when the user expands it). The op is the direct launcher
    (see `launches`); activities with no op get op "(no op)".
    """
    frame = _activities(timeline)
    if op is not None:
        frame = frame[frame["op"] == op]
    if shape is not None:
        frame = frame[frame["shape"] == shape]
    return _grouped(frame)


@per_events
def _activities(timeline: Timeline) -> pd.DataFrame:
    """One row per GPU activity: launching op, its shape, kernel name, kind (categoricals of
    the events' own categories: no text made per row), dur. Remembered: the whole table and
    every op's detail clicked on the Operators page filter it."""
    ev = timeline.events
    links = launches(timeline)
    rows = links["gpu_row"].to_numpy(dtype=I64)
    op_row = links["op_row"].to_numpy(dtype=I64)
    at = np.clip(op_row, 0, None)
    none = op_row < 0
    return pd.DataFrame(
        {
            "op": _labels(ev["name"], at, none, "(no op)"),
            "shape": _labels(ev["shape"], at, none, ""),
            "kernel": _labels(ev["name"], rows),
            "kind": _labels(ev["kind"], rows),
            "dur": ev["dur"].to_numpy(dtype=I64)[rows],
        }
    )


def _labels(
    column: pd.Series, rows: np.ndarray, blank: np.ndarray | None = None, fill: str = ""
) -> pd.Categorical:
    """`column` at `rows` as a categorical of text, `fill` where `blank`."""
    values = pd.Categorical(column.array.take(rows) if len(column) else [])
    if blank is not None and blank.any():
        if fill not in values.categories:
            values = values.add_categories([fill])
        values[blank] = fill
    return values


def _grouped(frame: pd.DataFrame) -> pd.DataFrame:
    out = (
        frame.groupby(["op", "kernel", "kind"], sort=False, observed=True)
        .agg(
            calls=("dur", "size"),
            total_ns=("dur", "sum"),
            min_ns=("dur", "min"),
            max_ns=("dur", "max"),
        )
        .reset_index()
    )
    for key in ("op", "kernel", "kind"):
        out[key] = text(out[key])
    out["calls"] = out["calls"].astype(I64)
    out["mean_ns"] = (out["total_ns"] / out["calls"].clip(lower=1)).round().astype(I64)
    out = out[["op", "kernel", "kind", "calls", "total_ns", "mean_ns", "min_ns", "max_ns"]]
    return out.sort_values(["total_ns", "op", "kernel"], ascending=[False, True, True]).reset_index(
        drop=True
    )


def call_stack(timeline: Timeline, row: int) -> list[str]:
    """The stack above event `row`, outermost first: Python frames when the trace has them.

    With python_function slices (with_stack=True in newer torch) the enclosing python slices are
    walked through `parent`; older traces keep the stack as the op's "Call stack" arg
    ("file(line): func;…", innermost first), which is used when no python slice encloses it.
    Falls back to the enclosing slices of any kind (ops, annotations) so the answer is never
    empty for a nested op.
    """
    ev = timeline.events
    parent = ev["parent"].to_numpy(dtype=I64)
    kinds = ev["kind"].to_numpy()
    names = ev["name"].to_numpy()
    chain: list[int] = []
    cur = int(parent[row]) if 0 <= row < len(ev) else -1
    while cur >= 0 and len(chain) <= len(ev):
        chain.append(cur)
        cur = int(parent[cur])
    python = [str(names[i]) for i in reversed(chain) if str(kinds[i]) == "python"]
    if python:
        return python
    stack = timeline.args.get(row).get("Call stack")
    if isinstance(stack, str) and stack:
        return [frame for frame in reversed(stack.split(";")) if frame]
    return [str(names[i]) for i in reversed(chain)]


__all__ = ["call_stack", "device_times", "launches", "op_kernels_table", "ops_table"]
