"""HTA 0.5.0's GPU breakdowns recomputed from perfview's own columns, with HTA's definitions.

What HTA keeps (its parser, `Trace._filter_irrelevant_gpu_kernels`): the GPU activities
(kernels, copies, memsets) whose launch began before the last ProfilerStep started (with two
or more steps; all of them otherwise), times in whole µs as the trace writes them. Its kernel
types are by name: communication (`nccl…Kernel`), memory (`Memcpy`/`Memset`), computation
(the rest). The tests compare these with HTA's own output (when installed) and with perfview's
pages, whose definitions differ as the pages state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import streams
from perfview.core.analysis.torch.common import (
    GPU_KINDS,
    I64,
    gpu_lane_mask,
    kind_mask,
    names_at,
    step_rows,
)
from perfview.core.model import Timeline

# hta/utils/utils.py
_COMM = re.compile(r"^nccl.*Kernel")
_MEMORY = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
TYPES = ("COMPUTATION", "COMMUNICATION", "MEMORY")


# HTA 0.5.0's figures (TraceAnalysis defaults), pinned by tests/agreement/test_hta_breakdown.py.
# Each case is one HTA run: its files are the ranks, in order.
CASES = {
    "nccl": ["kineto_gpu/hta_nccl_data.json.gz"],
    "sampled": ["kineto_gpu/hta_sampled_rank-0.json.gz", "kineto_gpu/hta_sampled_rank-1.json.gz"],
    "mi250": ["kineto_gpu/hta_mi250_rocm6.2.json.gz"],
    "resnet": ["kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"],
}
# get_temporal_breakdown per rank: idle, compute, non-compute, kernel time (µs)
HTA_TEMPORAL = {
    "nccl": [(338781, 75169, 21636, 435586)],
    "sampled": [(321378, 106252, 172428, 600058), (328671, 135548, 136455, 600674)],
    "mi250": [(8780, 96, 35, 8911)],
    "resnet": [(327463, 492891, 10140, 830494)],
}
# get_gpu_kernel_breakdown's kernel-type table (µs, summed over the ranks; zero rows left out)
HTA_TYPES = {
    "nccl": {
        "COMPUTATION": 71696,
        "COMMUNICATION": 20621,
        "COMPUTATION overlapping COMMUNICATION": 3473,
        "MEMORY": 831,
        "COMMUNICATION overlapping MEMORY": 184,
    },
    "sampled": {
        "COMMUNICATION": 305584,
        "COMPUTATION": 185023,
        "COMPUTATION overlapping COMMUNICATION": 56747,
        "MEMORY": 2288,
        "COMMUNICATION overlapping MEMORY": 1011,
        "COMPUTATION overlapping MEMORY": 18,
        "COMPUTATION overlapping COMMUNICATION overlapping MEMORY": 12,
    },
    "mi250": {"COMPUTATION": 96, "MEMORY": 35},
    "resnet": {"COMPUTATION": 492891, "MEMORY": 10140},
}
# the per-kernel table's largest named row per rank: (name prefix, µs)
HTA_TOP_KERNEL = {
    "nccl": [("ncclKernel_AllReduce_RING_LL_Sum_float", 24204)],
    "sampled": [
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 195327),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 168027),
    ],
    "mi250": [("Memcpy HtoD", 35)],
    "resnet": [("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>", 67252)],
}


@dataclass
class Kept:
    """HTA's GPU activities of one rank: start and end µs, name, kernel type."""

    start_us: np.ndarray
    end_us: np.ndarray
    name: np.ndarray
    kind: np.ndarray  # one of TYPES


def kept(tl: Timeline) -> Kept:
    ev = tl.events
    rows = np.flatnonzero(kind_mask(ev, GPU_KINDS) & gpu_lane_mask(tl))
    ts = ev["ts"].to_numpy(dtype=I64)
    launch = streams._launch_rows(tl, rows)
    keep = launch >= 0
    steps = step_rows(tl)
    if len(steps) >= 2:
        last = int(steps["start_ns"].max())
        keep &= ts[np.clip(launch, 0, None)] < last
    rows = rows[keep]
    # HTA's parser: a fractional µs start rounded up, the end rounded down (so a sub-µs
    # activity can end before it starts), in absolute µs: the rounding depends on the origin
    at = ts[rows] + tl.origin_ns
    start = -(-at // 1000)
    end = (at + ev["dur"].to_numpy(dtype=I64)[rows]) // 1000
    names = np.asarray(names_at(ev, rows), dtype=object)
    kind = np.array(
        [
            "COMMUNICATION" if _COMM.match(n) else "MEMORY" if _MEMORY.match(n) else "COMPUTATION"
            for n in names
        ],
        dtype=object,
    )
    return Kept(start, end, names, kind)


def _merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hta.utils.utils.merge_kernel_intervals: sorted by start, a new group where a start is
    after every earlier end; a group spans its smallest start to its largest end."""
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    if not len(s):
        return s, e
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > np.maximum.accumulate(e)[:-1]
    group = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first)[: group[-1] + 1]


def _length(start: np.ndarray, end: np.ndarray) -> int:
    s, e = _merged(start, end)
    return int((e - s).sum())


def temporal(k: Kept) -> dict[str, int]:
    """get_temporal_breakdown's µs: kernel_time from the first activity's start to the last
    one's end; idle the part no activity covers; compute the union of computation kernels;
    non-compute the rest."""
    if not len(k.start_us):
        return {"idle": 0, "compute": 0, "non_compute": 0, "kernel_time": 0}
    total = int(k.end_us.max() - k.start_us.min())
    busy = _length(k.start_us, k.end_us)
    comp = k.kind == "COMPUTATION"
    compute = _length(k.start_us[comp], k.end_us[comp])
    return {
        "idle": total - busy,
        "compute": compute,
        "non_compute": busy - compute,
        "kernel_time": total,
    }


def kernel_types(k: Kept) -> dict[str, int]:
    """get_gpu_kernel_breakdown's first table: µs in which exactly these types run
    ("COMPUTATION overlapping COMMUNICATION", …), over the union of the types' busy time."""
    bounds: list[np.ndarray] = []
    merged = {}
    for t in TYPES:
        sel = k.kind == t
        merged[t] = _merged(k.start_us[sel], k.end_us[sel])
        bounds += list(merged[t])
    if not bounds or not sum(len(b) for b in bounds):
        return {}
    cuts = np.unique(np.concatenate([b for b in bounds if len(b)]))
    seg_start, seg_len = cuts[:-1], np.diff(cuts)
    out: dict[str, int] = {}
    codes = np.zeros(len(seg_start), dtype=I64)
    for bit, t in enumerate(TYPES):
        s, e = merged[t]
        if not len(s):
            continue
        i = np.searchsorted(s, seg_start, side="right") - 1
        inside = (i >= 0) & (seg_start < e[np.clip(i, 0, None)])
        codes |= inside.astype(I64) << bit
    for code in np.unique(codes[codes > 0]):
        label = " overlapping ".join(t for bit, t in enumerate(TYPES) if code >> bit & 1)
        out[label] = int(seg_len[codes == code].sum())
    return out


def kernel_sums(k: Kept) -> pd.Series:
    """get_gpu_kernel_breakdown's second table before its top-N grouping: µs per kernel name
    (`TraceAnalysis` includes the memory kernels)."""
    frame = pd.DataFrame({"name": k.name, "dur": k.end_us - k.start_us})
    return frame.groupby("name")["dur"].sum()
