"""Recommendations: a short list of findings, each with the numbers that back it.

Every rule is a small function of the trace returning a `Finding` or None, so a page can show
why it fired (evidence text, the metric, its value and the threshold) and tests can check one
rule at a time. Thresholds are module constants, chosen after the TensorBoard plugin's
(GPU utilisation < 50 %, DataLoader > 10 % of the step) and HTA's idle-time analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import (
    DATALOADER_PREFIX,
    I64,
    analysis_window,
    decode_args,
    gpu_lane_mask,
    kind_mask,
    lane_devices,
    name_mask,
    names_at,
    outermost,
    text,
)
from perfview.core.analysis.torch.critical_path.path import path_or_enclosing
from perfview.core.analysis.torch.findings import SEVERITIES, Finding
from perfview.core.analysis.torch.kernels import GEMM_RE, TENSOR_CORE_RE
from perfview.core.analysis.torch.loops import (
    MAX_ROWS,
    fuse_advice,
    host_syncs,
    python_loop,
    unfused_chains,
)
from perfview.core.analysis.torch.overview import (
    TF32_MIN_CAPABILITY,
    TRITON_MIN_CAPABILITY,
    cuda_capability,
    devices_table,
    steps_table,
    utilization_table,
)
from perfview.core.analysis.torch.unions import merge_intervals
from perfview.core.model import Timeline, mapped_pages
from perfview.core.model.units import format_bytes, format_ns

LOW_UTIL_PCT = 50.0
DATALOADER_PCT = 10.0
TINY_KERNEL_NS = 10_000
MANY_KERNELS = 1_000
LAUNCH_RATIO = 0.8  # runtime (launch) time ≥ 80 % of kernel time: the CPU cannot keep up
FP32_GEMM_PCT = 10.0  # non-tensor-core GEMM time as a share of all kernel time
IDLE_GAP_NS = 50_000
IDLE_GAP_PCT = 10.0


def low_gpu_utilization(tl: Timeline) -> Finding | None:
    """A GPU busy less than LOW_UTIL_PCT of the analysis window."""
    util = utilization_table(tl)
    util = util[util["stream"] == "all"]
    if not len(util):
        return None
    worst = util.sort_values("utilization_pct").iloc[0]
    pct = float(worst["utilization_pct"])
    if not pct < LOW_UTIL_PCT:
        return None
    window, idle = format_ns(float(worst["window_ns"])), format_ns(float(worst["idle_ns"]))
    evidence = (
        f"{worst['device']} ran kernels or copies {pct:.1f} % of the {window} profiled; idle "
        f"{idle}. Look at the step breakdown for where the time went (CPU, data loading, launches)."
    )
    return Finding("Low GPU utilization", "high" if pct < 25 else "medium", evidence,
                   "gpu_utilization_pct", pct, LOW_UTIL_PCT)  # fmt: skip


def dataloader_bound(tl: Timeline) -> Finding | None:
    """DataLoader time over DATALOADER_PCT of the step time (only counted while the GPU idles).

    Without ProfilerStep slices the recording (or each top-level annotation) is the step.
    """
    steps = steps_table(tl)
    if not len(steps):
        from perfview.core.analysis.torch.no_steps import pseudo_steps_table

        steps = pseudo_steps_table(tl)
    total = float(steps["dur_ns"].sum()) if len(steps) else 0.0
    if total <= 0:
        return None
    pct = float(steps["dataloader_ns"].sum()) * 100.0 / total
    if not pct > DATALOADER_PCT:
        return None
    evidence = (
        f"{pct:.1f} % of the {len(steps)} steps' time is spent waiting in enumerate(DataLoader) "
        "with the GPU idle; try more DataLoader workers, pin_memory=True or prefetching."
    )
    return Finding("Steps are input (DataLoader) bound", "high" if pct > 30 else "medium",
                   evidence, "dataloader_pct", pct, DATALOADER_PCT,
                   _rows_in_steps(tl, name_mask(tl.events, "^" + re.escape(DATALOADER_PREFIX))),
                   "enumerate(DataLoader)")  # fmt: skip


def _rows_in_steps(tl: Timeline, mask: np.ndarray) -> tuple[int, ...]:
    """Rows of `mask` starting inside the analysis window (at most MAX_ROWS), by time."""
    lo, hi = analysis_window(tl)
    ts = tl.events["ts"].to_numpy(dtype=I64)
    rows = np.flatnonzero(mask & (ts >= lo) & (ts < hi))
    rows = rows[np.argsort(ts[rows], kind="stable")]
    return tuple(int(r) for r in rows[:MAX_ROWS])


def launch_overhead(tl: Timeline) -> Finding | None:
    """Many tiny kernels: median < TINY_KERNEL_NS with many launches, or launches ≈ kernel time."""
    ev = tl.events
    kernel = kind_mask(ev, ("kernel",))
    dur = ev["dur"].to_numpy(dtype=I64)
    if kernel.sum() == 0:
        return None
    k = dur[kernel]
    median = float(np.median(k))
    runtime = float(dur[kind_mask(ev, ("runtime",))].sum())
    ratio = runtime / float(k.sum()) if k.sum() else 0.0
    tiny = median < TINY_KERNEL_NS and len(k) >= MANY_KERNELS
    if not (tiny or ratio >= LAUNCH_RATIO):
        return None
    evidence = (
        f"{len(k):,} kernels, median {format_ns(median)}; CPU launch/runtime calls took "
        f"{format_ns(runtime)} for {format_ns(float(k.sum()))} of kernel time "
        f"(ratio {ratio:.2f}). {fuse_advice(tl, 'Fuse small ops (torch.compile)')}, use "
        "CUDA graphs or bigger batches."
    )
    return Finding("Many tiny kernels / launch overhead", "medium", evidence,
                   "median_kernel_ns", median, TINY_KERNEL_NS)  # fmt: skip


def pageable_copies(tl: Timeline) -> Finding | None:
    """Host-to-device copies from pageable memory (synchronous, slow; pin the memory)."""
    ev = tl.events
    mask = kind_mask(ev, ("memcpy",)) & name_mask(ev, r"^Memcpy HtoD \(Pageable")
    rows = np.flatnonzero(mask)
    if not len(rows):
        return None
    size = decode_args(tl, rows, ("bytes",))["bytes"]
    nbytes = float(sum(v for v in size if isinstance(v, int | float)))
    time = float(ev["dur"].to_numpy(dtype=I64)[rows].sum())
    evidence = (
        f"{len(rows):,} Memcpy HtoD (Pageable -> Device) copies, {format_bytes(nbytes)} in "
        f"{format_ns(time)}. Use pin_memory=True in the DataLoader and .to(device, "
        "non_blocking=True)."
    )
    lo, hi = analysis_window(tl)
    severity = "medium" if hi > lo and time * 100.0 / (hi - lo) >= 1.0 else "low"
    return Finding("Pageable host-to-device copies", severity, evidence,
                   "pageable_htod_copies", float(len(rows)), 0.0,
                   tuple(int(r) for r in rows[:MAX_ROWS]))  # fmt: skip


def fp32_matmuls(tl: Timeline) -> Finding | None:
    """GEMM kernels without tensor-core markers on a GPU that has tensor cores (sm ≥ 7.0)."""
    ev = tl.events
    kernel = kind_mask(ev, ("kernel",))
    dur = ev["dur"].to_numpy(dtype=I64)
    total = float(dur[kernel].sum())
    plain = kernel & name_mask(ev, GEMM_RE) & ~name_mask(ev, TENSOR_CORE_RE)
    if total <= 0 or not plain.any():
        return None
    devices = devices_table(tl)
    used = devices[devices["used"]]
    if len(used) and str(used["backend"].iat[0]) not in ("CUDA", "GPU"):
        return None  # tensor-core kernel names and the TF32 switch are NVIDIA's
    gpu = cuda_capability(tl)
    if gpu is not None and gpu[1] < TRITON_MIN_CAPABILITY:
        return None  # no tensor cores to use
    pct = float(dur[plain].sum()) * 100.0 / total
    if not pct > FP32_GEMM_PCT:
        return None
    top = (
        pd.Series(dur[plain], index=text(names_at(ev, plain)))
        .groupby(level=0)
        .sum()
        .sort_values(ascending=False)
    )
    names = "; ".join(str(n)[:60] for n in top.index[:3])
    evidence = (
        f"{pct:.1f} % of kernel time is matrix-multiply kernels without tensor-core markers "
        f"(e.g. {names}). "
    )
    title = "FP32 matmuls where TF32/bf16 would do"
    if gpu is not None and gpu[1] < TF32_MIN_CAPABILITY:  # Volta/Turing: fp16 tensor cores only
        title = "FP32 matmuls where fp16 autocast would use tensor cores"
        evidence += (
            f"{gpu[0]} (compute capability {gpu[1]:.1f}) has fp16 tensor cores but no TF32 or "
            "bf16 (those need 8.0+): autocast to fp16 (torch.autocast('cuda', "
            "dtype=torch.float16) with a GradScaler)."
        )
    else:
        evidence += (
            "Enable TF32 (torch.backends.cuda.matmul.allow_tf32 / "
            "torch.set_float32_matmul_precision('high')) or autocast to bf16/fp16"
            + (" (TF32 and bf16 need compute capability 8.0+)." if gpu is None else ".")
        )
    return Finding(title, "medium", evidence,
                   "fp32_gemm_pct", pct, FP32_GEMM_PCT,
                   tuple(int(r) for r in np.flatnonzero(plain)[:MAX_ROWS]))  # fmt: skip


def _covered_before(starts: np.ndarray, ends: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Length of the (disjoint, sorted) intervals' union lying before each x."""
    if not len(starts):
        return np.zeros(len(x), dtype=np.float64)
    cum = np.concatenate([[0], np.cumsum(ends - starts)])
    k = np.searchsorted(starts, x, side="right")
    partial = np.clip(x - starts[np.clip(k - 1, 0, None)], 0, None)
    partial = np.minimum(partial, (ends - starts)[np.clip(k - 1, 0, None)])
    return np.where(k > 0, cum[np.clip(k - 1, 0, None)] + partial, 0).astype(np.float64)


