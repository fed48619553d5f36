"""Per GPU stream: communication/computation overlap, why the stream idles, launch delays.

Definitions (after HTA's comm_comp_overlap, idle_time and queue-length analyses, restated on
perfview's columnar timeline; all inside the analysis window: the steps, else the whole trace):

- overlap (`overlap_table`): per rank, device and stream that runs collective kernels: `comm_ns`
  = union of that stream's collective kernels, `compute_ns` = union of the device's other
  kernels (any stream), `overlapped_ns` = their intersection, `overlap_pct` = overlapped / comm.
  A stream row "all" gives the same for every collective of the device.
- idle (`idle_table`): each gap between the stream's GPU activities (kernels, copies, sets) is
  split by when the activity after it was launched (its runtime call, via the correlation id):
  before that launch the GPU had nothing queued, the gap is `host_wait_ns` (the CPU was late);
  after it the work was queued but waited on other kernels / events (`kernel_wait_ns`). Gaps
  whose next activity has no launch call, and the tail after the last one, are `other_ns`.
- launch delays (`launch_delays`): launch → start, from the runtime call's start to the GPU
  activity's start, per activity; `launch_delay_table` summarises them per stream and counts
  outliers (above Q3 + 3 × IQR, at least 2 × the median).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import (
    GPU_KINDS,
    I64,
    analysis_window,
    comm_kernel_mask,
    gpu_lane_mask,
    kind_mask,
    lane_devices,
    names_at,
    text,
)
from perfview.core.analysis.torch.ranks import rank_from_meta
from perfview.core.analysis.torch.unions import merge_intervals
from perfview.core.model import Timeline

OUTLIER_IQR = 3.0

# What the idle and overlap pages state under their tables (and `summary --view` prints):
# the window and the definition, and how HTA's figures for the same file differ.
IDLE_DEFINITION = (
    "Idle is measured per GPU stream over the analysis window (every ProfilerStep, else the "
    "whole trace), the gaps before the first and after the last activity included, and each "
    "gap is split at the launch of the activity after it (host wait before, kernel wait after); "
    "HTA's idle-time breakdown leaves out the last ProfilerStep, sums only the gaps between "
    "consecutive activities and calls a whole gap host wait when the launch came after the "
    "previous activity ended, so its figures are lower."
)
OVERLAP_DEFINITION = (
    "Overlap is measured per device over the analysis window (every ProfilerStep, else the "
    "whole trace) as the share of collective-kernel time during which another kernel of the "
    "device runs; HTA's comm_comp_overlap takes the same share but leaves out the last "
    "ProfilerStep and rounds times to whole microseconds."
)


def covered_length(starts: np.ndarray, ends: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Length of the (merged: sorted, disjoint) intervals' union lying before each point x."""
    x = np.asarray(x, dtype=I64)
    if not len(starts):
        return np.zeros(len(x), dtype=I64)
    cum = np.concatenate([[0], np.cumsum(ends - starts)]).astype(I64)
    k = np.clip(np.searchsorted(starts, x, side="right") - 1, 0, None)
    part = np.clip(np.minimum(x - starts[k], ends[k] - starts[k]), 0, None)
    return np.asarray(np.where(x >= starts[0], cum[k] + part, 0), dtype=I64)


