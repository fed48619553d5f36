"""Kernels page: GPU kernels by name with their launch configuration and tensor-core use.

Launch columns come from each kernel's args (grid, block, registers per thread, shared memory,
est. achieved occupancy %), decoded only for kernel rows. A kernel name can be launched with
different configurations; the table shows the configuration of the most time-consuming launch
of that name and the duration-weighted mean occupancy (what the TensorBoard plugin reports).

Tensor-core use is read from the kernel name, as the plugin did before CUPTI metrics were
available: cuBLAS/cuDNN/CUTLASS name their tensor-core kernels with an MMA shape (`s1688`,
`h884`, `s16816`, `i8816`…), `hmma`/`wmma`/`xmma`/`imma`/`gmma`, `tensorop`, `tf32`,
`bf16`/`fp16` gemm variants, or Hopper `sm90_…gmma`. ROCm kernels using matrix cores say
`MFMA` or, in rocBLAS/Tensile names, `_MI16x16x1_` (the matrix-instruction shape).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import (
    I64,
    decode_args,
    kind_mask,
    name_mask,
    per_events,
    text,
)
from perfview.core.analysis.torch.op_kernels import launches
from perfview.core.model import Timeline

TENSOR_CORE_RE = (
    r"(?i)(?:[hsib](?:884|1688|16816|8816|16832)|hmma|wmma|xmma|imma|gmma|mfma|tensorop"
    r"|tf32|bf16.*gemm|gemm.*bf16|f16.*gemm|gemm.*f16|sm[89]0_xmma|cutlass.*tensor|_MI\d+x\d+x\d+_)"
)
# Matrix-multiply kernels (cuBLAS/cuDNN/CUTLASS/rocBLAS Tensile `Cijk_`); fbgemm is not one.
GEMM_RE = r"(?i)(?:(?<!fb)gemm|cublas|matmul|Cijk_)"

_ARGS = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "est. achieved occupancy %",
    "blocks per SM",
)


def _dims(values: list[object]) -> np.ndarray:
    """[x, y, z] lists → "x×y×z" text ("" when absent), formatted once per distinct value
    (a big trace repeats a few launch shapes hundreds of thousands of times)."""
    seen: dict[tuple[object, ...], str] = {}
    out = []
    for v in values:
        if isinstance(v, list) and v:
            try:
                key = tuple(v)
                text = seen.get(key)
            except TypeError:  # unhashable items (nested lists): format every time
                key, text = None, None
            if text is None:
                text = "×".join(str(int(x)) if isinstance(x, int | float) else str(x) for x in v)
                if key is not None:
                    seen[key] = text
            out.append(text)
        else:
            out.append("")
    return np.asarray(out, dtype=object)


def _numbers(values: list[object]) -> np.ndarray:
    """Numbers as float64 (nan when absent or not a number)."""
    try:  # msgspec gives int, float or None: numpy converts those at C speed (None → nan)
        out = np.array(values, dtype=np.float64)
        if not any(isinstance(v, bool) for v in values[:1]):
            return out
    except (TypeError, ValueError):
        pass
    return np.asarray(
        [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else np.nan
         for v in values],
        dtype=np.float64,
    )  # fmt: skip


@per_events
def kernel_rows(timeline: Timeline) -> pd.DataFrame:
    """Every kernel launch: row, name, ts, dur, launch columns, tensor_cores, op (launching op).

    The per-launch table the kernel page's detail list, the Kernels table and the
    recommendations use: remembered (`per_events`), as decoding every kernel's args is the
    costly part of both the Kernels table and the page's data.
    """
    ev = timeline.events
    mask = kind_mask(ev, ("kernel",))
    rows = np.flatnonzero(mask).astype(I64)
    args = decode_args(timeline, rows, _ARGS)
    links = launches(timeline).set_index("gpu_row")["op_row"]
    op_row = links.reindex(rows).fillna(-1).to_numpy(dtype=I64)
    names = ev["name"].array  # categorical: the rows' names through their codes
    op = np.where(op_row >= 0, text(names.take(np.clip(op_row, 0, None))), "")
    return pd.DataFrame(
        {
            "row": rows,
            "name": _plain(text(names.take(rows))),
            "ts_ns": ev["ts"].to_numpy(dtype=I64)[rows],
            "dur_ns": ev["dur"].to_numpy(dtype=I64)[rows],
            "grid": _plain(_dims(args["grid"])),
            "block": _plain(_dims(args["block"])),
            "registers_per_thread": _numbers(args["registers per thread"]),
            "shared_memory_bytes": _numbers(args["shared memory"]),
            "blocks_per_sm": _numbers(args["blocks per SM"]),
            "occupancy_pct": _numbers(args["est. achieved occupancy %"]),
            "tensor_cores": name_mask(ev, TENSOR_CORE_RE)[rows],
            "gemm": name_mask(ev, GEMM_RE)[rows],
            "op": _plain(op),
        }
    )


def _plain(values: np.ndarray) -> pd.Series:
    """Text kept as Python strings: a frame made from them would convert each column to
    Arrow strings first (pandas' default: ~0.09 s of the Kernels page on a 100 MB trace)."""
    return pd.Series(values, dtype=object, copy=False)


# What the Kernels page sums, beside HTA's get_gpu_kernel_breakdown of the same trace.
KERNELS_DEFINITION = (
    "Every GPU kernel of the trace, summed by its full name in ns; HTA's kernel breakdown sums "
    "only the activities launched before the last ProfilerStep began, in whole µs, lists copies "
    'and memsets among them, and groups all but its top kernels of each type as "others"'
)


def kernels_table(timeline: Timeline) -> pd.DataFrame:
    """Kernels by name, most total time first.

    Columns: name, calls, total_ns, mean_ns, min_ns, max_ns, total_pct, grid, block,
    registers_per_thread, shared_memory_bytes, blocks_per_sm, occupancy_pct (duration-weighted
    mean), tensor_cores (bool), op (the op that spent most time launching it).
    """
    k = kernel_rows(timeline)
    cols = ["name", "calls", "total_ns", "mean_ns", "min_ns", "max_ns", "total_pct", "grid",
            "block", "registers_per_thread", "shared_memory_bytes", "blocks_per_sm",
            "occupancy_pct", "tensor_cores", "op"]  # fmt: skip
    if not len(k):
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    occ_w = k["occupancy_pct"].notna()
    k = k.assign(
        occ_dur=np.where(occ_w, k["occupancy_pct"].fillna(0) * k["dur_ns"], 0.0),
        occ_weight=np.where(occ_w, k["dur_ns"].astype(np.float64), 0.0),
    )
    grouped = k.groupby("name", sort=False)
    out = grouped.agg(
        calls=("dur_ns", "size"),
        total_ns=("dur_ns", "sum"),
        min_ns=("dur_ns", "min"),
        max_ns=("dur_ns", "max"),
        occ_dur=("occ_dur", "sum"),
        occ_weight=("occ_weight", "sum"),
        tensor_cores=("tensor_cores", "any"),
    )
    longest = k.loc[grouped["dur_ns"].idxmax().to_numpy()].set_index("name")
    for col in ("grid", "block", "registers_per_thread", "shared_memory_bytes", "blocks_per_sm"):
        out[col] = longest[col].reindex(out.index)
    op_time = k.groupby(["name", "op"], sort=False)["dur_ns"].sum().reset_index()
    op_time = op_time.sort_values(["dur_ns", "op"], ascending=[False, True])
    out["op"] = op_time.drop_duplicates("name").set_index("name")["op"].reindex(out.index)
    out = out.reset_index()
    out["calls"] = out["calls"].astype(I64)
    out["mean_ns"] = (out["total_ns"] / out["calls"].clip(lower=1)).round().astype(I64)
    total = float(out["total_ns"].sum())
    out["total_pct"] = out["total_ns"] * 100.0 / total if total else 0.0
    weight = out["occ_weight"].to_numpy()
    out["occupancy_pct"] = np.where(
        weight > 0, out["occ_dur"] / np.where(weight > 0, weight, 1), np.nan
    )
    out["tensor_cores"] = out["tensor_cores"].astype(bool)
    out["name"] = text(out["name"])
    out["op"] = text(out["op"])
    out = out.sort_values(["total_ns", "name"], ascending=[False, True])
    return out[cols].reset_index(drop=True)


def duration_spread(rows: pd.DataFrame, top: int = 12) -> pd.DataFrame:
    """The duration distribution of the `top` kernels by total time (of `kernel_rows`):
    name, launches, total_ns, min_ns, p25_ns, median_ns, p75_ns, p95_ns, max_ns, heaviest
    first. A kernel whose median is far under its p95 has launches of different sizes or
    that waited (the Kernels page draws it as a percentile strip). Percentiles are numpy's
    linear ones, rounded to whole ns."""
    cols = ["name", "launches", "total_ns", "min_ns", "p25_ns", "median_ns", "p75_ns",
            "p95_ns", "max_ns"]  # fmt: skip
    if not len(rows):
        return pd.DataFrame({c: pd.Series([], dtype=object if c == "name" else I64) for c in cols})
    d = rows.groupby("name", sort=False, observed=True)["dur_ns"]
    total = d.sum().sort_values(ascending=False, kind="stable").head(top)
    out = pd.DataFrame(
        {
            "name": total.index.astype(str),
            "launches": d.size()[total.index].to_numpy(),
            "total_ns": total.to_numpy(),
        }
    )
    for column, q in (("min_ns", 0.0), ("p25_ns", 0.25), ("median_ns", 0.5), ("p75_ns", 0.75),
                      ("p95_ns", 0.95), ("max_ns", 1.0)):  # fmt: skip
        out[column] = d.quantile(q)[total.index].round().to_numpy(dtype=np.float64).astype(I64)
    return out[cols].astype({"launches": I64, "total_ns": I64})


def tensor_core_share(timeline: Timeline) -> float:
    """Percent of kernel time spent in kernels whose name marks tensor-core use (NaN if none)."""
    ev = timeline.events
    mask = kind_mask(ev, ("kernel",))
    dur = ev["dur"].to_numpy(dtype=I64)
    total = float(dur[mask].sum())
    if total <= 0:
        return float("nan")
    return float(dur[mask & name_mask(ev, TENSOR_CORE_RE)].sum()) * 100.0 / total


__all__ = [
    "GEMM_RE",
    "KERNELS_DEFINITION",
    "TENSOR_CORE_RE",
    "duration_spread",
    "kernel_rows",
    "kernels_table",
    "tensor_core_share",
]
