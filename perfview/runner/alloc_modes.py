"""Recorders for allocation captures: `--mode memray` and `--mode cuda-memory`.

memray: the script runs inside `memray.Tracker`, which writes the same capture as
`memray run -o FILE` (LZ4-compressed on exit; `--native` adds C/C++ frames).

cuda-memory: `torch.cuda.memory._record_memory_history()` is switched on before the script
and the allocator snapshot (`_dump_snapshot`, the pickle PyTorch's memory_viz reads) is written
when the script ends, however it ends, and also the moment an out-of-memory error happens
(torch's OOM observer), so a process that dies right after still leaves the snapshot with the
allocations that led to the OOM. Without CUDA the mode refuses before the script runs.

Stdlib only at import time: memray and torch are imported inside the mode functions.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from perfview.core.atomic import atomic_path
from perfview.runner.spec import RunSpec, ScriptResult, ScriptRunner


def _torch() -> Any:
    """torch, imported at call time in the recorder child only (perfview never imports it)."""
    return importlib.import_module("torch")


def record_memray(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """Run the script under memray's Tracker; the capture is complete even if it fails."""
    import memray

    output = Path(str(spec.output))
    output.unlink(missing_ok=True)  # memray refuses to overwrite; the user asked for this path
    destination = memray.FileDestination(str(output), overwrite=True, compress_on_exit=True)
    with memray.Tracker(destination=destination, native_traces=spec.options.native):
        result = run()
    return result


def cuda_refusal() -> str | None:
    """One sentence when this interpreter has no CUDA device for `cuda-memory`, else None."""
    try:
        torch = _torch()
    except ImportError:
        return "perfview: mode 'cuda-memory' needs torch, which this interpreter cannot import"
    if not torch.cuda.is_available():
        return (
            "perfview: mode 'cuda-memory' records the CUDA caching allocator, but "
            "torch.cuda.is_available() is False here (no CUDA device or a CPU-only torch)"
        )
    return None


def _dump(torch: Any, output: Path) -> None:
    with atomic_path(str(output)) as tmp:
        torch.cuda.memory._dump_snapshot(str(tmp))


def record_cuda_memory(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """Record allocator history while the script runs; dump the snapshot at exit and on OOM."""
    torch = _torch()

    output = Path(str(spec.output))
    torch.cuda.memory._record_memory_history(max_entries=spec.options.max_entries)
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)

    def on_oom(device: int, alloc: int, device_alloc: int, device_free: int) -> None:
        _dump(torch, output)

    if attach is not None:
        attach(on_oom)
    try:
        return run()
    finally:
        _dump(torch, output)
        torch.cuda.memory._record_memory_history(enabled=None)