def _intersection(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Length of the intersection of two merged interval unions."""
    cb = covered_length(b[0], b[1], a[1]) - covered_length(b[0], b[1], a[0])
    return int(cb.sum())


def _clip(ts: np.ndarray, end: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    s, e = np.clip(ts, lo, hi), np.clip(end, lo, hi)
    keep = e > s
    return merge_intervals(s[keep], e[keep])


def _stream_labels(tl: Timeline, rows: np.ndarray) -> np.ndarray:
    lanes = tl.lanes.set_index("lane")["thread"].astype(str)
    lane = tl.events["lane"].to_numpy(dtype=I64)[rows]
    return np.asarray(lanes.reindex(lane).fillna("").to_numpy(), dtype=object)


def overlap_table(tl: Timeline) -> pd.DataFrame:
    """rank, device, stream, comm_ns, compute_ns, overlapped_ns, overlap_pct (see module doc)."""
    ev = tl.events
    lo, hi = analysis_window(tl)
    ts = ev["ts"].to_numpy(dtype=I64)
    end = ts + ev["dur"].to_numpy(dtype=I64)
    comm = comm_kernel_mask(ev) & gpu_lane_mask(tl)
    compute = kind_mask(ev, ("kernel",)) & ~comm & gpu_lane_mask(tl)
    dev = lane_devices(tl)
    lane = ev["lane"].to_numpy(dtype=I64)
    rank = rank_from_meta(tl.meta)
    rows = []
    for device in sorted({str(d) for d in dev[comm]}):
        on = dev == device
        busy = _clip(ts[on & compute], end[on & compute], lo, hi)
        comm_lanes = sorted(set(lane[on & comm].tolist()))
        groups = [("all", on & comm)] + [
            (str(_stream_labels(tl, np.flatnonzero(lane == ln)[:1])[0]), on & comm & (lane == ln))
            for ln in comm_lanes
        ]
        for label, sel in groups:
            c = _clip(ts[sel], end[sel], lo, hi)
            total = int((c[1] - c[0]).sum())
            both = _intersection(c, busy)
            rows.append(
                {
                    "rank": -1 if rank is None else rank,
                    "device": device,
                    "stream": label,
                    "comm_ns": total,
                    "compute_ns": int((busy[1] - busy[0]).sum()),
                    "overlapped_ns": both,
                    "overlap_pct": both * 100.0 / total if total else np.nan,
                }
            )
    cols = ["rank", "device", "stream", "comm_ns", "compute_ns", "overlapped_ns", "overlap_pct"]
    return pd.DataFrame(rows, columns=cols)


def _launch_rows(tl: Timeline, gpu_rows: np.ndarray) -> np.ndarray:
    """The runtime call (row) that launched each GPU activity, -1 when not linked."""
    ev = tl.events
    corr = ev["corr"].to_numpy(dtype=I64)
    runtime = np.flatnonzero(kind_mask(ev, ("runtime",)) & (corr >= 0))
    by_corr = pd.Series(runtime, index=corr[runtime])
    by_corr = by_corr[~by_corr.index.duplicated(keep="first")]
    found = by_corr.reindex(corr[gpu_rows]).fillna(-1).to_numpy(dtype=I64, copy=True)
    found[corr[gpu_rows] < 0] = -1
    return np.asarray(found, dtype=I64)


def _gaps(ts: np.ndarray, end: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    """Gaps between a stream's activities (by start): gap start, gap end, index of the next."""
    order = np.argsort(ts, kind="stable")
    s, e = ts[order], np.maximum.accumulate(end[order])
    starts = np.concatenate([[lo], e])
    ends = np.concatenate([s, [hi]])
    nxt = np.concatenate([order, [-1]])
    starts, ends = np.clip(starts, lo, hi), np.clip(ends, lo, hi)
    keep = ends > starts
    return starts[keep], ends[keep], nxt[keep]


def idle_table(tl: Timeline) -> pd.DataFrame:
    """Per GPU stream: window_ns, busy_ns, idle_ns = host_wait_ns + kernel_wait_ns + other_ns,
    idle_pct (of the window); see the module docstring for the split."""
    ev = tl.events
    lo, hi = analysis_window(tl)
    gpu = kind_mask(ev, GPU_KINDS) & gpu_lane_mask(tl)
    ts_all = ev["ts"].to_numpy(dtype=I64)
    end_all = ts_all + ev["dur"].to_numpy(dtype=I64)
    lane = ev["lane"].to_numpy(dtype=I64)
    dev = lane_devices(tl)
    rows = []
    for ln in sorted(set(lane[gpu].tolist())):
        sel = np.flatnonzero(gpu & (lane == ln))
        ts, end = ts_all[sel], end_all[sel]
        launch = _launch_rows(tl, sel)
        launched = np.where(launch >= 0, ts_all[np.clip(launch, 0, None)], -1)
        gs, ge, nxt = _gaps(ts, end, lo, hi)
        at = np.where(nxt >= 0, launched[np.clip(nxt, 0, None)], -1)
        linked = (nxt >= 0) & (at >= 0)
        host = np.where(linked, np.clip(np.minimum(at, ge) - gs, 0, None), 0)
        kernel = np.where(linked, (ge - gs) - host, 0)
        other = np.where(linked, 0, ge - gs)
        busy = _clip(ts, end, lo, hi)
        idle = int((ge - gs).sum())
        rows.append(
            {
                "device": str(dev[sel[0]]),
                "stream": str(_stream_labels(tl, sel[:1])[0]),
                "window_ns": hi - lo,
                "busy_ns": int((busy[1] - busy[0]).sum()),
                "idle_ns": idle,
                "host_wait_ns": int(host.sum()),
                "kernel_wait_ns": int(kernel.sum()),
                "other_ns": int(other.sum()),
                "idle_pct": idle * 100.0 / (hi - lo) if hi > lo else np.nan,
            }
        )
    cols = ["device", "stream", "window_ns", "busy_ns", "idle_ns", "host_wait_ns",
            "kernel_wait_ns", "other_ns", "idle_pct"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def launch_delays(tl: Timeline) -> pd.DataFrame:
    """One row per launched GPU activity: row, name, device, stream, launch_ns (runtime call
    start), start_ns, delay_ns (start - launch) and outlier (see the module docstring)."""
    ev = tl.events
    gpu = np.flatnonzero(kind_mask(ev, GPU_KINDS) & gpu_lane_mask(tl))
    launch = _launch_rows(tl, gpu)
    gpu, launch = gpu[launch >= 0], launch[launch >= 0]
    ts = ev["ts"].to_numpy(dtype=I64)
    out = pd.DataFrame(
        {
            "row": gpu.astype(I64),
            "name": text(names_at(ev, gpu)),
            "device": lane_devices(tl)[gpu].astype(str),
            "stream": _stream_labels(tl, gpu),
            "launch_ns": ts[launch],
            "start_ns": ts[gpu],
            "delay_ns": ts[gpu] - ts[launch],
        }
    )
    limit = out.groupby(["device", "stream"])["delay_ns"].transform(_outlier_limit)
    out["outlier"] = out["delay_ns"].to_numpy(dtype=np.float64) > limit.to_numpy(np.float64)
    return out.sort_values(["device", "stream", "start_ns"], kind="stable").reset_index(drop=True)


def _outlier_limit(delays: pd.Series) -> float:
    q1, med, q3 = np.percentile(delays.to_numpy(dtype=np.float64), [25, 50, 75])
    return float(max(q3 + OUTLIER_IQR * (q3 - q1), 2.0 * med))


def delay_histogram(delays: pd.DataFrame) -> pd.DataFrame:
    """`launch_delays` rows in log-scale buckets: edges at 1, 2 and 5 × each power of ten of
    ns (1 µs, 2 µs, 5 µs, 10 µs…) from the one at or under the shortest delay to the first
    past the longest, so a 5 µs queue and a 40 ms stall share one readable axis. Columns
    lo_ns, hi_ns (a bucket holds lo ≤ delay < hi; delays under 1 ns count in the first),
    launches, outliers. Empty rows: an empty frame."""
    cols = ["lo_ns", "hi_ns", "launches", "outliers"]
    if not len(delays):
        return pd.DataFrame({c: pd.Series([], dtype=I64) for c in cols})
    d = delays["delay_ns"].to_numpy(dtype=I64)
    low, high = max(int(d.min()), 1), max(int(d.max()), 1)
    edges = [
        m * 10**p for p in range(int(np.log10(low)), int(np.log10(high)) + 2) for m in (1, 2, 5)
    ]
    first = max(i for i, e in enumerate(edges) if e <= low)
    last = min(i for i, e in enumerate(edges) if e > high)
    edges_a = np.asarray(edges[first : last + 1], dtype=I64)
    bucket = np.clip(np.searchsorted(edges_a, d, side="right") - 1, 0, len(edges_a) - 2)
    n = len(edges_a) - 1
    outlier = delays["outlier"].to_numpy(dtype=bool)
    return pd.DataFrame(
        {
            "lo_ns": edges_a[:-1],
            "hi_ns": edges_a[1:],
            "launches": np.bincount(bucket, minlength=n).astype(I64),
            "outliers": np.bincount(bucket[outlier], minlength=n).astype(I64),
        }
    )[cols]


def in_bucket(delays: pd.DataFrame, lo_ns: int, hi_ns: int, first: bool) -> np.ndarray:
    """Mask of the `delays` rows in the bucket [lo_ns, hi_ns) (the first also holds < lo)."""
    d = delays["delay_ns"].to_numpy(dtype=I64)
    return np.asarray((d < hi_ns) & ((d >= lo_ns) | first), dtype=bool)


def launch_delay_table(tl: Timeline, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per stream: launches, mean/median/p95/max launch → start delay, outliers (count) and
    `worst`, the name of the activity with the longest delay. `rows`: `launch_delays(tl)`
    when the caller has it."""
    rows = launch_delays(tl) if rows is None else rows
    cols = ["device", "stream", "launches", "mean_ns", "median_ns", "p95_ns", "max_ns",
            "outliers", "worst"]  # fmt: skip
    if not len(rows):
        return pd.DataFrame(columns=cols)
    groups = rows.groupby(["device", "stream"], sort=True)
    d = groups["delay_ns"]
    out = pd.DataFrame(
        {
            "launches": d.size(),
            "mean_ns": d.mean().round().astype(I64),
            "median_ns": d.median().round().astype(I64),
            "p95_ns": d.quantile(0.95).round().astype(I64),
            "max_ns": d.max().astype(I64),
            "outliers": groups["outlier"].sum().astype(I64),
            "worst": rows.loc[d.idxmax(), ["device", "stream", "name"]].set_index(
                ["device", "stream"]
            )["name"],
        }
    ).reset_index()
    return out[cols]


__all__ = [
    "IDLE_DEFINITION",
    "OVERLAP_DEFINITION",
    "covered_length",
    "delay_histogram",
    "idle_table",
    "in_bucket",
    "launch_delay_table",
    "launch_delays",
    "overlap_table",
]
