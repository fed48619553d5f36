"""memray captures (`memray run -o out.bin`), reduced to columns while they are read.

Stacks are interned: a frame (function, file, line) gets an id once, a stack is a slice of
`stack_frames` (innermost first, as memray reports them); stack 0 is the empty stack
(allocations made before any Python frame, e.g. at interpreter start-up).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class MemrayCapture:
    """A memray capture as columns (filled by `perfview.loaders.memray`).

    peak / leaks: one row per site (stack): size_bytes and count of the allocations alive at
    the high-water mark / never freed. intervals: per thread (tid), site and interval, the
    allocations made
    before memory snapshot `start` and freed before snapshot `end` (-1: never freed).
    memory: the memory snapshots memray takes every few ms (ts_ns absolute, rss, heap).
    """

    peak: pd.DataFrame
    leaks: pd.DataFrame
    intervals: pd.DataFrame
    frames: pd.DataFrame  # name, file, line
    stack_offsets: np.ndarray  # int64, n_stacks + 1
    stack_frames: np.ndarray  # int32 frame ids, innermost first
    memory: pd.DataFrame  # ts_ns, rss_bytes, heap_bytes
    threads: pd.DataFrame  # tid, name, allocations
    meta: dict[str, Any] = field(default_factory=dict)

    def stack(self, stack_id: int) -> np.ndarray:
        return self.stack_frames[self.stack_offsets[stack_id] : self.stack_offsets[stack_id + 1]]


class StackInterner:
    """(function, file, line) frames → ids; stacks (tuples of frame ids) → ids."""

    def __init__(self) -> None:
        self.frame_ids: dict[tuple[str, str, int], int] = {}
        self.stack_ids: dict[tuple[int, ...], int] = {(): 0}
        self.stacks: list[tuple[int, ...]] = [()]

    def stack(self, frames: Iterable[Any]) -> int:
        ids = self.frame_ids
        key = []
        for fn, file, line in frames:
            fk = (str(fn), str(file), int(line or 0))
            fid = ids.get(fk)
            if fid is None:
                fid = ids[fk] = len(ids)
            key.append(fid)
        t = tuple(key)
        sid = self.stack_ids.get(t)
        if sid is None:
            sid = self.stack_ids[t] = len(self.stacks)
            self.stacks.append(t)
        return sid

    def arrays(self) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        keys = list(self.frame_ids)
        frames = pd.DataFrame(
            {
                "name": pd.Series([k[0] for k in keys], dtype=object),
                "file": pd.Series([k[1] for k in keys], dtype=object),
                "line": np.array([k[2] for k in keys], dtype=np.int64),
            }
        )
        lengths = np.array([len(s) for s in self.stacks], dtype=np.int64)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter(
            (f for s in self.stacks for f in s), dtype=np.int32, count=int(offsets[-1])
        )
        return frames, offsets, flat
