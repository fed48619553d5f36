"""Recommendation rules for the classic eager-PyTorch mistakes, each pointing at its slices.

- `python_loop`: a Python loop over tensor elements: thousands of tiny top-level operators
  (select, copy_, item, scalar arithmetic…) repeating one short sequence, filling most of a step
  or of a Python function. Vectorise / broadcast instead.
- `unfused_chains`: runs of element-wise operators (mul, add, tanh…) on the same shape, back to
  back: each reads and writes the whole tensor (on a GPU, one kernel and one launch each).
  torch.compile fuses them into one kernel.
- `host_syncs`: `.item()`, `.cpu()`, synchronous copies and stream/device synchronisations
  inside steps, each followed by GPU idle time (the host waited, then had nothing queued).

"Top-level" operators are cpu_ops with no cpu_op above them (what the Python code called);
their "context" is the nearest enclosing user Python function (with_stack traces) or user
annotation / ProfilerStep, so a finding can name where the loop is. Every finding carries the
row ids of its evidence slices (context first, then the operators) for the GUI to select.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import nearest_ancestor
from perfview.core.analysis.torch.common import (
    GPU_KINDS,
    I64,
    analysis_window,
    gpu_lane_mask,
    kind_mask,
    name_mask,
    step_rows,
)
from perfview.core.analysis.torch.findings import Finding
from perfview.core.analysis.torch.overview import TRITON_MIN_CAPABILITY, cuda_capability
from perfview.core.model import Timeline
from perfview.core.model.units import format_ns

MANY_TINY_OPS = 1_000  # top-level operators in one context
TINY_OP_NS = 50_000  # their mean duration (profiler overhead included)
LOOP_PCT = 50.0  # the loop's span as a share of its context (step, function, window)
MAX_PERIOD = 24
PERIOD_MATCH = 0.8
MIN_CHAIN = 4
CHAIN_PCT = 10.0  # chained element-wise op time as a share of the window
SYNC_IDLE_PCT = 5.0  # GPU idle right after host syncs, as a share of the window
MAX_ROWS = 500  # evidence slices handed to the GUI per finding

INDEX_OPS = frozenset(
    f"aten::{n}"
    for n in (
        "select",
        "slice",
        "index",
        "index_put_",
        "item",
        "_local_scalar_dense",
        "copy_",
        "fill_",
        "as_strided",
        "unbind",
        "narrow",
        "unsqueeze",
        "squeeze",
        "view",
        "lift_fresh",
        "scalar_tensor",
        "zeros",
        "empty",
        "tensor",
    )
)
# What only an element-by-element loop does: read or write one element (or row) at a time.
# The reshaping and allocating ops of INDEX_OPS (unsqueeze, view, empty…) are as common in a
# batched program's loop body, so they alone do not make a loop element-wise.
ELEMENT_OPS = frozenset(
    f"aten::{n}"
    for n in (
        "select",
        "index",
        "index_put_",
        "item",
        "_local_scalar_dense",
        "copy_",
        "fill_",
        "unbind",
        "scalar_tensor",
    )
)
ELEMENT_NUMEL = 256  # a loop body whose arithmetic runs on bigger tensors is batched
ELEMENTWISE_RE = re.compile(
    r"^aten::(?:mul|add|sub|rsub|div|pow|neg|exp|exp2|expm1|log|log1p|log2|tanh|sigmoid|relu"
    r"|gelu|silu|sin|cos|sqrt|rsqrt|abs|clamp|clamp_min|clamp_max|maximum|minimum|where|erf"
    r"|reciprocal|square|lerp|addcmul|addcdiv|threshold|hardtanh|leaky_relu|softplus|sign"
    r"|floor|ceil|round|mish|hardswish|hardsigmoid|elu|selu)_?$"
)
LIBRARY_FRAME_RE = r"^<|^torch/|site-packages/|/torch/|^typing\.py|^<frozen"
SYNC_RE = r"^(?:cuda|hip)(?:StreamSynchronize|DeviceSynchronize|EventSynchronize|Memcpy)$"
ITEM_RE = r"^aten::(?:item|_local_scalar_dense)$"


def _top_ops(tl: Timeline) -> np.ndarray:
    """Rows of host cpu_ops with no cpu_op above them, sorted by (lane, ts)."""
    ev = tl.events
    op = kind_mask(ev, ("cpu_op",)) & ~gpu_lane_mask(tl)
    parent = ev["parent"].to_numpy(dtype=I64)
    rows = np.flatnonzero(op & (nearest_ancestor(parent, op) < 0))
    order = np.lexsort((ev["ts"].to_numpy(dtype=I64)[rows], ev["lane"].to_numpy()[rows]))
    return rows[order]


def _contexts(tl: Timeline, rows: np.ndarray) -> np.ndarray:
    """The nearest enclosing user Python frame or annotation of each row (-1: none)."""
    ev = tl.events
    user = (kind_mask(ev, ("python",)) & ~name_mask(ev, LIBRARY_FRAME_RE)) | kind_mask(
        ev, ("annotation",)
    )
    return np.asarray(nearest_ancestor(ev["parent"].to_numpy(dtype=I64), user)[rows], dtype=I64)


def _period(codes: np.ndarray) -> int:
    """Shortest p ≤ MAX_PERIOD with codes[i] == codes[i + p] for ≥ PERIOD_MATCH of i (0: none)."""
    for p in range(1, min(MAX_PERIOD, len(codes) // 3) + 1):
        if float(np.mean(codes[:-p] == codes[p:])) >= PERIOD_MATCH:
            return p
    return 0


def _pattern(names: np.ndarray, p: int) -> list[str]:
    """The repeating unit of period p, taken where it first repeats exactly (so a one-off op
    before the loop, such as the torch.empty of its output, does not start the pattern)."""
    codes = pd.factorize(names)[0]
    for i in range(min(max(len(codes) - 2 * p + 1, 0), 64 * p)):  # bounded: big loops
        if np.array_equal(codes[i : i + p], codes[i + p : i + 2 * p]):
            return [str(n) for n in names[i : i + p]]
    return [str(n) for n in names[:p]]


def _where(tl: Timeline, ctx: int) -> str:
    if ctx < 0:
        return "the recorded span (no enclosing Python function or annotation)"
    kind = str(tl.events["kind"].iat[ctx])
    name = str(tl.events["name"].iat[ctx])
    return f"Python function {name}" if kind == "python" else f"{name}"


def _names(tl: Timeline, rows: np.ndarray) -> np.ndarray:
    return _text_at(tl.events["name"], rows)


def _text_at(column: pd.Series, rows: np.ndarray) -> np.ndarray:
    """`str` of `column` at `rows`, as objects. A categorical's categories are converted once
    and taken by code: materialising the whole column first held the GIL for a large part of
    a second at 1 GB (the window froze while its findings were computed)."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.to_numpy()[rows].astype(str), dtype=object)
    codes = column.cat.codes.to_numpy()[rows]
    cats = np.asarray([str(c) for c in column.cat.categories] + ["nan"], dtype=object)
    return cats[np.where(codes < 0, len(cats) - 1, codes)]


