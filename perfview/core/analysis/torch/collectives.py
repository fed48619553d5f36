"""Collectives: the NCCL/RCCL kernels of one rank, and the same collective matched across ranks.

A collective is one call that every rank of a process group makes; each rank's GPU runs one
NCCL kernel for it. The kernel starts when that rank *arrives* (its stream reached the call) and
ends when the data has moved, which cannot happen before the last rank arrived. So, per instance:

- arrival skew = last start - first start (how unevenly the ranks got there);
- wait of a rank = last start - its own start (time its kernel sat waiting for peers);
- transfer = end - last start (the part that moved data), the median over ranks;
- the straggler is the last rank to arrive.

Matching: kineto records `Process Group Name` and (newer torch) `Seq` in the kernel's args; when
every rank has a sequence number, instances match on (process group, seq). Otherwise they match
on (process group, n-th collective of that group on the rank): NCCL requires every rank to issue
a communicator's collectives in the same order, so the n-th is the same call everywhere.

Kind and size come from the kernel args (`Collective name`, `In/Out msg nelems`, `dtype`); older
traces carry neither, and then the kind comes from the `nccl:<op>` annotation that launched the
kernel (found through the CUDA correlation id), else from the kernel name (`ncclKernel_AllReduce…`).

CPU collectives (a gloo process group, no GPU): ProcessGroupGloo records each collective as a
`gloo:<op>` annotation on the thread that runs it, with no group name, sequence or size in its
args. A trace with no NCCL/RCCL kernel reads those instead (`cpu_collectives`): the group is the
trace's one process group from `distributedInfo` (else "gloo"), matched across ranks by order.

Bandwidths follow nccl-tests (doc/PERFORMANCE.md): algbw = bytes / time and busbw = algbw × a
factor of the kind and group size n: all-reduce 2(n-1)/n; all-gather, reduce-scatter and
all-to-all (n-1)/n; broadcast, reduce, send/recv 1. Bytes are the larger of the in and out
message (nccl-tests' size S for each kind), time is the transfer time.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import (
    I64,
    comm_kernel_mask,
    gpu_lane_mask,
    kind_mask,
    name_mask,
)
from perfview.core.model import Timeline

# Element sizes of the dtype names kineto writes (c10 ScalarType names and C type names).
DTYPE_BYTES: dict[str, int] = {
    "float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2, "double": 8,
    "float64": 8, "int": 4, "int32": 4, "long": 8, "int64": 8, "short": 2, "int16": 2,
    "byte": 1, "char": 1, "unsigned char": 1, "signed char": 1, "int8": 1, "uint8": 1,
    "int8_t": 1, "uint8_t": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
    "complexfloat": 8, "complexdouble": 16, "uint16": 2, "uint32": 4, "uint64": 8,
}  # fmt: skip
_KERNEL_KIND = re.compile(r"(?i)[nr]ccl(?:Dev)?Kernel_([A-Za-z]+)")
_ANNOTATION = re.compile(r"(?i)^[nr]ccl:(.+)$")
GLOO_RE = r"^gloo:"
_SUFFIXES = ("_into_tensor", "_coalesced", "_base", "_tensor", "_single")
COMM_COLUMNS = {
    "start_ns": "int64", "dur_ns": "int64", "kind": "object", "process_group": "object",
    "pg_size": "int64", "seq": "int64", "in_nelems": "int64", "out_nelems": "int64",
    "dtype": "object", "bytes": "int64", "stream": "int64",
}  # fmt: skip


def normalize_kind(text: str) -> str:
    """One spelling per collective: `nccl:_all_gather_base`, `AllGather` → allgather."""
    kind = text.strip().lower()
    match = _ANNOTATION.match(kind)
    kind = match.group(1) if match else kind
    kind = kind.lstrip("_")
    for suffix in _SUFFIXES:
        kind = kind.removesuffix(suffix)
    return kind.replace("_", "").replace(" ", "") or "unknown"


def kernel_kind(name: str) -> str:
    """The collective a kernel name states (`ncclKernel_AllReduce_RING_LL…` → allreduce)."""
    match = _KERNEL_KIND.search(name)
    return normalize_kind(match.group(1)) if match else "unknown"


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of a kineto dtype name; 0 when unknown (size then reads 0)."""
    return DTYPE_BYTES.get(dtype.strip().lower().replace("at::", ""), 0)


def _int(value: Any, default: int = -1) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default


def _group_size(args: dict[str, Any]) -> int:
    size = _int(args.get("Group size"), 0)
    ranks = args.get("Process Group Ranks")
    if size <= 0 and isinstance(ranks, str) and ranks.startswith("["):
        size = len([r for r in ranks.strip("[]").split(",") if r.strip()])
    return max(size, 0)


def _launching_annotations(timeline: Timeline, rows: np.ndarray) -> dict[int, int]:
    """Kernel row → row of the `nccl:<op>` annotation whose launch made it (via correlation id)."""
    ev = timeline.events
    corr = ev["corr"].to_numpy(dtype=I64)
    runtime = np.flatnonzero(kind_mask(ev, ("runtime",)) & (corr >= 0))
    by_corr = dict(zip(corr[runtime].tolist(), runtime.tolist(), strict=True))
    parent = ev["parent"].to_numpy(dtype=I64)
    names = ev["name"]
    out: dict[int, int] = {}
    for row in rows.tolist():
        node = by_corr.get(int(corr[row]), -1)
        for _ in range(64):  # bounded walk up the CPU stack of the launch
            if node < 0:
                break
            if _ANNOTATION.match(str(names.iat[node])):
                out[row] = node
                break
            node = int(parent[node])
    return out


