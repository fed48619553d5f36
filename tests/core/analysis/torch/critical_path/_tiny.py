"""Tiny kineto-style traces whose critical path is known by construction, written as Chrome
trace JSON and loaded through perfview's own loader. Times are whole microseconds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfview.core.model import Timeline
from perfview.loaders import load

CPU_PID, CPU_TID = 100, 1
US = 1000  # ns per µs

# (name, cat, ts_us, dur_us, correlation or None, stream or None)
Ev = tuple[str, str, int, int, int | None, int | None]


def write(
    path: Path, events: list[Ev], step_us: int = 100, meta: dict[str, Any] | None = None
) -> Path:
    """A trace with ProfilerStep#1 over [0, step_us] and `events` (CPU ones on one thread,
    GPU ones on pid 0, tid = stream)."""
    out: list[dict[str, Any]] = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": CPU_PID,
         "tid": CPU_TID, "ts": 0, "dur": step_us, "args": {}},
    ]  # fmt: skip
    for name, cat, ts, dur, corr, stream in events:
        args: dict[str, Any] = {} if corr is None else {"correlation": corr}
        gpu = stream is not None
        if gpu:
            args.update({"device": 0, "stream": stream})
        out.append({
            "ph": "X", "cat": cat, "name": name, "pid": 0 if gpu else CPU_PID,
            "tid": stream if gpu else CPU_TID, "ts": ts, "dur": dur, "args": args,
        })  # fmt: skip
    out.append({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}})
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "test"}],
           "traceEvents": out, **(meta or {})}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def loaded(path: Path) -> Timeline:
    tl = load(path).timeline
    assert tl is not None
    return tl


def launch(ts: int, dur: int, corr: int, name: str = "cudaLaunchKernel") -> Ev:
    return (name, "cuda_runtime", ts, dur, corr, None)


def kernel(name: str, ts: int, dur: int, corr: int, stream: int = 7) -> Ev:
    return (name, "kernel", ts, dur, corr, stream)


def op(name: str, ts: int, dur: int) -> Ev:
    return (name, "cpu_op", ts, dur, None, None)


def sync(name: str, ts: int, dur: int) -> Ev:
    return (name, "cuda_runtime", ts, dur, None, None)


# CPU-bound: the GPU has one short kernel; the step is CPU ops end to end.
CPU_BOUND = [
    op("aten::mm", 10, 30), launch(20, 5, 1), kernel("k1", 30, 5, 1),
    op("aten::add", 50, 40),
]  # fmt: skip
# GPU-bound: two 40 µs kernels queued early; the host waits in cudaDeviceSynchronize.
GPU_BOUND = [
    launch(5, 5, 1), kernel("k1_gemm", 12, 40, 1),
    launch(15, 5, 2), kernel("k2", 52, 40, 2),
    sync("cudaDeviceSynchronize", 25, 70),
]  # fmt: skip
# Sync-bound: the sync returns 70 µs after the only kernel it waited for ended.
SYNC_BOUND = [
    launch(5, 5, 1), kernel("k1", 12, 8, 1), sync("cudaStreamSynchronize", 10, 80),
]  # fmt: skip
# Launch-bound: the kernel starts 55 µs after its launch call began, on an idle GPU.
LAUNCH_BOUND = [
    launch(5, 5, 1), kernel("k1", 60, 5, 1), sync("cudaDeviceSynchronize", 12, 58),
    op("aten::relu", 75, 20),
]  # fmt: skip