def _lane_op_span(tl: Timeline, rows: np.ndarray, lane: np.ndarray, which: int) -> float:
    """First start to last end of the top-level ops on one lane: the 'recording' a loop with
    no enclosing function or annotation is measured against (imports before it do not count)."""
    ts = tl.events["ts"].to_numpy(dtype=I64)[rows[lane == which]]
    end = ts + tl.events["dur"].to_numpy(dtype=I64)[rows[lane == which]]
    return float(end.max() - ts.min()) if len(ts) else 0.0


def _batched(shapes: pd.Series, rows: np.ndarray, names: np.ndarray) -> bool:
    """True when recorded shapes show the loop's arithmetic on whole tensors (median first
    input above ELEMENT_NUMEL elements): small, repeated operators, but not element-wise.
    False when no shapes were recorded (the pattern alone decides then)."""
    arith = np.asarray([n not in INDEX_OPS for n in names], dtype=bool)
    dims = _first_dims(_text_at(shapes, rows[arith]))
    sizes = [
        int(np.prod([int(d) for d in text[1:-1].split(",") if d.strip().lstrip("-").isdigit()]))
        for text in dims
        if text
    ]
    return bool(sizes) and float(np.median(sizes)) > ELEMENT_NUMEL


def python_loop(tl: Timeline) -> Finding | None:
    """Thousands of tiny top-level ops repeating a short sequence that reads or writes single
    elements (`ELEMENT_OPS`), filling a step or function; not when recorded shapes show the
    sequence's arithmetic on whole tensors (a batched program's loop is small, not
    element-wise)."""
    ev = tl.events
    rows = _top_ops(tl)
    if len(rows) < MANY_TINY_OPS:
        return None
    ctx = _contexts(tl, rows)
    ts = ev["ts"].to_numpy(dtype=I64)
    dur = ev["dur"].to_numpy(dtype=I64)
    lane = ev["lane"].to_numpy(dtype=I64)[rows]
    groups = pd.Series(np.arange(len(rows))).groupby([lane, ctx]).indices
    best: tuple[float, str, Finding] | None = None
    for key, idx in groups.items():
        which, c = (int(k) for k in key)  # type: ignore[attr-defined]
        if len(idx) < MANY_TINY_OPS:
            continue
        r = rows[idx]
        mean = float(dur[r].mean())
        names = _names(tl, r)
        p = _period(pd.factorize(names)[0])
        pattern = _pattern(names, p) if p else []
        if mean > TINY_OP_NS or not p or not ELEMENT_OPS.intersection(pattern):
            continue
        if _batched(ev["shape"], r[: 64 * p], names[: 64 * p]):
            continue
        span = float(ts[r[-1]] + dur[r[-1]] - ts[r[0]])
        whole = float(dur[c]) if c >= 0 else _lane_op_span(tl, rows, lane, which)
        pct = span * 100.0 / whole if whole > 0 else 0.0
        if pct < LOOP_PCT:
            continue
        reps = len(r) // p
        where = _where(tl, int(c))
        evidence = (
            f"{len(r):,} tiny operators (mean {format_ns(mean)}) in {where}, about {reps:,} "
            f"repetitions of the {p}-operator pattern {' → '.join(pattern)}; they span "
            f"{format_ns(span)} ({pct:.0f} % of it). A Python loop is indexing tensors element "
            "by element: vectorise it (broadcasting, e.g. (a[:, None] - b[None]) ** 2, or "
            "torch.cdist / gather / index_select / masks) so a few operators do all the work."
        )
        evidence_rows = ([int(c)] if c >= 0 else []) + [int(x) for x in r[:MAX_ROWS]]
        finding = Finding("Element-wise Python loop over tensors",
                          "high" if pct >= 80 else "medium", evidence, "loop_ops",
                          float(len(r)), float(MANY_TINY_OPS), tuple(evidence_rows),
                          where)  # fmt: skip
        if best is None or span > best[0]:
            best = (span, where, finding)
    return best[2] if best else None


