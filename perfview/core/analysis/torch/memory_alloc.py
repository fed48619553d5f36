"""Memory page: allocated/reserved curves per device, the allocation table, peaks, range filter.

Input is `Timeline.memory` (torch.profiler `[memory]` instants, profile_memory=True). Each row
is an allocation (Bytes > 0) or a free (Bytes < 0) at address `addr`, plus the device's running
`Total Allocated` / `Total Reserved` after it. Files from before torch 1.10 have no Addr and no
totals: the allocated curve is then the running sum of Bytes (from the trace start), reserved is
unknown (0), and allocations cannot be paired with their frees.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis import intervals
from perfview.core.analysis.aggregate import nearest_ancestor
from perfview.core.analysis.torch.common import I64, kind_mask, per_events, text
from perfview.core.model import Timeline

_DEVICE_NAMES = {0: "cpu", 1: "cuda", 6: "hip", 12: "xpu", 13: "mps"}


def device_labels(device_type: np.ndarray, device_id: np.ndarray) -> np.ndarray:
    """c10 device type/id pairs → "cuda:0", "cpu", … (one label per distinct pair, vectorised:
    each pair is one int64, so a few hundred thousand memory events make a few labels)."""
    kinds = np.asarray(device_type, dtype=I64)
    ids = np.asarray(device_id, dtype=I64)
    if not len(kinds):
        return np.zeros(0, dtype=object)
    uniq, codes = np.unique(kinds * (1 << 32) + (ids & 0xFFFFFFFF), return_inverse=True)
    labels = []
    for key in uniq.tolist():
        t, i = key >> 32, np.int32(np.uint32(key & 0xFFFFFFFF))
        labels.append(_DEVICE_NAMES.get(t, f"device{t}") + ("" if i < 0 else f":{int(i)}"))
    return np.asarray(labels, dtype=object)[codes.reshape(-1)]


@per_events  # the curves, the peaks and the allocations each sorted it again
def _sorted_memory(timeline: Timeline) -> pd.DataFrame:
    mem = timeline.memory.sort_values("ts", kind="stable").reset_index(drop=True)
    return mem.assign(
        device=device_labels(mem["device_type"].to_numpy(), mem["device_id"].to_numpy())
    )


@per_events  # the Memory page's curves and its peaks
def memory_curves(timeline: Timeline) -> pd.DataFrame:
    """Step curves per device: device, ts_ns, allocated_bytes, reserved_bytes (one row per event).

    `allocated_bytes` is torch's Total Allocated, or the running sum of Bytes for devices whose
    file has no totals (see the module docstring). Out-of-memory events keep the last totals.
    """
    mem = _sorted_memory(timeline)
    change = mem["bytes"].where(~mem["oom"], 0)
    recorded = mem.groupby("device")["total_allocated"].transform("max") > 0
    allocated = mem["total_allocated"].where(recorded, change.groupby(mem["device"]).cumsum())
    out = pd.DataFrame(
        {
            "device": mem["device"].to_numpy(dtype=object),
            "ts_ns": mem["ts"].to_numpy(dtype=I64),
            "allocated_bytes": allocated.to_numpy(dtype=I64),
            "reserved_bytes": mem["total_reserved"].to_numpy(dtype=I64),
        }
    )
    return out.sort_values(["device", "ts_ns"], kind="stable").reset_index(drop=True)


def memory_peaks(timeline: Timeline) -> pd.DataFrame:
    """The peak per device: device, peak_ts_ns, peak_allocated_bytes, peak_reserved_bytes."""
    curves = memory_curves(timeline)
    cols = ["device", "peak_ts_ns", "peak_allocated_bytes", "peak_reserved_bytes"]
    if not len(curves):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    grouped = curves.groupby("device", sort=True)
    peak_rows = grouped["allocated_bytes"].idxmax().to_numpy()
    out = pd.DataFrame(
        {
            "device": curves["device"].to_numpy()[peak_rows],
            "peak_ts_ns": curves["ts_ns"].to_numpy()[peak_rows],
            "peak_allocated_bytes": curves["allocated_bytes"].to_numpy()[peak_rows],
            "peak_reserved_bytes": grouped["reserved_bytes"].max().to_numpy(dtype=I64),
        }
    )
    return out[cols]


def _enclosing_ops(timeline: Timeline, mem: pd.DataFrame) -> np.ndarray:
    """Row of the innermost cpu_op open on the event's thread at its time, or -1."""
    ev, lanes = timeline.events, timeline.lanes
    main = lanes[lanes["sub"] == 0]
    key = pd.Series(main["lane"].to_numpy(dtype=I64),
                    index=pd.MultiIndex.from_arrays([main["pid"], main["tid"]]))  # fmt: skip
    key = key[~key.index.duplicated()]
    wanted = pd.MultiIndex.from_arrays([mem["pid"], mem["tid"]])
    q_lane = key.reindex(wanted).fillna(-1).to_numpy(dtype=I64)
    lane = ev["lane"].to_numpy(dtype=I64)
    start = ev["ts"].to_numpy(dtype=I64)
    end = start + ev["dur"].to_numpy(dtype=I64)
    parent = ev["parent"].to_numpy(dtype=I64)
    found = np.full(len(mem), -1, dtype=I64)
    ok = q_lane >= 0
    found[ok] = intervals.enclosing(
        lane, start, end, parent, q_lane[ok], np.asarray(mem["ts"].to_numpy(dtype=I64))[ok]
    )
    is_op = kind_mask(ev, ("cpu_op",))
    up = nearest_ancestor(parent, is_op)
    safe = np.clip(found, 0, None)
    return np.where(found < 0, -1, np.where(is_op[safe], found, up[safe]))


