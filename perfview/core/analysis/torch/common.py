"""Shared helpers of the torch analysis pages: masks, step windows, args decoding (interval
unions: `unions`).

Every page works on the columnar `Timeline` only (events, lanes, memory, args, meta), so it
stays independent of how the trace loader fills it. Anything the loader does not give as a
column (launch configuration, deviceProperties) is read here from `Timeline.args` / `meta`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import numpy as np
import pandas as pd

from perfview.core.analysis.torch import remembered
from perfview.core.model import Timeline

I64 = np.int64
T = TypeVar("T")
GPU_KINDS = ("kernel", "memcpy", "memset")
# NCCL (CUDA) and RCCL (ROCm) collective kernels: ncclKernel_AllReduce…, ncclDevKernel_…
COMM_KERNEL_RE = r"(?i)\b(?:void )?[rn]ccl|c10d::"
DATALOADER_PREFIX = "enumerate(DataLoader)"


def per_events(fn: Callable[[Timeline], T]) -> Callable[[Timeline], T]:
    """Remember `fn(timeline)` for as long as `timeline.events` lives, within the budget
    of everything remembered (`remembered`: the least recently used let go first).

    The overview's tables and its recommendations ask for the same steps and utilisation
    several times; on a 1 GB trace each costs 0.1-0.3 s. DataFrames are handed out as copies,
    so a caller that edits one changes nothing for the next.
    """
    store = remembered.Store()

    @functools.wraps(fn)
    def wrapper(timeline: Timeline) -> T:
        events = timeline.events
        value = store.while_alive(events, id(events), lambda: fn(timeline))
        return value.copy() if isinstance(value, pd.DataFrame) else value  # type: ignore[return-value]

    return wrapper


_MASKS = remembered.Store()


@dataclass(frozen=True)
class _Bits:
    """A remembered mask, a bit a row (`np.packbits`): a byte a row kept, the masks of a
    20 GB trace (67M slices) were 67 MB each, a gigabyte for the Overview's ~15."""

    packed: np.ndarray
    n: int

    @classmethod
    def of(cls, mask: np.ndarray) -> _Bits:
        return cls(np.packbits(mask), len(mask))

    def unpacked(self) -> np.ndarray:
        return np.unpackbits(self.packed, count=self.n).view(bool)


def _remembered(
    events: pd.DataFrame, key: tuple[str, object], compute: Callable[[], np.ndarray]
) -> np.ndarray:
    """`compute()`, a mask over `events`, made once while that frame lives (within the
    budget, see `per_events`, and packed: `_Bits`) and handed out as an array of its own
    (callers may edit theirs). The Overview and its findings ask for the same kind and name
    masks 10-20 times: ~0.15 s of a 1 GB trace's first page."""
    bits: _Bits = _MASKS.while_alive(events, (id(events), *key), lambda: _Bits.of(compute()))
    return bits.unpacked()


def kind_mask(events: pd.DataFrame, kinds: Iterable[str]) -> np.ndarray:
    """Boolean mask of rows whose `kind` is one of `kinds`."""
    wanted = frozenset(kinds)
    return _remembered(events, ("kind", wanted), lambda: _kind_mask(events, wanted))


def _kind_mask(events: pd.DataFrame, kinds: frozenset[str]) -> np.ndarray:
    column = events["kind"]
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.isin(list(kinds)), dtype=bool)
    codes = column.cat.codes.to_numpy()
    index = pd.Index(column.cat.categories)
    mask = np.zeros(len(codes), dtype=bool)
    for kind in kinds:  # a few compares of int8 codes: a tenth of Categorical.isin
        k = index.get_indexer([kind])[0]
        if k >= 0:
            mask |= codes == k
    return mask


def name_mask(events: pd.DataFrame, pattern: str) -> np.ndarray:
    """Rows whose name matches the regex, tested once per distinct name (names are categorical)."""
    return _remembered(events, ("name", pattern), lambda: _name_mask(events, pattern))


def _name_mask(events: pd.DataFrame, pattern: str) -> np.ndarray:
    names = events["name"]
    if isinstance(names.dtype, pd.CategoricalDtype):
        cats = pd.Series(names.cat.categories.astype(str))
        hit = cats.str.contains(pattern, regex=True).to_numpy(dtype=bool)
        codes = names.cat.codes.to_numpy()
        return np.append(hit, False)[codes]  # a missing name's code, -1, reads the last: False
    return np.asarray(names.astype(str).str.contains(pattern, regex=True), dtype=bool)