def _first_dims(shapes: np.ndarray) -> np.ndarray:
    """'[[256, 1024], []]' → '[256, 1024]' (the first input's dims; '' when not recorded)."""
    codes, uniques = pd.factorize(pd.Series(shapes, dtype=object), use_na_sentinel=False)
    text = pd.Series(uniques, dtype=object).astype(str)  # each distinct shape once
    dims = np.asarray(text.str.extract(r"^\[(\[[^\]]*\])", expand=False).fillna(""), dtype=object)
    return dims[codes] if len(dims) else np.zeros(0, dtype=object)


def _chains(tl: Timeline, rows: np.ndarray) -> list[np.ndarray]:
    """Maximal runs (≥ MIN_CHAIN) of consecutive element-wise top-level ops on one shape.

    A run must mix at least two operators: the same op repeated (SGD's per-parameter add_)
    works on different tensors, not on one value; ops inside torch's `Optimizer.*` annotations
    are left out for the same reason (their cure is foreach / fused optimizers).
    """
    ev = tl.events
    names = _names(tl, rows)
    codes, uniq = pd.factorize(names)
    ew = np.asarray([bool(ELEMENTWISE_RE.match(str(n))) for n in uniq], dtype=bool)
    is_ew = ew[codes] if len(uniq) else np.zeros(len(rows), dtype=bool)
    optimizer = kind_mask(ev, ("annotation",)) & name_mask(ev, r"^Optimizer\.")
    if optimizer.any():
        is_ew &= nearest_ancestor(ev["parent"].to_numpy(dtype=I64), optimizer)[rows] < 0
    dims = _first_dims(_text_at(ev["shape"], rows))
    lane = ev["lane"].to_numpy(dtype=I64)[rows]
    ctx = _contexts(tl, rows)
    same = np.zeros(len(rows), dtype=bool)  # row i continues the chain of row i - 1
    same[1:] = is_ew[1:] & is_ew[:-1] & (lane[1:] == lane[:-1]) & (ctx[1:] == ctx[:-1])
    same[1:] &= (dims[1:] == dims[:-1]) | (dims[1:] == "") | (dims[:-1] == "")
    start = is_ew & ~same
    chain_id = np.cumsum(start) - 1
    out: list[np.ndarray] = []
    if not is_ew.any():
        return out
    ids = chain_id[is_ew]
    long_enough = (np.bincount(ids) >= MIN_CHAIN)[ids]  # drop short runs before splitting
    members, ids = np.flatnonzero(is_ew)[long_enough], ids[long_enough]
    if len(members):
        parts = np.split(members, np.flatnonzero(np.diff(ids)) + 1)
        out = [rows[p] for p in parts if len(np.unique(codes[p])) >= 2]
    return out


