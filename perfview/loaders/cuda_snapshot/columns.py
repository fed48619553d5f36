"""CUDA memory snapshot columns from the unpickled dicts (the restricted unpickler's path).

`snapshot_from_data` turns what `torch.cuda.memory._dump_snapshot()` pickles (see
`cuda_snapshot`) into a `CudaSnapshot`; the compiled path (`fast`) builds the very
same one from a walked pickle, and takes its empty tables from here.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import pandas as pd

from perfview.core.model.cuda_memory import BLOCK_COLUMNS, SEGMENT_COLUMNS, CudaSnapshot
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop


class _Interner:
    """Frames → ids, stacks (tuples of frame ids) → ids; stack 0 is the empty stack."""

    def __init__(self) -> None:
        self.frame_ids: dict[tuple[str, str, int], int] = {}
        self.stack_ids: dict[tuple[int, ...], int] = {(): 0}
        self.stack_list: list[tuple[int, ...]] = [()]
        # Snapshots share one frames list among the entries of a stack (pickle's memo keeps
        # that sharing), so a list already seen is recognised by identity: no per-frame work.
        # The unpickled data outlives the interner, so ids are not reused meanwhile.
        self.by_list: dict[int, int] = {}
        self.by_dict: dict[int, int] = {}  # frame dict id → frame id
        self.by_ids: dict[tuple[int, ...], int] = {}  # frame dict ids → stack id

    def stack(self, frames: Any) -> int:
        if not frames or not isinstance(frames, list):
            return 0
        known = self.by_list.get(id(frames))
        if known is not None:
            return known
        # Distinct lists usually hold the same shared frame dicts: the tuple of their ids
        # (built at C speed) finds a stack seen before without touching any frame.
        ids = tuple(map(id, frames))
        sid = self.by_ids.get(ids)
        if sid is None:
            sid = self.by_ids[ids] = self._intern(frames)
        self.by_list[id(frames)] = sid
        return sid

    def _intern(self, frames: list[Any]) -> int:
        found: list[int | None] = list(map(self.by_dict.get, map(id, frames)))
        if None in found:
            firsts = [
                self._frame(f) if k is None else k for k, f in zip(found, frames, strict=True)
            ]
            key = [k for k in firsts if k >= 0]
        else:
            key = cast(list[int], found)
        t = tuple(key)
        sid = self.stack_ids.get(t)
        if sid is None:
            sid = self.stack_ids[t] = len(self.stack_list)
            self.stack_list.append(t)
        return sid

    def _frame(self, f: Any) -> int:
        """Id of one frame dict (-1: not a dict, skipped)."""
        if not isinstance(f, dict):
            return -1
        fk = (str(f.get("name", "")), str(f.get("filename", "")), _int(f.get("line")))
        fid = self.frame_ids.get(fk)
        if fid is None:
            fid = self.frame_ids[fk] = len(self.frame_ids)
        self.by_dict[id(f)] = fid
        return fid

    def frames_table(self) -> pd.DataFrame:
        keys = list(self.frame_ids)
        return pd.DataFrame(
            {
                "name": pd.Series([k[0] for k in keys], dtype=object),
                "file": pd.Series([k[1] for k in keys], dtype=object),
                "line": np.array([k[2] for k in keys], dtype=np.int64),
            }
        )

    def stack_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.array([len(s) for s in self.stack_list], dtype=np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter(
            (f for s in self.stack_list for f in s), dtype=np.int32, count=int(offsets[-1])
        )
        return offsets, flat


def _int(value: Any) -> int:
    """An int64-safe integer from a field (missing, bool, text, nan, inf → 0; huge → clamped)."""
    if isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(min(value, 2**63 - 1), -(2**63))


def _segments(raw: list[Any], intern: _Interner) -> tuple[pd.DataFrame, pd.DataFrame]:
    seg_rows: list[tuple[Any, ...]] = []
    blk_rows: list[tuple[Any, ...]] = []
    for i, seg in enumerate(raw):
        if not isinstance(seg, dict):
            raise LoadError("a segment is not a dict; this is not a CUDA memory snapshot")
        device = _int(seg.get("device"))
        seg_rows.append(
            (
                i,
                device,
                _int(seg.get("address")),
                _int(seg.get("total_size")),
                _int(seg.get("allocated_size")),
                _int(seg.get("active_size")),
                _int(seg.get("requested_size")),
                _int(seg.get("stream")),
                str(seg.get("segment_type", "")),
                bool(seg.get("is_expandable", False)),
                intern.stack(seg.get("frames")),
            )
        )
        blocks = seg.get("blocks")
        for blk in blocks if isinstance(blocks, list) else ():
            if isinstance(blk, dict):
                blk_rows.append(
                    (
                        i,
                        device,
                        _int(blk.get("address")),
                        _int(blk.get("size")),
                        _int(blk.get("requested_size")),
                        str(blk.get("state", "")),
                        intern.stack(blk.get("frames")),
                    )
                )
    segments = pd.DataFrame.from_records(seg_rows, columns=list(SEGMENT_COLUMNS))
    blocks = pd.DataFrame.from_records(blk_rows, columns=list(BLOCK_COLUMNS))
    segments["segment_type"] = segments["segment_type"].astype("category")
    blocks["state"] = blocks["state"].astype("category")
    return segments.astype(_INT_COLUMNS_SEG), blocks.astype(_INT_COLUMNS_BLK)


_INT_COLUMNS_SEG = {
    c: np.int64
    for c in ("segment", "device", "address", "total_bytes", "allocated_bytes", "active_bytes")
} | {"requested_bytes": np.int64, "stream": np.int64, "stack": np.int32}
_INT_COLUMNS_BLK = {
    "segment": np.int64,
    "device": np.int64,
    "address": np.int64,
    "size_bytes": np.int64,
    "requested_bytes": np.int64,
    "stack": np.int32,
}


def _int_column(values: list[Any]) -> np.ndarray:
    """int64 column from raw field values; a bad value (missing, float, huge) becomes 0/clamped."""
    try:
        return np.asarray(values, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.asarray([_int(v) for v in values], dtype=np.int64)


def _traces(raw: Any, intern: _Interner, progress: Progress) -> tuple[pd.DataFrame, bool]:
    """Trace entries → columns. Fields are gathered raw and converted per column (numpy),
    so the per-entry Python work is a few dict lookups and the stack interning."""
    cols: dict[str, list[Any]] = {k: [] for k in ("action", "addr", "size", "stream", "time_us")}
    device: list[int] = []
    seq: list[int] = []
    stack: list[int] = []
    lists = raw if isinstance(raw, list) else []
    total = sum(len(t) for t in lists if isinstance(t, list)) or 1
    step = max(total // 20, 20_000)
    intern_stack = intern.stack
    for dev, entries in enumerate(lists):
        if not isinstance(entries, list):
            continue
        good = [e for e in entries if isinstance(e, dict)]
        device += [dev] * len(good)
        seq += range(len(good))
        for name, column in cols.items():
            column += [e.get(name) for e in good]
        for lo in range(0, len(good), step):
            stack += [intern_stack(e.get("frames")) for e in good[lo : lo + step]]
            progress(0.5 + 0.45 * len(stack) / total, "reading trace entries")
    times = cols["time_us"]
    has_time = any(type(t) is int for t in times)
    ts = np.asarray([t if type(t) is int and abs(t) < 2**53 else -1 for t in times], np.int64)
    trace = pd.DataFrame(
        {
            "device": np.asarray(device, dtype=np.int64),
            "seq": np.asarray(seq, dtype=np.int64),
            "action": pd.Categorical([str(a) if a is not None else "" for a in cols["action"]]),
            "addr": _int_column(cols["addr"]),
            "size_bytes": _int_column(cols["size"]),
            "stream": _int_column(cols["stream"]),
            "ts_ns": np.where(ts >= 0, ts * 1000, -1),
            "stack": np.asarray(stack, dtype=np.int32),
        }
    )
    return trace, has_time


def _check_size(data: dict[str, Any], max_items: int) -> None:
    """Refuse a pickle whose memo repeats lists far beyond what its bytes could hold.

    Pickle references let a few KB name the same list a million times (a "billion laughs"
    file): harmless to unpickle, but walking it would never end. Every real entry, block or
    segment costs at least a byte of the file, so more items than bytes means such a file.
    """
    lists = [data["segments"], *(t for t in data.get("device_traces") or () if isinstance(t, list))]
    count = sum(len(x) for x in lists)
    count += sum(
        len(s["blocks"])
        for s in data["segments"]
        if isinstance(s, dict) and isinstance(s.get("blocks"), list)
    )
    if count > max_items:
        raise LoadError(
            f"it names {count:,} allocator records in {max_items:,} bytes (repeated references); "
            "it is not a real CUDA memory snapshot"
        )


def snapshot_from_data(
    data: Any, progress: Progress = noop, max_items: int | None = None
) -> CudaSnapshot:
    """Columnar snapshot from the unpickled dict; LoadError when it is not a snapshot.

    `max_items` (the decoded file size) bounds the records a file may name; see `_check_size`.
    """
    if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
        raise LoadError("the pickle holds no `segments` list; it is not a CUDA memory snapshot")
    if max_items is not None:
        _check_size(data, max_items)
    intern = _Interner()
    progress(0.45, "reading segments")
    segments, blocks = _segments(data["segments"], intern)
    trace, has_time = _traces(data.get("device_traces"), intern, progress)
    offsets, flat = intern.stack_arrays()
    settings = data.get("allocator_settings")
    return CudaSnapshot(
        segments=segments,
        blocks=blocks,
        trace=trace,
        frames=intern.frames_table(),
        stack_offsets=offsets,
        stack_frames=flat,
        has_time=has_time,
        keys=[str(k) for k in data],
        allocator_settings=settings if isinstance(settings, dict) else {},
    )