def cpu_gaps(tl: Timeline) -> Finding | None:
    """GPU idle gaps ≥ IDLE_GAP_NS inside the window while CPU operators run."""
    ev = tl.events
    lo, hi = analysis_window(tl)
    gpu_work = kind_mask(ev, ("kernel", "memcpy", "memset")) & gpu_lane_mask(tl)
    if not gpu_work.any() or hi <= lo:
        return None
    ts = ev["ts"].to_numpy(dtype=I64)
    dur = ev["dur"].to_numpy(dtype=I64)
    dev = lane_devices(tl)
    gap_s: list[np.ndarray] = []
    gap_e: list[np.ndarray] = []
    for device in sorted({str(d) for d in pd.unique(dev[gpu_work])}):  # usually a single GPU
        sel = np.flatnonzero(gpu_work & (dev == device))
        bs, be = merge_intervals(np.clip(ts[sel], lo, hi), np.clip(ts[sel] + dur[sel], lo, hi))
        s = np.concatenate([[lo], be])
        e = np.concatenate([bs, [hi]])
        big = (e - s) >= IDLE_GAP_NS
        gap_s.append(s[big])
        gap_e.append(e[big])
    gs, ge = merge_intervals(np.concatenate(gap_s), np.concatenate(gap_e))
    idle = float((ge - gs).sum())
    if idle <= 0:
        return None
    top = np.flatnonzero(outermost(ev, kind_mask(ev, ("cpu_op",)) & ~gpu_lane_mask(tl)))
    os_, oe = merge_intervals(ts[top], ts[top] + dur[top])  # no op above: every op's union
    # CPU-op time inside the gaps: intersect the two unions via cumulative coverage.
    inside = float((_covered_before(os_, oe, ge) - _covered_before(os_, oe, gs)).sum())
    pct_window = idle * 100.0 / (hi - lo)
    if not pct_window > IDLE_GAP_PCT or inside <= 0:
        return None
    top_rows = top[ev["depth"].to_numpy()[top] >= 0]
    top_ts = ts[top_rows]
    overlap = _covered_before(gs, ge, top_ts + dur[top_rows]) - _covered_before(gs, ge, top_ts)
    by_op = _time_by_name(ev, top_rows, overlap)
    names = ", ".join(f"{n} ({format_ns(float(v))})" for n, v in by_op.head(3).items() if v > 0)
    evidence = (
        f"{len(gs):,} GPU idle gaps of ≥ {format_ns(IDLE_GAP_NS)} add up to {format_ns(idle)} "
        f"({pct_window:.1f} % of the window); CPU operators ran for {format_ns(inside)} of it "
        f"({inside * 100 / idle:.0f} %). Most CPU time in the gaps: {names or 'n/a'}."
    )
    return Finding("CPU operators between kernels leave the GPU idle",
                   "high" if pct_window > 30 else "medium", evidence,
                   "gpu_idle_gap_pct", pct_window, IDLE_GAP_PCT,
                   _longest_first(top_rows, overlap))  # fmt: skip