def _kernels_of(tl: Timeline, ops: np.ndarray) -> np.ndarray:
    """GPU activity rows launched by `ops` or anything below them."""
    from perfview.core.analysis.torch.op_kernels import (
        launches,  # heavier; only when a chain exists
    )

    ev = tl.events
    links = launches(tl)
    links = links[links["op_row"] >= 0]
    op_row = links["op_row"].to_numpy(dtype=I64)
    member = np.zeros(len(ev), dtype=bool)
    member[ops] = True
    up = nearest_ancestor(ev["parent"].to_numpy(dtype=I64), member)
    top = np.where(member[op_row], op_row, up[op_row])
    return np.asarray(links["gpu_row"].to_numpy(dtype=I64)[top >= 0], dtype=I64)


FUSE_WITH_COMPILE = "Fuse them: torch.compile the function (torch.jit.script on older code)"


def fuse_advice(tl: Timeline, advice: str) -> str:
    """`advice` (which names torch.compile), or what to do instead where it cannot run:
    torch.compile's GPU backend (Triton) refuses NVIDIA GPUs below compute capability 7.0."""
    gpu = cuda_capability(tl)
    if gpu is None or gpu[1] >= TRITON_MIN_CAPABILITY:
        return advice
    return (
        "Fuse small ops by hand or with torch.jit.script (torch.compile's GPU backend, Triton, "
        f"needs compute capability 7.0+; {gpu[0]} is {gpu[1]:.1f})"
    )


def unfused_chains(tl: Timeline) -> Finding | None:
    """Back-to-back element-wise ops on the same shape taking ≥ CHAIN_PCT of the window."""
    ev = tl.events
    chains = _chains(tl, _top_ops(tl))
    lo, hi = analysis_window(tl)
    if not chains or hi <= lo:
        return None
    ops = np.concatenate(chains)
    dur = ev["dur"].to_numpy(dtype=I64)
    time = float(dur[ops].sum())
    pct = time * 100.0 / (hi - lo)
    if pct < CHAIN_PCT:
        return None
    longest = max(chains, key=len)
    names = _names(tl, longest)
    p = _period(pd.factorize(names)[0]) or len(names)
    unit = _pattern(names, p) if p < len(names) else [str(n) for n in names]
    pattern = " → ".join(unit[:12]) + (" → …" if len(unit) > 12 else "")
    if len(names) >= 2 * p:
        pattern += f" (repeated {len(names) // p}× back to back)"
    dims = _first_dims(_text_at(ev["shape"], longest[:1]))[0]
    kernels = _kernels_of(tl, ops)
    gpu = ""
    if len(kernels):
        k_ts = ev["ts"].to_numpy(dtype=I64)[kernels]
        order = np.argsort(k_ts, kind="stable")
        k_start, k_end = k_ts[order], (k_ts + dur[kernels])[order]
        gaps = np.clip(k_start[1:] - np.maximum.accumulate(k_end)[:-1], 0, None)
        gpu = (
            f" On the GPU they ran as {len(kernels):,} kernels "
            f"({format_ns(float(dur[kernels].sum()))}) with {format_ns(float(gaps.sum()))} of "
            f"launch gaps between them (mean {format_ns(float(gaps.mean()) if len(gaps) else 0)})."
        )
    evidence = (
        f"{len(chains):,} run{'s' if len(chains) != 1 else ''} of ≥ {MIN_CHAIN} back-to-back "
        "element-wise operators"
        f"{f' on {dims}' if dims else ''} ({len(ops):,} operators, {format_ns(time)}, "
        f"{pct:.0f} % of the window), e.g. {pattern}. Each reads and writes the whole tensor."
        f"{gpu} {fuse_advice(tl, FUSE_WITH_COMPILE)}."
    )
    return Finding("Chains of unfused element-wise operators",
                   "high" if pct >= 40 else "medium", evidence, "chained_ew_pct", pct,
                   CHAIN_PCT, tuple(int(x) for x in ops[:MAX_ROWS]),
                   _where(tl, int(_contexts(tl, longest[:1])[0])))  # fmt: skip