def comm_kernel_mask(events: pd.DataFrame) -> np.ndarray:
    """GPU kernels that are collective communication (NCCL/RCCL), by kernel name."""
    return np.asarray(kind_mask(events, ("kernel",)) & name_mask(events, COMM_KERNEL_RE), bool)


def _lane_table(timeline: Timeline) -> np.ndarray:
    """Device label per lane id (index = lane)."""
    lanes = timeline.lanes
    n = int(max(len(lanes), int(timeline.events["lane"].max()) + 1 if len(timeline.events) else 0))
    table = np.full(n, "", dtype=object)
    table[lanes["lane"].to_numpy(dtype=I64)] = lanes["device"].astype(str).to_numpy()
    return table


def lane_devices(timeline: Timeline) -> pd.Categorical:
    """Device label ("cpu", "gpu:0", …) of every event row, from its lane: a Categorical, so
    picking a device's rows compares small codes (one label object per row, then comparing
    those strings, was ~0.1 s per table at 1 GB)."""
    labels, per_lane = np.unique(_lane_table(timeline).astype(str), return_inverse=True)
    codes = per_lane.astype(np.int32)[timeline.events["lane"].to_numpy()]  # int32: no copy
    return pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object))


def gpu_lane_mask(timeline: Timeline) -> np.ndarray:
    """Rows on a GPU lane (device label starting with "gpu"); decided once per lane."""
    is_gpu = np.asarray([str(d).startswith("gpu") for d in _lane_table(timeline)], dtype=bool)
    if not len(is_gpu):
        return np.zeros(len(timeline.events), dtype=bool)
    return np.asarray(is_gpu[timeline.events["lane"].to_numpy()], dtype=bool)  # int32: no copy


@per_events
def step_rows(timeline: Timeline) -> pd.DataFrame:
    """The `ProfilerStep#N` slices on CPU threads: step, row, start_ns, end_ns, dur_ns.

    kineto also mirrors steps onto GPU streams as gpu_user_annotation; those are skipped, as is a
    repeat of the same N (the first by time wins), so every step appears once, sorted by start.
    """
    ev = timeline.events
    cand = np.flatnonzero(
        kind_mask(ev, ("annotation", "cpu_op")) & name_mask(ev, r"^ProfilerStep#\d+$")
    )
    names = names_at(ev, cand).astype(str)
    steps = np.asarray([int(n.split("#", 1)[1]) for n in names], dtype=I64)
    ts = ev["ts"].to_numpy(dtype=I64)[cand]
    dur = ev["dur"].to_numpy(dtype=I64)[cand]
    out = pd.DataFrame({"step": steps, "row": cand.astype(I64), "start_ns": ts, "dur_ns": dur})
    out["end_ns"] = out["start_ns"] + out["dur_ns"]
    out = out.sort_values(["start_ns", "step"], kind="stable").drop_duplicates("step")
    return out[["step", "row", "start_ns", "end_ns", "dur_ns"]].reset_index(drop=True)


def analysis_window(timeline: Timeline) -> tuple[int, int]:
    """(start, end) ns of what utilisation is measured over: the steps if any, else the trace."""
    steps = step_rows(timeline)
    if len(steps):
        return int(steps["start_ns"].min()), int(steps["end_ns"].max())
    return 0, int(timeline.duration_ns)


OUTERMOST_CHUNK = 1 << 22  # rows `outermost` reads a parent of at once (32 MB of int64)


def outermost(events: pd.DataFrame, mask: np.ndarray) -> np.ndarray:
    """`mask` without the rows whose parent is in `mask` too: a child lies inside its parent,
    so the intervals' union is the same from far fewer rows (a trace's cpu_ops are mostly
    nested in cpu_ops). Read a chunk at a time: no array of every row's parent beside it."""
    parent = events["parent"].to_numpy()
    padded = np.concatenate([[False], mask])  # parent -1 reads False
    out = mask.copy()
    for c in range(0, len(mask), OUTERMOST_CHUNK):
        d = c + OUTERMOST_CHUNK
        out[c:d] &= ~padded[parent[c:d] + 1]
    return out


