"""PyTorch CUDA caching-allocator snapshots (`torch.cuda.memory._dump_snapshot()`), columnar.

A snapshot is the allocator's state at one moment (segments reserved from the driver, the blocks
they are split into) plus, when memory history was recorded, a ring buffer of trace entries per
device (alloc, free_requested, free_completed, segment_alloc, segment_free, oom, …). Every
allocation carries a captured stack; stacks repeat a lot (985 k frame dicts in a 2.6 MB sample),
so frames are interned once and a stack is a slice of `stack_frames`.

Stacks are stored innermost first, as torch records them (frame 0 is `torch::unwind::unwind()`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SEGMENT_COLUMNS = (
    "segment",
    "device",
    "address",
    "total_bytes",
    "allocated_bytes",
    "active_bytes",
    "requested_bytes",
    "stream",
    "segment_type",
    "is_expandable",
    "stack",
)
BLOCK_COLUMNS = ("segment", "device", "address", "size_bytes", "requested_bytes", "state", "stack")
TRACE_COLUMNS = ("device", "seq", "action", "addr", "size_bytes", "stream", "ts_ns", "stack")


@dataclass
class CudaSnapshot:
    """One snapshot. `stack` columns index stacks: frames of stack s are
    `frames.iloc[stack_frames[stack_offsets[s]:stack_offsets[s + 1]]]` (stack 0 is empty).

    `trace.ts_ns` is absolute unix ns when the snapshot has `time_us`, else -1 (older torch);
    views then order by `seq`, the entry's index in its device's ring buffer.
    """

    segments: pd.DataFrame
    blocks: pd.DataFrame
    trace: pd.DataFrame
    frames: pd.DataFrame  # name, file, line
    stack_offsets: np.ndarray  # int64, n_stacks + 1
    stack_frames: np.ndarray  # int32 frame ids
    has_time: bool = False
    keys: list[str] = field(default_factory=list)
    allocator_settings: dict[str, Any] = field(default_factory=dict)
    # device → (x, labels, bands) for the GUI's timeline, computed by the loader (off-thread).
    bands: dict[int, tuple[np.ndarray, list[str], np.ndarray]] = field(default_factory=dict)

    def stack(self, stack_id: int) -> np.ndarray:
        """Frame ids of one stack, innermost first."""
        lo, hi = self.stack_offsets[stack_id], self.stack_offsets[stack_id + 1]
        return self.stack_frames[lo:hi]


# Allocator and unwinder frames at the top of every stack: skipped when naming a stack's site.
INTERNAL_PREFIXES = (
    "torch::unwind",
    "torch::CapturedTraceback",
    "torch::cuda::",
    "c10::cuda::CUDACachingAllocator",
    "at::TensorBase at::detail::_empty",
    "at::detail::empty",
    "at::detail::_empty",
)
_OPS = "at::_ops::"


def _is_python(file: str) -> bool:
    return file.endswith(".py") or file.startswith("<")


def _op_label(name: str) -> str:
    """'at::_ops::mul_Tensor::call(...)' → 'mul_Tensor'; other names as they are."""
    if name.startswith(_OPS):
        return name[len(_OPS) :].split("::", 1)[0]
    return name


def site_labels(snap: CudaSnapshot) -> tuple[np.ndarray, np.ndarray]:
    """Per stack: (innermost Python frame 'func (file:line)', the op or first C++ frame).

    What a person wants to know of an allocation is the line of their model that made it; the
    op below it comes second (the innermost `at::_ops::` frame, else the first frame past the
    allocator's own). Both are '' where the stack has none.
    """
    names = snap.frames["name"].to_numpy(dtype=object)
    files = snap.frames["file"].to_numpy(dtype=object)
    lines = snap.frames["line"].to_numpy(dtype=np.int64)
    is_py = np.array([_is_python(str(f)) for f in files], dtype=bool)
    is_op = np.array([str(n).startswith(_OPS) for n in names], dtype=bool)
    is_internal = np.array([str(n).startswith(INTERNAL_PREFIXES) for n in names], dtype=bool)
    n = len(snap.stack_offsets) - 1
    py = np.full(n, "", dtype=object)
    cpp = np.full(n, "", dtype=object)
    for s in range(n):
        ids = snap.stack(s)
        if len(ids) == 0:
            continue
        hits = np.flatnonzero(is_py[ids])
        if len(hits):
            f = int(ids[hits[0]])
            short = str(files[f]).rsplit("/", 1)[-1]
            py[s] = f"{names[f]} ({short}:{lines[f]})"
        ops = np.flatnonzero(is_op[ids])
        if not len(ops):
            ops = np.flatnonzero(~is_internal[ids])
        if len(ops):
            cpp[s] = _op_label(str(names[int(ids[ops[0]])]))
    return py, cpp


__all__ = [
    "BLOCK_COLUMNS",
    "INTERNAL_PREFIXES",
    "SEGMENT_COLUMNS",
    "TRACE_COLUMNS",
    "CudaSnapshot",
    "site_labels",
]
