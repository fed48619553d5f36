"""What the critical path's edges read of every event, made once per trace (`Context`).

The dependency graph of a trace (`graph`) and the graphs of its batches of steps (`batched`)
all read the same per-event masks (GPU activity, CPU slice, blocking call, data loading,
communication, copy), each GPU activity's launch and the stream waits kineto recorded: made
here once, so a batch's edges are the whole graph's edges. For a huge trace the per-slice
arrays lie in a file on disk (`SPILL_BYTES`), and what a batch read of them and of the
stored columns is given back after it (`Context.give_back`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from perfview.core.analysis.torch.common import (
    COMM_KERNEL_RE,
    DATALOADER_PREFIX,
    GPU_KINDS,
    I64,
    gpu_lane_mask,
    kind_mask,
    name_mask,
)
from perfview.core.model import Timeline, mapped_pages

# Host calls that block until the device has finished work queued before them.
SYNC_CALL_RE = (
    r"^(?:cuda|hip)(?:Stream|Device|Event|Ctx)Synchronize$|^cu(?:Stream|Ctx|Event)Synchronize"
    r"|^(?:cuda|hip)Memcpy(?:2D|3D)?$|^hipMemcpyWithStream$|^cuMemcpyDtoH(?:_v2)?$"
)
SYNC_OP_RE = r"^aten::_local_scalar_dense$"
WAIT_RE = r"^Stream Wait Event$"  # kineto's name for a cuda_sync wait (CUPTI syncTypeString)
COMM_OP_RE = r"(?i)^(?:nccl|rccl|gloo|c10d)[:_]|^record_param_comms$"


def with_descendants(tl: Timeline, mask: np.ndarray) -> np.ndarray:
    """`mask` spread from each slice to everything nested inside it (same lane), one depth
    level at a time (parents precede their children in row order)."""
    ev = tl.events
    out = np.asarray(mask, dtype=bool).copy()
    if not out.any():
        return out
    depth = ev["depth"].to_numpy()
    parent = ev["parent"].to_numpy(dtype=I64)
    order = np.argsort(depth, kind="stable")
    cuts = np.searchsorted(depth[order], np.arange(1, int(depth.max()) + 2))
    for lo, hi in itertools.pairwise(cuts.tolist()):
        level = order[lo:hi]
        p = parent[level]
        has = p >= 0
        out[level[has]] |= out[p[has]]
    return out


# A context whose per-slice arrays (15 bytes a slice) pass this is kept in a file on disk,
# mapped read-only (`mapped_pages.on_disk`): a batch's walk reads its own rows of it, and
# they are given back after it, so the working set is a batch's, not the trace's (1 GB of
# anonymous memory at 20 GB). ~18M slices, a 5 GB trace: a smaller one stays in memory.
SPILL_BYTES = 256 << 20


@dataclass(frozen=True)
class Context:
    """What the edges read of every event, made once per trace: a graph of the whole trace
    and the graphs of its batches of steps (`batched`) all read the same per-event masks,
    launches and recorded stream waits, so a batch's edges are the whole graph's edges."""

    gpu: np.ndarray  # GPU activity on a GPU lane
    cpu: np.ndarray  # CPU slice (the graph's other rows)
    ts: np.ndarray
    end: np.ndarray
    lane: np.ndarray
    is_sync: np.ndarray  # a host call blocking on the device
    loader: np.ndarray  # under enumerate(DataLoader)
    comm_op: np.ndarray
    comm_kernel: np.ndarray
    copy: np.ndarray  # memcpy, memset
    gpu_rows: np.ndarray  # the GPU activities' rows, sorted
    launch: np.ndarray  # per gpu_rows, the runtime call that queued it (-1: none)
    waits: np.ndarray  # (3, n) rows: recorded wait, awaited activity, waiting activity
    lane_device: np.ndarray

    @property
    def rows(self) -> np.ndarray:
        """Every row the whole graph has a begin/end pair for."""
        return np.flatnonzero(self.gpu | self.cpu).astype(I64)

    def give_back(self, tl: Timeline) -> None:
        """Let go of the resident pages of what a batch read: the trace's stored columns
        and, for a huge trace, the per-slice arrays here (`SPILL_BYTES`)."""
        mapped_pages.give_back(tl.events)
        mapped_pages.give_back_arrays(self.gpu, self.cpu, self.end, self.is_sync, self.loader,
                                      self.comm_op, self.comm_kernel, self.copy)  # fmt: skip


def context(tl: Timeline) -> Context:
    """The per-event inputs of `build` for `tl` (see `Context`)."""
    ev = tl.events
    on_gpu = gpu_lane_mask(tl)
    gpu = kind_mask(ev, GPU_KINDS) & on_gpu
    cpu = ~on_gpu & ~kind_mask(ev, ("trace", "gpu_annotation", "async"))
    ts = ev["ts"].to_numpy(dtype=I64)
    end = ts + ev["dur"].to_numpy(dtype=I64)
    is_sync = (kind_mask(ev, ("runtime",)) & name_mask(ev, SYNC_CALL_RE)) | (
        kind_mask(ev, ("cpu_op",)) & name_mask(ev, SYNC_OP_RE)
    )
    loader = with_descendants(tl, name_mask(ev, "^" + re.escape(DATALOADER_PREFIX)))
    mapped_pages.give_back(ev)  # the kinds, names, times and parents read: ~25 bytes a slice
    comm_op = kind_mask(ev, ("comm",)) | (kind_mask(ev, ("cpu_op",)) & name_mask(ev, COMM_OP_RE))
    comm_kernel = kind_mask(ev, ("kernel",)) & name_mask(ev, COMM_KERNEL_RE)
    copy = kind_mask(ev, ("memcpy", "memset"))
    gpu_rows = np.flatnonzero(gpu).astype(I64)
    corr = ev["corr"].to_numpy(dtype=I64)
    runtime = np.flatnonzero(kind_mask(ev, ("runtime",)) & (corr >= 0) & (gpu | cpu))
    launch = _launches(corr, runtime, gpu_rows)
    waits = _recorded_waits(tl, gpu_rows, ts, end)
    mapped_pages.give_back(ev)  # the correlation ids and what the waits read
    lane = ev["lane"].to_numpy()  # the column itself (int32): read, never changed
    per_slice = [gpu, cpu, end, is_sync, loader, comm_op, comm_kernel, copy]
    if sum(a.nbytes for a in per_slice) > SPILL_BYTES:
        per_slice = mapped_pages.on_disk(per_slice)
    gpu, cpu, end, is_sync, loader, comm_op, comm_kernel, copy = per_slice
    return Context(gpu, cpu, ts, end, lane, is_sync, loader, comm_op, comm_kernel, copy, gpu_rows,
                   launch, waits, _lane_device(tl))  # fmt: skip


def _launches(corr: np.ndarray, runtime: np.ndarray, gpu_rows: np.ndarray) -> np.ndarray:
    """Per GPU activity, the runtime call that queued it: the first of `runtime` (rows, in
    order) with its correlation id; -1 where none. By sorting, not a hash index: pandas'
    was ~100 bytes a runtime call (0.5 GB for a 10 GB trace)."""
    out = np.full(len(gpu_rows), -1, I64)
    keys = corr[runtime]
    if not len(keys):
        return out
    order = np.argsort(keys, kind="stable")  # equal ids keep their rows' order: first wins
    keys = keys[order]
    first = np.ones(len(keys), bool)
    first[1:] = keys[1:] != keys[:-1]
    keys, calls = keys[first], runtime[order[first]]
    del order, first
    want = corr[gpu_rows]
    pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    hit = (keys[pos] == want) & (want >= 0)
    out[hit] = calls[pos[hit]]
    return out


def _recorded_waits(tl: Timeline, r: np.ndarray, ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The stream waits kineto recorded, as (3, n) rows: the wait, the activity waited for,
    the activity that waited. Its `cuda_sync` "Stream Wait Event" on a stream
    (args `wait_on_stream`, `wait_on_cuda_event_record_corr_id`, `correlation`: CUPTI's
    synchronization records, kineto's CudaSyncActivity) says that the work queued on that
    stream after the cudaStreamWaitEvent call (correlation ids above the event's) waits for
    the work queued on `wait_on_stream` before the cudaEventRecord (ids below the record's).
    `r` are the GPU activities' rows. The args are decoded for these events only (a few per
    step), once per trace."""
    ev = tl.events
    none = np.zeros((3, 0), I64)
    w_rows = np.flatnonzero((ev["cat"] == "cuda_sync").to_numpy() & name_mask(ev, WAIT_RE))
    if not len(w_rows) or not len(r):
        return none
    all_corr = ev["corr"].to_numpy(dtype=I64)
    corr = all_corr[r]
    lane = ev["lane"].to_numpy()[r].astype(I64)
    pid, tid = ev["pid"].to_numpy(dtype=I64), ev["tid"].to_numpy(dtype=I64)
    by_lane: dict[int, np.ndarray] = {}
    for ln in np.unique(lane).tolist():
        k = np.flatnonzero((lane == ln) & (corr >= 0))
        by_lane[ln] = k[np.argsort(corr[k], kind="stable")]
    lane_of = {(int(pid[r[k[0]]]), int(tid[r[k[0]]])): ln for ln, k in by_lane.items() if len(k)}
    out = []
    for w in w_rows.tolist():
        args = tl.args.get(w)
        stream, record = args.get("wait_on_stream"), args.get("wait_on_cuda_event_record_corr_id")
        if not isinstance(stream, int) or not isinstance(record, int) or record < 0:
            continue
        src_lane = lane_of.get((int(pid[w]), stream))
        dst_lane = lane_of.get((int(pid[w]), int(tid[w])))
        if src_lane is None or dst_lane is None or src_lane == dst_lane:
            continue
        a, b = by_lane[src_lane], by_lane[dst_lane]
        i = int(np.searchsorted(corr[a], record, side="left")) - 1  # last queued before
        j = int(np.searchsorted(corr[b], int(all_corr[w]), side="right"))  # first after
        if i < 0 or j >= len(b) or ts[r[b[j]]] < end[r[a[i]]]:
            continue
        out.append((w, int(r[a[i]]), int(r[b[j]])))
    return np.asarray(out, I64).T.reshape(3, -1) if out else none


def _lane_device(tl: Timeline) -> np.ndarray:
    lanes = tl.lanes
    n = int(lanes["lane"].max()) + 1 if len(lanes) else 0
    out = np.full(max(n, int(tl.events["lane"].max()) + 1 if len(tl.events) else 0), "", object)
    out[lanes["lane"].to_numpy(dtype=I64)] = lanes["device"].astype(str).to_numpy()
    return out


__all__ = [
    "COMM_OP_RE", "SPILL_BYTES", "SYNC_CALL_RE", "SYNC_OP_RE", "WAIT_RE", "Context", "context",
    "with_descendants",
]  # fmt: skip
