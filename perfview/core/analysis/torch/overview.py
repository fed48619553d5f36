"""Overview page: devices, step times, the per-step time breakdown and GPU utilisation.

Step breakdown (the TensorBoard profiler plugin's definition, with HTA's communication class):
each instant of a `ProfilerStep#N` window (the CPU-side slice) is given to exactly one category,
the first of these that is active at that instant anywhere in the trace:

1. `comm`      a collective kernel (NCCL/RCCL, by kernel name) runs on any GPU stream;
2. `kernel`    any other GPU kernel runs;
3. `memcpy`    a GPU memcpy runs;
4. `memset`    a GPU memset runs;
5. `runtime`   a CUDA/HIP runtime or driver call runs on a CPU thread (GPU idle);
6. `dataloader` an `enumerate(DataLoader)…` slice is open on a CPU thread;
7. `cpu_exec`  any other CPU operator (cpu_op) runs;
8. `other`     none of the above (GPU and profiled CPU work both idle).

The eight columns therefore add up to the step duration. GPU work is counted by when it ran,
not by which step launched it (kernels queued late in a step may run in the next one).

Utilisation (`utilization`): per device and per stream, over the analysis window (first step
start to last step end, or the whole trace without steps), busy = union of kernel, memcpy and
memset time; it splits into `comm` (collective kernels), `compute` (other kernels), `memory`
(memcpy/memset while no kernel runs) and `idle`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import backends
from perfview.core.analysis.torch.common import (
    DATALOADER_PREFIX,
    I64,
    analysis_window,
    comm_kernel_mask,
    device_properties,
    kind_mask,
    lane_devices,
    name_mask,
    outermost,
    per_events,
    step_rows,
)
from perfview.core.analysis.torch.unions import merge_intervals, partition
from perfview.core.model import Timeline

BREAKDOWN = ("comm", "kernel", "memcpy", "memset", "runtime", "dataloader", "cpu_exec", "other")


def devices_table(timeline: Timeline) -> pd.DataFrame:
    """One row per GPU from deviceProperties: id, name, memory_bytes, sms, compute_capability.

    Also max_threads_per_sm, regs_per_sm, shared_mem_per_sm_bytes (what occupancy depends on)
    and `used`: kineto lists every GPU of the machine, `used` marks those the trace has work on
    (all of them when the lanes name no GPU). Devices with work but no properties (MTIA, HPU,
    PrivateUse1 traces have none) get a row too; `backend` names the accelerator backend.
    """
    used_ids = {
        int(d.split(":", 1)[1])
        for d in timeline.lanes["device"].astype(str)
        if d.startswith("gpu:") and d.split(":", 1)[1].isdigit()
    }
    kind = backends.backend(timeline)
    rows = [
        {
            "id": int(p.get("id", i)),
            "name": str(p.get("name", "")),
            "memory_bytes": int(p.get("totalGlobalMem", 0) or 0),
            "sms": int(p.get("numSms", 0) or 0),
            "compute_capability": f"{p.get('computeMajor', '?')}.{p.get('computeMinor', '?')}",
            "max_threads_per_sm": int(p.get("maxThreadsPerMultiprocessor", 0) or 0),
            "regs_per_sm": int(p.get("regsPerMultiprocessor", 0) or 0),
            "shared_mem_per_sm_bytes": int(p.get("sharedMemPerMultiprocessor", 0) or 0),
            "used": not used_ids or int(p.get("id", i)) in used_ids,
        }
        for i, p in enumerate(device_properties(timeline))
    ]
    listed = {row["id"] for row in rows}
    label = backends.device_label(kind)
    rows += [  # devices with work but no deviceProperties entry (MTIA, HPU, PrivateUse1 …)
        {"id": dev, "name": f"{label} {dev}", "memory_bytes": 0, "sms": 0,
         "compute_capability": "", "max_threads_per_sm": 0, "regs_per_sm": 0,
         "shared_mem_per_sm_bytes": 0, "used": True}
        for dev in sorted(used_ids - listed)
    ]  # fmt: skip
    cols = ["id", "name", "memory_bytes", "sms", "compute_capability", "max_threads_per_sm",
            "regs_per_sm", "shared_mem_per_sm_bytes", "used"]  # fmt: skip
    out = pd.DataFrame(rows, columns=cols)
    out["backend"] = kind or ""
    out["used"] = out["used"].astype(bool)
    return out


TRITON_MIN_CAPABILITY = 7.0  # torch.compile's GPU backend refuses older NVIDIA GPUs
TF32_MIN_CAPABILITY = 8.0  # TF32 and bf16 tensor cores arrived with Ampere


def cuda_capability(timeline: Timeline) -> tuple[str, float] | None:
    """(name, compute capability) of the oldest NVIDIA GPU the trace ran work on.

    Advice that depends on the hardware (TF32/bf16 need 8.0, fp16 tensor cores and
    torch.compile's Triton backend 7.0) must hold on every GPU used, so the oldest one
    decides. None when the trace is not CUDA or records no capability.
    """
    devices = devices_table(timeline)
    used = devices[devices["used"]]
    if not len(used) or str(used["backend"].iat[0]) not in ("CUDA", "GPU"):
        return None
    known = [
        (float(cap), str(name))
        for cap, name in zip(used["compute_capability"], used["name"], strict=True)
        if str(cap).replace(".", "", 1).isdigit()
    ]
    if not known:
        return None
    cap, name = min(known)
    return name, cap


def _intervals(timeline: Timeline, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ev = timeline.events
    ts = ev["ts"].to_numpy(dtype=I64)[mask]
    return ts, ts + ev["dur"].to_numpy(dtype=I64)[mask]


def category_intervals(timeline: Timeline) -> list[tuple[np.ndarray, np.ndarray]]:
    """The union of each BREAKDOWN category except `other`, in priority order, as sorted,
    disjoint (start, end) arrays: made one category at a time from its outermost slices
    (`outermost`, which cover what all of them do), so only one category's mask and
    intervals are alive beside the unions made before it."""
    ev = timeline.events
    dataloader = "^" + DATALOADER_PREFIX.replace("(", r"\(").replace(")", r"\)")
    masks: list[Callable[[], np.ndarray]] = [
        lambda: comm_kernel_mask(ev),
        lambda: kind_mask(ev, ("kernel",)) & ~comm_kernel_mask(ev),
        lambda: kind_mask(ev, ("memcpy",)),
        lambda: kind_mask(ev, ("memset",)),
        lambda: kind_mask(ev, ("runtime",)),
        lambda: name_mask(ev, dataloader),
        lambda: kind_mask(ev, ("cpu_op",)),
    ]
    return [merge_intervals(*_intervals(timeline, outermost(ev, mask()))) for mask in masks]


@per_events
def steps_table(timeline: Timeline) -> pd.DataFrame:
    """One row per ProfilerStep: step, start_ns, dur_ns, then `<category>_ns` per BREAKDOWN.

    See the module docstring for the categories; they sum to dur_ns. Also gpu_busy_pct: the
    share of the step in which some kernel, memcpy or memset ran.
    """
    steps = step_rows(timeline)
    parts = partition(
        category_intervals(timeline),
        steps["start_ns"].to_numpy(dtype=I64),
        steps["end_ns"].to_numpy(dtype=I64),
    )
    out = steps[["step", "start_ns", "dur_ns"]].copy()
    for i, name in enumerate(BREAKDOWN):
        out[f"{name}_ns"] = parts[:, i]
    busy = parts[:, :4].sum(axis=1)
    dur = out["dur_ns"].to_numpy(dtype=np.float64)
    out["gpu_busy_pct"] = np.where(dur > 0, busy * 100.0 / np.where(dur > 0, dur, 1), np.nan)
    return out


@dataclass(frozen=True)
class StepStats:
    """Step-time statistics over the ProfilerStep slices (all 0 when the trace has none)."""

    count: int
    mean_ns: float
    median_ns: float
    min_ns: int
    max_ns: int


def step_stats(timeline: Timeline) -> StepStats:
    """count, mean, median, min and max of the step durations."""
    dur = step_rows(timeline)["dur_ns"].to_numpy(dtype=I64)
    if not len(dur):
        return StepStats(0, 0.0, 0.0, 0, 0)
    return StepStats(
        len(dur), float(dur.mean()), float(np.median(dur)), int(dur.min()), int(dur.max())
    )


# The split's window and priority, beside HTA's temporal and kernel-type breakdowns of the same
# trace (tests/agreement/test_hta_breakdown.py recomputes HTA's figures exactly from these
# columns with its definition).
UTILIZATION_DEFINITION = (
    "Each instant of the analysis window (every ProfilerStep, else the whole trace) goes to one "
    "class, communication kernels first, then the other kernels (compute), then copies and "
    "memsets (memory), else idle; HTA's temporal breakdown measures from the first to the last "
    "GPU activity launched before the last ProfilerStep, in whole µs, and counts compute that "
    "overlaps communication as compute, and its kernel-type breakdown keeps such overlaps as "
    'classes of their own ("COMPUTATION overlapping COMMUNICATION")'
)


@per_events
def utilization_table(timeline: Timeline) -> pd.DataFrame:
    """GPU busy / idle split per device (stream "all") and per stream, over the analysis window.

    Columns: device, stream, window_ns, busy_ns, compute_ns, comm_ns, memory_ns, idle_ns,
    utilization_pct (busy / window). compute + comm + memory + idle = window.
    """
    ev = timeline.events
    lo, hi = analysis_window(timeline)
    dev = lane_devices(timeline)
    gpu_work = kind_mask(ev, ("kernel", "memcpy", "memset"))
    comm = comm_kernel_mask(ev)
    kernel = kind_mask(ev, ("kernel",)) & ~comm
    memory = kind_mask(ev, ("memcpy", "memset"))
    tid = ev["tid"].to_numpy(dtype=I64)
    lanes = timeline.lanes.set_index("lane")
    rows = []
    devices = sorted({str(d) for d in pd.unique(dev[gpu_work])})
    for device in devices:
        on_dev = dev == device
        streams = sorted(set(tid[on_dev & gpu_work].tolist()))
        groups: list[tuple[str, np.ndarray]] = [("all", on_dev)]
        for stream in streams:
            sel = on_dev & (tid == stream)
            lane_ids = ev["lane"].to_numpy()[sel]
            label = str(lanes["thread"].get(int(lane_ids[0]), stream)) if len(lane_ids) else ""
            groups.append((label, sel))
        for label, sel in groups:
            cats = [_intervals(timeline, sel & m) for m in (comm, kernel, memory)]
            p = partition(cats, np.array([lo], dtype=I64), np.array([hi], dtype=I64))[0]
            window = hi - lo
            busy = int(p[:3].sum())
            rows.append(
                {
                    "device": device,
                    "stream": label,
                    "window_ns": window,
                    "busy_ns": busy,
                    "compute_ns": int(p[1]),
                    "comm_ns": int(p[0]),
                    "memory_ns": int(p[2]),
                    "idle_ns": int(p[3]),
                    "utilization_pct": busy * 100.0 / window if window > 0 else np.nan,
                }
            )
    cols = ["device", "stream", "window_ns", "busy_ns", "compute_ns", "comm_ns", "memory_ns",
            "idle_ns", "utilization_pct"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


__all__ = [
    "BREAKDOWN",
    "TF32_MIN_CAPABILITY",
    "TRITON_MIN_CAPABILITY",
    "UTILIZATION_DEFINITION",
    "StepStats",
    "category_intervals",
    "cuda_capability",
    "devices_table",
    "step_stats",
    "steps_table",
    "utilization_table",
]