def decode_args(timeline: Timeline, rows: np.ndarray, keys: Sequence[str]) -> dict[str, list[Any]]:
    """Selected args of the given event rows, decoded with msgspec: key → list (None if absent).

    Only the rows a page needs are decoded (kernels for launch columns, …), so a big trace's
    args never become a dict per event. The rows are decoded in one call into a struct that
    holds just `keys` (msgspec skips the rest): per-row calls and dicts made a 1 GB trace's
    290k kernels cost seconds, and their garbage set off collector pauses on the GUI thread.
    """
    store = timeline.args
    rows = np.asarray(rows, dtype=I64)
    valid = (rows >= 0) & (rows < len(store.starts))
    starts = np.zeros(len(rows), dtype=I64)
    lens = np.zeros(len(rows), dtype=I64)
    starts[valid] = store.starts[rows[valid]]
    lens[valid] = store.lens[rows[valid]]
    store.check_spans(rows[valid])
    view = memoryview(store.blob)
    decoder = _args_decoder(tuple(keys))
    decoded: list[Any] = []
    try:
        # chunks: one msgspec call holds the GIL throughout, so a single call over 290k rows
        # would freeze the GUI thread for 0.4 s; 8k rows take a few ms
        for lo in range(0, len(rows), DECODE_CHUNK):
            parts = [
                view[a : a + k] if k else b"null"
                for a, k in zip(
                    starts[lo : lo + DECODE_CHUNK].tolist(),
                    lens[lo : lo + DECODE_CHUNK].tolist(),
                    strict=True,
                )
            ]
            try:
                decoded += decoder.decode(b"[" + b",".join(parts) + b"]")
            except (msgspec.DecodeError, msgspec.ValidationError):
                decoded += [_one(decoder, part) for part in parts]  # a bad row spoils itself
            del parts
    finally:
        view.release()
    fields = [f"f{i}" for i in range(len(keys))]
    return {
        key: [None if d is None else getattr(d, f) for d in decoded]
        for key, f in zip(keys, fields, strict=True)
    }


DECODE_CHUNK = 8192


@functools.cache
def _args_decoder(keys: tuple[str, ...]) -> msgspec.json.Decoder[Any]:
    """A decoder of a list of args objects (or null) keeping only `keys` as fields f0, f1, …"""
    fields = [(f"f{i}", Any, None) for i in range(len(keys))]
    rename = {f"f{i}": key for i, key in enumerate(keys)}
    struct = msgspec.defstruct("Args", fields, rename=rename, gc=False)
    return msgspec.json.Decoder(list[struct | None])  # type: ignore[valid-type]


def _one(decoder: msgspec.json.Decoder[Any], part: Any) -> Any:
    try:
        return decoder.decode(b"[" + bytes(part) + b"]")[0]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def device_properties(timeline: Timeline) -> list[dict[str, Any]]:
    """kineto's deviceProperties list ([] when absent or malformed)."""
    props = timeline.meta.get("deviceProperties")
    if isinstance(props, str):
        try:
            props = msgspec.json.decode(props.encode())
        except msgspec.DecodeError:
            return []
    return [p for p in props if isinstance(p, dict)] if isinstance(props, list) else []


def names_at(events: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """The `name` of `rows` (positions or a boolean mask) as an object array, without making
    the whole categorical column into objects first (4.7M of them at 1 GB: ~35 ms a call)."""
    rows = np.asarray(rows)
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    return np.asarray(events["name"].take(rows).to_numpy(), dtype=object)


def text(values: Any) -> np.ndarray:
    """Plain str object array (tables and CSV expect text, not categoricals); missing values
    stay NaN. A categorical is converted through its few categories and an array that holds
    only str is taken as it is: pandas' own conversion (through its Arrow string type) cost
    ~0.15 s of the Operators page's 0.3 s on a 100 MB trace."""
    if isinstance(values, pd.Series | pd.Index):
        values = values.array
    if isinstance(values, pd.Categorical):
        names = _text(np.asarray(values.categories, dtype=object))
        codes = values.codes
        out = names[codes] if len(names) else np.full(len(codes), np.nan, dtype=object)
        if len(names) and (codes < 0).any():
            out[codes < 0] = np.nan
        return np.asarray(out, dtype=object)
    return _text(values)


def _text(values: Any) -> np.ndarray:
    plain = isinstance(values, np.ndarray) and values.dtype == object and values.ndim == 1
    if plain and pd.api.types.infer_dtype(values, skipna=False) in ("string", "empty"):
        return np.asarray(values).copy()
    return np.asarray(pd.Series(values).astype(object).astype(str).to_numpy(), dtype=object)


__all__ = [
    "COMM_KERNEL_RE",
    "DATALOADER_PREFIX",
    "GPU_KINDS",
    "OUTERMOST_CHUNK",
    "analysis_window",
    "comm_kernel_mask",
    "decode_args",
    "device_properties",
    "gpu_lane_mask",
    "kind_mask",
    "lane_devices",
    "name_mask",
    "names_at",
    "outermost",
    "step_rows",
    "text",
]
