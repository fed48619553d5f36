"""Write tests/data/accelerators/*.json: one tiny kineto-shaped trace per accelerator backend.

    python3 scripts/make_accelerator_fixtures.py [--out tests/data/accelerators]

Each trace is what kineto writes for that backend, reduced to one op: a ProfilerStep, an
`aten::mm` cpu_op, the runtime call that launches the device work (with its `correlation` id)
and the device activity on device 0, stream 1. Categories are kineto's ActivityType names:

    cuda         cuda_runtime → kernel, gpu_memcpy           deviceProperties: NVIDIA
    rocm         cuda_runtime (hipLaunchKernel) → kernel     deviceProperties: AMD Instinct
    xpu          xpu_runtime → kernel, gpu_memcpy            deviceProperties: Intel
    mtia         mtia_runtime → mtia_ccp_events              (no deviceProperties)
    hpu          cpu_op only → hpu_op                        (no deviceProperties)
    privateuse1  privateuse1_runtime → kernel                (no deviceProperties)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# backend: (runtime category, launch call, device category, copy category, device name)
BACKENDS: dict[str, tuple[str | None, str, str, str | None, str | None]] = {
    "cuda": ("cuda_runtime", "cudaLaunchKernel", "kernel", "gpu_memcpy", "NVIDIA H100"),
    "rocm": ("cuda_runtime", "hipLaunchKernel", "kernel", None, "AMD Instinct MI300X"),
    "xpu": ("xpu_runtime", "zeCommandListAppendLaunchKernel", "kernel", "gpu_memcpy",
            "Intel(R) Data Center GPU Max 1550"),
    "mtia": ("mtia_runtime", "mtiaLaunchKernel", "mtia_ccp_events", None, None),
    "hpu": (None, "", "hpu_op", None, None),
    "privateuse1": ("privateuse1_runtime", "launchKernel", "kernel", None, None),
}  # fmt: skip


def _x(cat: str, name: str, pid: int, tid: int, ts: int, dur: int, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def trace(kind: str) -> dict[str, Any]:
    """The kineto-shaped trace of one backend (see the module docstring)."""
    runtime, launch, device_cat, copy_cat, device_name = BACKENDS[kind]
    host, dev = 100, 0
    events = [
        _x("user_annotation", "ProfilerStep#1", host, host, 0, 1000),
        _x("cpu_op", "aten::mm", host, host, 100, 400, **{"External id": 7}),
        _x(device_cat, "gemm_kernel", dev, 1, 300, 500, correlation=11, **{"External id": 7}),
    ]
    if runtime is not None:
        events.append(_x(runtime, launch, host, host, 150, 50, correlation=11))
    if copy_cat is not None:
        events.append(_x(copy_cat, "Memcpy HtoD", dev, 1, 850, 100, correlation=12))
    events += [
        {"ph": "M", "name": "process_name", "pid": host, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": host, "tid": host, "args": {"name": "main"}},
    ]
    doc: dict[str, Any] = {"schemaVersion": 1, "traceEvents": events}
    if device_name is not None:
        doc["deviceProperties"] = [{"id": 0, "name": device_name, "totalGlobalMem": 2**36}]
    if kind == "rocm":
        doc["roctracer_version"] = "4.1"
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "accelerators")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in BACKENDS:
        path = args.out / f"{kind}.json"
        path.write_text(json.dumps(trace(kind), indent=1) + "\n")
        print(path)


if __name__ == "__main__":
    main()