def _time_by_name(events: pd.DataFrame, rows: np.ndarray, weight: np.ndarray) -> pd.Series:
    """`weight` of `rows` summed by name, biggest first. Through the names' codes (one
    bincount) where the column is categorical: a Series of one name per row, grouped, was
    0.4 GB for the 4M top-level operators of a 10 GB trace."""
    names = events["name"]
    if isinstance(names.dtype, pd.CategoricalDtype):
        codes = names.cat.codes.to_numpy()[rows]
        named = codes >= 0  # a missing name is no group, as in a groupby
        sums = np.bincount(codes[named], weights=weight[named], minlength=len(names.cat.categories))
        by = pd.Series(sums, index=text(names.cat.categories))
    else:
        by = pd.Series(weight, index=text(names_at(events, rows)))
    return by.groupby(level=0).sum().sort_values(ascending=False)


def _longest_first(rows: np.ndarray, weight: np.ndarray) -> tuple[int, ...]:
    """Rows with weight > 0, heaviest first (the CPU ops most in the GPU's idle gaps)."""
    keep = weight > 0
    order = np.argsort(-weight[keep], kind="stable")
    return tuple(int(r) for r in rows[keep][order][:MAX_ROWS])


RULES: tuple[Callable[[Timeline], Finding | None], ...] = (
    low_gpu_utilization,
    dataloader_bound,
    cpu_gaps,
    launch_overhead,
    pageable_copies,
    fp32_matmuls,
    python_loop,
    unfused_chains,
    host_syncs,
)


