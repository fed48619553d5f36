"""The lanes of a trace timeline: one per (process, thread, overlap row), labelled and ordered.

Names and sort indexes come from metadata (M) events; GPU processes are told apart by their
labels, their kernel categories or their stream threads. Also the helpers the tables share:
interner codes to Categoricals, joint codes of key columns, slice kinds by category.
Per-lane Python only: the work is proportional to the number of lanes, not of events.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.model import schema
from perfview.loaders.trace.columns import Columns

I64 = np.int64
COMPILED_MIN = 100_000  # rows: below, numpy's steps cost less than a call's set-up
_SORT_COLUMNS = ("psort", "tsort", "gpu", "pid", "tid", "sub")
_GPU_LABEL = re.compile(r"\b(?:GPU|MTIA|XPU|HPU|NPU)\s*(\d+)", re.IGNORECASE)
# Device-side activity categories (kineto's ActivityType names): CUDA, ROCm, XPU and
# PrivateUse1 backends write kernel / gpu_memcpy / gpu_memset; MTIA writes mtia_ccp_events,
# Gaudi (HPU) writes hpu_op.
GPU_CATS = frozenset(
    {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset", "gpu_user_annotation",
     "mtia_ccp_events", "hpu_op"}
)  # fmt: skip
# What to call a device lane, by the backend its categories name (default "GPU").
ACCELERATOR_OF_CAT_PREFIX = (
    ("mtia_", "MTIA"),
    ("hpu_", "HPU"),
    ("xpu_", "XPU"),
    ("privateuse1_", "PrivateUse1"),
)
KIND_OF_CAT = {
    "cpu_op": "cpu_op",
    "operator": "cpu_op",
    "python_function": "python",
    "user_annotation": "annotation",
    "gpu_user_annotation": "gpu_annotation",
    "cuda_runtime": "runtime",
    "cuda_driver": "runtime",
    "runtime": "runtime",
    "driver": "runtime",
    "xpu_runtime": "runtime",
    "xpu_driver": "runtime",
    "mtia_runtime": "runtime",
    "mtia_ccp_events": "kernel",
    "hpu_op": "kernel",
    "glow_runtime": "runtime",
    "privateuse1_runtime": "runtime",
    "privateuse1_driver": "runtime",
    "kernel": "kernel",
    "gpu_memcpy": "memcpy",
    "memcpy": "memcpy",
    "gpu_memset": "memset",
    "memset": "memset",
    "collective_comm": "comm",
    "trace": "trace",
}


def categorical(codes: np.ndarray, values: list[Any]) -> pd.Categorical:
    """A Categorical from interner codes (any integer type); None becomes '' and unused
    values are dropped.

    The codes are gathered straight into the narrowest type pandas keeps for that many
    categories, and not checked again (they come from `lut`): an int64 gather, pandas'
    narrowing copy and its two checking passes were half this function's time at 5M rows.
    Where numba is loaded (`compiled_steps`), which codes occur and their gather are one
    pass each with no widened copy of int32 codes (numpy's bincount and gather make one)."""
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(I64)
    if len(codes) == 0:
        return pd.Categorical.from_codes(
            np.zeros(0, dtype=I64), categories=pd.Index([], dtype=object)
        )
    fast = compiled_steps(len(codes))
    seen: np.ndarray
    bad = 1
    if fast is not None:
        seen, bad = fast.seen_codes(codes, len(values))
    if bad:  # numpy's steps (and their errors on codes out of range)
        fast, seen = None, np.bincount(codes, minlength=len(values))
    # the used codes in ascending order, found in O(n) (np.unique would sort every row)
    used = np.flatnonzero(seen)
    texts = ["" if values[c] is None else str(values[c]) for c in used.tolist()]
    remap, cats = pd.factorize(pd.Index(texts, dtype=object))
    lut = np.zeros(len(values), dtype=_code_type(len(cats)))
    lut[used] = remap
    if fast is not None:
        out = np.empty_like(lut, shape=len(codes))
        fast.lookup_into(lut, codes, out)
    else:
        out = lut[codes]
    return pd.Categorical.from_codes(out, categories=cats, validate=False)


def compiled_steps(rows: int) -> ModuleType | None:
    """build's compiled one-pass steps (`kernels`) for the helpers `build` does not hand
    its `fast` to, for `rows` rows: when there are COMPILED_MIN or more, numba is imported
    already (the scanner path) and their code is on disk; else None, and the numpy steps
    run (as `core.nesting` picks). Both give the same tables: the tests compare them."""
    if rows < COMPILED_MIN or "numba" not in sys.modules:
        return None
    from perfview.loaders.trace import kernels

    return kernels if kernels.ready() else None


def _code_type(n: int) -> type[np.signedinteger[Any]]:
    """The code type pandas gives a Categorical of `n` categories (it narrows to this)."""
    for t in (np.int8, np.int16, np.int32):
        if n < np.iinfo(t).max:
            return t
    return np.int64


def joint_codes(*columns: np.ndarray) -> np.ndarray:
    """One int64 code per row for a tuple of key columns (cheaper than a pandas MultiIndex)."""
    code = np.zeros(len(columns[0]), dtype=I64)
    for col in columns:
        f, uniq = pd.factorize(np.asarray(col))
        code = code * max(len(uniq), 1) + np.asarray(f, dtype=I64)
    return code


def lookup(table: list[np.ndarray], query: list[np.ndarray]) -> np.ndarray:
    """Row of `table` whose key columns equal each query row's, -1 when absent."""
    n = len(table[0])
    both = joint_codes(*[np.concatenate([t, q]) for t, q in zip(table, query, strict=True)])
    lut = np.full(int(both.max()) + 1 if len(both) else 1, -1, dtype=I64)
    lut[both[:n]] = np.arange(n, dtype=I64)
    out: np.ndarray = lut[both[n:]]
    return out


def kinds_for(
    cat: np.ndarray, cat_values: list[Any], name: np.ndarray, name_values: list[Any]
) -> np.ndarray:
    """Kind code (index into schema.KINDS) per slice, from its category (old or new kineto
    spelling, case-insensitive) and its name (ProfilerStep#N is an annotation)."""
    kinds = list(schema.KINDS)
    by_cat = np.array(
        [kinds.index(KIND_OF_CAT.get(str(v or "").lower(), "other")) for v in cat_values] or [0],
        dtype=np.int8,
    )
    step = np.array(
        [isinstance(v, str) and v.startswith("ProfilerStep#") for v in name_values] or [False]
    )
    fast = compiled_steps(len(cat)) if len(name) == len(cat) else None
    if fast is not None:  # one pass, no widened copies of the codes nor a mask
        fast_out: np.ndarray = fast.kind_codes(by_cat, cat, step, name, kinds.index("annotation"))
        return fast_out
    out = by_cat[cat] if len(cat) else np.zeros(0, dtype=np.int8)
    if len(name):
        out[step[name]] = kinds.index("annotation")
    return out


def key_ids(values: list[object]) -> tuple[np.ndarray, dict[int, str]]:
    """int ids for pid/tid values: ints stay, numeric strings become ints, other strings get
    stable negative ids (by sorted text). Returns ids per interner code and id -> text."""
    ids = np.zeros(len(values), dtype=I64)
    texts: dict[int, str] = {}
    strings = sorted({"" if v is None else str(v) for v in values if not _as_int(v)[1]})
    neg = {s: -1 - i for i, s in enumerate(strings)}
    for code, v in enumerate(values):
        num, ok = _as_int(v)
        text = "" if v is None else str(v)
        ids[code] = num if ok else neg[text]
        texts.setdefault(int(ids[code]), text)
    return ids, texts


def _as_int(v: object) -> tuple[int, bool]:
    if isinstance(v, bool) or v is None:
        return 0, False
    if isinstance(v, int):
        return (v, True) if 0 <= v < 2**62 else (0, False)
    if isinstance(v, str):
        t = v.strip()
        if t.isdigit() and len(t) < 18:
            return int(t), True
    return 0, False


@dataclass
class LaneInfo:
    """Process and thread names and sort indexes from M events, keyed by normalised ids."""

    key_text: dict[int, str]
    process_name: dict[int, str] = field(default_factory=dict)
    process_labels: dict[int, str] = field(default_factory=dict)
    process_sort: dict[int, int] = field(default_factory=dict)
    thread_name: dict[tuple[int, int], str] = field(default_factory=dict)
    thread_sort: dict[tuple[int, int], int] = field(default_factory=dict)

    @classmethod
    def from_metadata(
        cls, cols: Columns, key_id: np.ndarray, key_text: dict[int, str], tracks: dict[int, Any]
    ) -> LaneInfo:
        info = cls(key_text=dict(key_text))
        index = cols.keys.index
        for _, kind, pid_v, tid_v, args in cols.metadata:
            if not isinstance(args, dict):
                continue
            pid = int(key_id[index[pid_v]])
            tid = int(key_id[index[tid_v]])
            if kind == "process_name" and "name" in args:
                info.process_name[pid] = str(args["name"])
            elif kind == "process_labels" and "labels" in args:
                info.process_labels[pid] = str(args["labels"])
            elif kind == "process_sort_index" and _is_int(args.get("sort_index")):
                info.process_sort[pid] = int(args["sort_index"])
            elif kind == "thread_name" and "name" in args:
                info.thread_name[(pid, tid)] = str(args["name"]).strip()
            elif kind == "thread_sort_index" and _is_int(args.get("sort_index")):
                info.thread_sort[(pid, tid)] = int(args["sort_index"])
        for tid, text in tracks.items():
            info.key_text[tid] = "" if text is None else str(text)
        return info

    def text(self, key: int) -> str:
        return self.key_text.get(key, str(key))


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def accelerator_label(cat_values: list[Any]) -> str:
    """How device lanes are named: MTIA, HPU, XPU, PrivateUse1 from their categories, else GPU."""
    cats = {str(v or "").lower() for v in cat_values}
    for prefix, label in ACCELERATOR_OF_CAT_PREFIX:
        if any(c.startswith(prefix) for c in cats):
            return label
    return "GPU"


def _device(info: LaneInfo, pid: int, gpu_pids: set[int], stream_pids: set[int]) -> str:
    m = _GPU_LABEL.search(info.process_labels.get(pid, ""))
    if m:
        return f"gpu:{m.group(1)}"
    if pid in gpu_pids or pid in stream_pids:
        return f"gpu:{pid}" if pid >= 0 else "gpu"
    return "cpu"


def gpu_categories(cat_values: list[Any]) -> np.ndarray:
    """Per category code: is it a device-side category (GPU_CATS)?"""
    return np.array([str(v or "").lower() in GPU_CATS for v in cat_values] or [False])


KeysAt = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
CHUNK = 1 << 20  # rows per step of the passes below: their temporaries stay a few MB


def build_lanes(
    info: LaneInfo,
    pair: np.ndarray,
    sub: np.ndarray,
    keys_at: KeysAt,
    gpu_rows: np.ndarray,
    cat_values: list[Any],
) -> tuple[pd.DataFrame, np.ndarray]:
    """Lanes table (without max_depth/n_events) and each row's lane index.

    Rows are slices, then instants of threads that may have no slice (`gpu_rows`, a
    device-side category, is given for the slices only); `pair` codes each row's (pid,
    tid), `keys_at(rows)` gives the (pid, tid) of some rows: only each lane's first row is
    asked for, so no pid and tid arrays a row are made (16 bytes a row at the load's peak).
    One lane per (pid, tid, sub).
    Order: process sort index, thread sort index, CPU before GPU, pid, tid, sub.
    """
    width = int(sub.max()) + 1 if len(sub) else 1
    if width == 1:  # no overlap rows: the key is the pair (no copy of it)
        key = pair
    else:
        key = pair.astype(I64)
        key *= width
        key += sub
    labels, uniq_keys = pd.factorize(key)  # first-appearance order
    del key
    first = _first_rows(labels, len(uniq_keys))
    pid_first, tid_first = keys_at(first)
    uniq_pid, uniq_tid, uniq_sub = pid_first.tolist(), tid_first.tolist(), sub[first].tolist()
    # a process is a GPU's when one of its slices has a device-side category: the pid of
    # a lane's first row is every row's of that lane
    gpu_lanes = np.zeros(len(uniq_keys), dtype=bool)
    for a in range(0, len(gpu_rows), CHUNK):
        b = min(a + CHUNK, len(gpu_rows))
        gpu_lanes[labels[a:b][gpu_rows[a:b]]] = True
    gpu_pids = set(pid_first[gpu_lanes].tolist())
    stream_pids = {
        p for (p, t), name in info.thread_name.items() if name.lower().startswith("stream")
    }
    stream_pids |= {
        int(p)
        for p, t in zip(uniq_pid, uniq_tid, strict=True)
        if info.text(t).lower().startswith("stream")
    }
    rows = []
    accel = accelerator_label(cat_values)
    for p, t, s in zip(uniq_pid, uniq_tid, uniq_sub, strict=True):
        device = _device(info, p, gpu_pids, stream_pids)
        gpu = device.startswith("gpu")
        process = _process_label(info, p, device, accel)
        thread = _thread_label(info, p, t, gpu)
        label = f"{process} · {thread}" + (f" (overlap {s})" if s else "")
        # missing sort indexes: 0, so CPU-before-GPU decides; string ids (Spans, async tracks)
        # go after numbered ones
        psort = info.process_sort.get(p, 0 if p >= 0 else 2**40)
        tsort = info.thread_sort.get((p, t), 0 if t >= 0 else 2**40)
        rows.append((psort, tsort, int(gpu), p, t, s, process, thread, label, device))
    order = sorted(range(len(rows)), key=lambda k: rows[k][:6])
    lanes = pd.DataFrame(
        [rows[k] for k in order],
        columns=[*_SORT_COLUMNS, "process", "thread", "label", "device"],
    )
    lanes.insert(0, "lane", np.arange(len(lanes), dtype=np.int32))
    lanes["sort_key"] = np.arange(len(lanes), dtype=I64)
    lanes["max_depth"] = np.zeros(len(lanes), dtype=np.int16)
    lanes["n_events"] = np.zeros(len(lanes), dtype=I64)
    lanes = lanes[list(schema.LANES)]
    lane_of_unique = np.empty(len(order), dtype=I64)
    lane_of_unique[order] = np.arange(len(order), dtype=I64)
    return lanes, _relabelled(labels, lane_of_unique)


def _first_rows(labels: np.ndarray, n: int) -> np.ndarray:
    """The first row of each of the `n` labels (labels[first[k]] == k, the smallest such
    row), chunk by chunk from the end: a later chunk's rows are overwritten by an earlier
    chunk's, so no row-sized array of positions is made."""
    first = np.empty(n, dtype=I64)
    for b in range(len(labels), 0, -CHUNK):
        a = max(b - CHUNK, 0)
        first[labels[a:b][::-1]] = np.arange(b - 1, a - 1, -1, dtype=I64)
    return first


def _relabelled(labels: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """lut[labels] as int64, written over `labels` chunk by chunk where it is an int64
    array of its own (pandas' codes: intp), so the rows' lanes take no second array."""
    if labels.dtype != I64 or not labels.flags.writeable or not labels.flags.c_contiguous:
        out: np.ndarray = lut[labels]
        return out
    for a in range(0, len(labels), CHUNK):
        labels[a : a + CHUNK] = lut[labels[a : a + CHUNK]]
    return labels


def _process_label(info: LaneInfo, pid: int, device: str, accel: str = "GPU") -> str:
    if device.startswith("gpu:"):
        return f"{accel} {device[4:]}"
    name = info.process_name.get(pid)
    raw = info.text(pid)
    if name:
        return f"{name} ({raw})" if pid >= 0 else name
    if pid >= 0:
        return f"process {pid}"
    return raw or "(no process)"


def _thread_label(info: LaneInfo, pid: int, tid: int, gpu: bool) -> str:
    name = info.thread_name.get((pid, tid))
    if name:
        return name
    raw = info.text(tid)
    if tid >= 0:
        return f"stream {tid}" if gpu else f"thread {tid}"
    return raw or "(no thread)"


__all__ = [
    "KeysAt",
    "LaneInfo",
    "build_lanes",
    "categorical",
    "compiled_steps",
    "gpu_categories",
    "joint_codes",
    "key_ids",
    "kinds_for",
    "lookup",
]