def _shape_nelems(shape: str) -> int:
    """Elements of the first tensor of an `Input Dims` text like `[[19618307]]`; -1 if none."""
    numbers = re.match(r"^\W*((?:\d+\s*,\s*)*\d+)", shape)
    if not numbers:
        return -1
    return int(np.prod([int(n) for n in numbers.group(1).split(",")]))


def _first_text(value: Any) -> str:
    if isinstance(value, list):
        return str(value[0]) if value else ""
    return str(value) if value is not None else ""


def comm_kernels(timeline: Timeline) -> pd.DataFrame:
    """One row per NCCL/RCCL kernel of a rank, in start order (columns: COMM_COLUMNS).

    start_ns is relative to the trace's origin like every `ts`; kind, process group, seq, sizes
    and dtype come from the args (see the module docstring); -1 / "" / 0 where not recorded.
    """
    ev = timeline.events
    rows = np.flatnonzero(comm_kernel_mask(ev))
    if not len(rows):
        return cpu_collectives(timeline)
    rows = rows[np.argsort(ev["ts"].to_numpy(dtype=I64)[rows], kind="stable")]
    annotations = _launching_annotations(timeline, rows)
    names, shapes = ev["name"], ev["shape"]
    records = []
    for row in rows.tolist():
        args = timeline.args.get(row)
        kind = str(args.get("Collective name") or "")
        in_n, out_n = _int(args.get("In msg nelems")), _int(args.get("Out msg nelems"))
        dtype = str(args.get("dtype") or "")
        note = annotations.get(row)
        if note is not None and (not kind or in_n < 0):
            kind = kind or str(names.iat[note])
            if in_n < 0:
                in_n = out_n = _shape_nelems(str(shapes.iat[note]))
                dtype = dtype or _first_text(timeline.args.get(note).get("Input type"))
        kind = normalize_kind(kind) if kind else kernel_kind(str(names.iat[row]))
        nbytes = max(in_n, out_n) * dtype_bytes(dtype) if max(in_n, out_n) > 0 else 0
        records.append(
            (kind, str(args.get("Process Group Name", "")), _group_size(args),
             _int(args.get("Seq")), in_n, out_n, dtype, nbytes)
        )  # fmt: skip
    cols = ["kind", "process_group", "pg_size", "seq", "in_nelems", "out_nelems", "dtype", "bytes"]
    meta = pd.DataFrame.from_records(records, columns=cols) if records else None
    out = pd.DataFrame(
        {
            "start_ns": ev["ts"].to_numpy(dtype=I64)[rows],
            "dur_ns": ev["dur"].to_numpy(dtype=I64)[rows],
        }
    )
    for col in cols:
        out[col] = meta[col].to_numpy() if meta is not None else np.array([], dtype=object)
    out["stream"] = ev["tid"].to_numpy(dtype=I64)[rows]
    return out.astype(COMM_COLUMNS)


def _only_group(meta: dict[str, Any]) -> tuple[str, int]:
    """The name and size of the trace's process group when it recorded exactly one."""
    info = meta.get("distributedInfo")
    groups = info.get("pg_config") if isinstance(info, dict) else None
    if isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], dict):
        return str(groups[0].get("pg_name", "gloo")), _int(groups[0].get("pg_size"), 0)
    size = _int(info.get("world_size"), 0) if isinstance(info, dict) else 0
    return "gloo", max(size, 0)


def cpu_collectives(timeline: Timeline) -> pd.DataFrame:
    """The `gloo:<op>` collectives of a CPU trace, as `comm_kernels` rows (see module doc)."""
    ev = timeline.events
    rows = np.flatnonzero(name_mask(ev, GLOO_RE) & ~gpu_lane_mask(timeline))
    rows = rows[np.argsort(ev["ts"].to_numpy(dtype=I64)[rows], kind="stable")]
    group, size = _only_group(timeline.meta)
    names = ev["name"].to_numpy()[rows]
    kinds = [normalize_kind(str(n).split(":", 1)[1]) for n in names]
    n = len(rows)
    out = pd.DataFrame(
        {
            "start_ns": ev["ts"].to_numpy(dtype=I64)[rows],
            "dur_ns": ev["dur"].to_numpy(dtype=I64)[rows],
            "kind": np.array(kinds, dtype=object),
            "process_group": np.full(n, group, dtype=object),
            "pg_size": np.full(n, size, dtype=I64),
            "seq": np.full(n, -1, dtype=I64),
            "in_nelems": np.full(n, -1, dtype=I64),
            "out_nelems": np.full(n, -1, dtype=I64),
            "dtype": np.full(n, "", dtype=object),
            "bytes": np.zeros(n, dtype=I64),
            "stream": ev["tid"].to_numpy(dtype=I64)[rows],
        }
    )
    return out.astype(COMM_COLUMNS)


def bus_factor(kind: str, n: int) -> float:
    """nccl-tests' busbw / algbw factor for a collective over n ranks."""
    if n <= 1:
        return 1.0
    if kind == "allreduce":
        return 2.0 * (n - 1) / n
    if kind in ("allgather", "reducescatter", "alltoall", "alltoallv"):
        return (n - 1) / n
    return 1.0


__all__ = [
    "COMM_COLUMNS",
    "bus_factor",
    "comm_kernels",
    "cpu_collectives",
    "dtype_bytes",
    "kernel_kind",
    "normalize_kind",
]