def _sync_rows(tl: Timeline) -> np.ndarray:
    """Host rows that block on the GPU: sync calls, and runtime calls of device-to-host copies."""
    ev = tl.events
    runtime = kind_mask(ev, ("runtime",))
    rows = set(np.flatnonzero(runtime & name_mask(ev, SYNC_RE)).tolist())
    d2h = kind_mask(ev, ("memcpy",)) & name_mask(ev, r"^Memcpy DtoH")
    corr = ev["corr"].to_numpy(dtype=I64)
    want = set(corr[d2h & (corr >= 0)].tolist())
    if want:
        rt = np.flatnonzero(runtime & (corr >= 0))
        rows.update(int(r) for r in rt[np.isin(corr[rt], list(want))])
    return np.asarray(sorted(rows), dtype=I64)


def host_syncs(tl: Timeline) -> Finding | None:
    """Host–device synchronisations inside steps, with the GPU idle after each."""
    ev = tl.events
    gpu = kind_mask(ev, GPU_KINDS) & gpu_lane_mask(tl)
    rows = _sync_rows(tl)
    lo, hi = analysis_window(tl)
    if not gpu.any() or not len(rows) or hi <= lo:
        return None
    ts = ev["ts"].to_numpy(dtype=I64)
    steps = step_rows(tl)
    if len(steps):
        s, e = steps["start_ns"].to_numpy(dtype=I64), steps["end_ns"].to_numpy(dtype=I64)
        k = np.searchsorted(s, ts[rows], side="right") - 1
        rows = rows[(k >= 0) & (ts[rows] < e[np.clip(k, 0, None)])]
    if not len(rows):
        return None
    starts = np.sort(ts[gpu])
    end = ts[rows] + ev["dur"].to_numpy(dtype=I64)[rows]  # the syncs' only: not every row's
    nxt = np.searchsorted(starts, end, side="left")
    has = nxt < len(starts)
    idle = np.where(has, starts[np.clip(nxt, 0, len(starts) - 1)] - end, 0)
    idle = np.clip(np.minimum(idle, hi - end), 0, None)
    total = float(idle.sum())
    pct = total * 100.0 / (hi - lo)
    if pct < SYNC_IDLE_PCT:
        return None
    op = kind_mask(ev, ("cpu_op",))
    parent = ev["parent"].to_numpy(dtype=I64)
    outer = rows.copy()  # the outermost cpu_op above each sync (aten::item, aten::to, …)
    cur = parent[rows]  # walked up from the syncs alone: no nearest ancestor of every row
    while (cur >= 0).any():
        up, at = cur >= 0, np.clip(cur, 0, None)
        outer = np.where(up & op[at], cur, outer)
        cur = np.where(up, parent[at], -1)
    names = pd.Series(idle, index=_names(tl, outer)).groupby(level=0).agg(["count", "sum"])
    names = names.sort_values("sum", ascending=False)
    ops = ", ".join(f"{n} ×{int(c)} ({format_ns(float(t))} idle after)"
                    for n, c, t in names.head(3).itertuples())  # fmt: skip
    worst = int(outer[int(np.argmax(idle))])
    site = _where(tl, int(_contexts(tl, np.asarray([worst]))[0]))
    evidence = (
        f"{len(rows):,} host–device synchronisations inside the steps; the GPU then sat idle "
        f"for {format_ns(total)} ({pct:.1f} % of the window) until the host queued more work. "
        f"By operator: {ops}; the costliest is called from {site}. Avoid .item(), .cpu(), "
        "printing or branching on GPU values inside the loop: keep results on the device and "
        "read them every N steps; use non_blocking copies."
    )
    order = np.argsort(-idle, kind="stable")
    return Finding("Host–device synchronisation in the loop",
                   "high" if pct >= 20 else "medium", evidence, "sync_idle_pct", pct,
                   SYNC_IDLE_PCT, tuple(int(x) for x in outer[order][:MAX_ROWS]),
                   site)  # fmt: skip


__all__ = ["fuse_advice", "host_syncs", "python_loop", "unfused_chains"]