def allocations_table(timeline: Timeline) -> pd.DataFrame:
    """One row per allocation, paired with its free by (device, Addr).

    Columns: device, op (innermost cpu_op on the allocating thread, "" if none), alloc_ts_ns,
    size_bytes, free_ts_ns (-1 if not freed in the trace), lifetime_ns (-1 if not freed),
    freed (bool), addr. An allocation is freed by the next free of the same address on the
    same device; allocations without Addr (old files) stay unpaired.
    """
    mem = _sorted_memory(timeline)
    mem = mem[~mem["oom"]].reset_index(drop=True)
    op_row = _enclosing_ops(timeline, mem)
    names = timeline.events["name"].to_numpy()
    mem = mem.assign(
        op=np.where(op_row >= 0, text(names[np.clip(op_row, 0, None)]), ""),
        seq=np.arange(len(mem), dtype=I64),
    )
    paired = mem[mem["addr"] != 0].sort_values(["device", "addr", "seq"], kind="stable")
    nxt = paired.shift(-1)
    same = (nxt["device"] == paired["device"]) & (nxt["addr"] == paired["addr"])
    match = same & (paired["bytes"] > 0) & (nxt["bytes"] < 0)
    free_ts = pd.Series(-1, index=mem.index, dtype=I64)
    free_ts.loc[paired.index[match.to_numpy()]] = nxt.loc[match, "ts"].to_numpy(dtype=I64)
    allocs = mem["bytes"] > 0
    out = pd.DataFrame(
        {
            "device": mem["device"],
            "op": mem["op"],
            "alloc_ts_ns": mem["ts"].astype(I64),
            "size_bytes": mem["bytes"].astype(I64),
            "free_ts_ns": free_ts,
            "addr": mem["addr"].astype(I64),
        }
    )[allocs.to_numpy()]
    out["freed"] = out["free_ts_ns"] >= 0
    out["lifetime_ns"] = np.where(out["freed"], out["free_ts_ns"] - out["alloc_ts_ns"], -1)
    cols = ["device", "op", "alloc_ts_ns", "size_bytes", "free_ts_ns", "lifetime_ns", "freed",
            "addr"]  # fmt: skip
    return out[cols].reset_index(drop=True)


def filter_allocations(allocs: pd.DataFrame, start_ns: int, end_ns: int) -> pd.DataFrame:
    """Allocations made or freed inside [start_ns, end_ns] (a range selected on the curve).

    That is the TensorBoard plugin's rule: the table shows the memory activity of the range,
    not every block merely alive during it.
    """
    a = allocs["alloc_ts_ns"]
    f = allocs["free_ts_ns"]
    keep = a.between(start_ns, end_ns) | (allocs["freed"] & f.between(start_ns, end_ns))
    return allocs[keep].reset_index(drop=True)


def memory_summary(timeline: Timeline) -> pd.DataFrame:
    """Per device: allocs, frees, alloc_bytes, peak_*, peak_ts_ns, never_freed_bytes.

    What `perfview summary --view memory` prints for a torch trace.
    """
    allocs = allocations_table(timeline)
    peaks = memory_peaks(timeline).set_index("device")
    mem = _sorted_memory(timeline)
    grouped = allocs.groupby("device", sort=True)
    out = pd.DataFrame(
        {
            "allocs": grouped.size(),
            "frees": mem[(mem["bytes"] < 0) & ~mem["oom"]].groupby("device").size(),
            "alloc_bytes": grouped["size_bytes"].sum(),
            "never_freed_bytes": allocs[~allocs["freed"] & (allocs["addr"] != 0)]
            .groupby("device")["size_bytes"]
            .sum(),
        }
    ).reindex(peaks.index)
    out = out.fillna(0).astype(I64).join(peaks).reset_index()
    out["ooms"] = (
        mem.groupby("device")["oom"].sum().reindex(out["device"]).fillna(0).to_numpy(dtype=I64)
    )
    cols = ["device", "allocs", "frees", "alloc_bytes", "peak_allocated_bytes",
            "peak_reserved_bytes", "peak_ts_ns", "never_freed_bytes", "ooms"]  # fmt: skip
    return out[cols] if len(out) else pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})


__all__ = [
    "allocations_table",
    "device_labels",
    "filter_allocations",
    "memory_curves",
    "memory_peaks",
    "memory_summary",
]