OFF_PATH = (
    " Off the critical path: none of these slices is on a step's critical path, so fixing "
    "this alone may not shorten a step."
)


def recommendations(timeline: Timeline) -> list[Finding]:
    """Every rule that fires, most severe first (rule order within a severity); within a
    severity a finding whose evidence slices are all off the critical path comes after the
    others, and says so."""
    found = []
    for rule in RULES:
        if (finding := rule(timeline)) is not None:
            found.append(finding)
        mapped_pages.give_back(timeline.events)  # what the rule read of the columns
    off = _off_path(timeline, found)
    found = [
        replace(f, evidence=f.evidence + OFF_PATH) if o else f
        for f, o in zip(found, off, strict=True)
    ]
    order = sorted(range(len(found)), key=lambda i: (SEVERITIES.index(found[i].severity), off[i]))
    return [found[i] for i in order]


def _off_path(timeline: Timeline, found: list[Finding]) -> list[bool]:
    """Per finding: it has evidence slices and none of them is, or encloses, a slice the
    critical path of some step runs through."""
    if not any(f.rows for f in found):
        return [False] * len(found)
    on = path_or_enclosing(timeline)
    return [bool(f.rows) and not on[np.asarray(f.rows, dtype=np.int64)].any() for f in found]


def recommendations_table(timeline: Timeline) -> pd.DataFrame:
    """The findings as rows: severity, title, evidence, metric, value, threshold, then `where`
    (the Python function / annotation a rule points at, "" if none) and `slices` (how many
    evidence slices it selects in the GUI)."""
    return findings_table(recommendations(timeline))


def findings_table(findings: list[Finding]) -> pd.DataFrame:
    """`recommendations_table`'s rows for findings already found (one row per finding, in
    order: a caller holding the findings pairs each row with its evidence slices)."""
    cols = ["severity", "title", "evidence", "metric", "value", "threshold", "where", "slices"]
    rows = [{c: getattr(f, c) for c in cols[:-1]} | {"slices": len(f.rows)} for f in findings]
    return pd.DataFrame(rows, columns=cols).astype({"slices": "int64"})


__all__ = [
    "RULES",
    "Finding",
    "cpu_gaps",
    "dataloader_bound",
    "findings_table",
    "fp32_matmuls",
    "host_syncs",
    "launch_overhead",
    "low_gpu_utilization",
    "pageable_copies",
    "python_loop",
    "recommendations",
    "recommendations_table",
    "unfused_chains",
]
