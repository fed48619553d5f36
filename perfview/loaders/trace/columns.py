"""The decoders' common output: every event as flat numpy columns, strings interned.

Both decoders fill one `Columns` the same way (tests compare them on every sample): the
general path batch by batch (`general`), the compiled scanner all at once (`assemble`).
Index = event number in the file; items of the events array that are not objects are skipped.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Interner:
    """Global ids for values seen across batches (strings, pid/tid keys, flow ids)."""

    def __init__(self) -> None:
        self.index: dict[Hashable, int] = {}
        self.values: list[Any] = []

    def add(self, value: Hashable) -> int:
        code = self.index.get(value)
        if code is None:
            code = self.index[value] = len(self.values)
            self.values.append(value)
        return code

    def codes(self, values: Sequence[Any]) -> np.ndarray:
        """Global codes of `values`; new distinct values are added (dict lookups run in C).

        New values get codes in order of first appearance (not set order, which varies with
        the string hash seed), so every process builds identical tables from one file.
        """
        index = self.index
        if not set(values).issubset(index):
            for value in dict.fromkeys(values):
                if value not in index:
                    self.add(value)
        return np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))


@dataclass
class Columns:
    """All events as flat arrays (index = event number in the file, non-objects skipped)."""

    n: int = 0
    ph: list[np.ndarray] = field(default_factory=list)  # int32 codes into phs
    name: list[np.ndarray] = field(default_factory=list)
    cat: list[np.ndarray] = field(default_factory=list)
    pid: list[np.ndarray] = field(default_factory=list)
    tid: list[np.ndarray] = field(default_factory=list)
    ts: list[np.ndarray] = field(default_factory=list)
    ts_ok: list[np.ndarray] = field(default_factory=list)
    dur: list[np.ndarray] = field(default_factory=list)
    dur_ok: list[np.ndarray] = field(default_factory=list)
    corr: list[np.ndarray] = field(default_factory=list)
    ext: list[np.ndarray] = field(default_factory=list)
    shape: list[np.ndarray] = field(default_factory=list)
    fid: list[np.ndarray] = field(default_factory=list)  # -1 = none
    bp_e: list[np.ndarray] = field(default_factory=list)
    scope: list[np.ndarray] = field(default_factory=list)  # uint8 first char of "s", 0 = none
    arg_rows: list[np.ndarray] = field(default_factory=list)
    arg_lens: list[np.ndarray] = field(default_factory=list)
    arg_blobs: list[bytes] = field(default_factory=list)
    arg_starts: list[np.ndarray] = field(default_factory=list)  # scanner path: offsets in the file
    phs: Interner = field(default_factory=Interner)
    names: Interner = field(default_factory=Interner)
    cats: Interner = field(default_factory=Interner)
    keys: Interner = field(default_factory=Interner)  # pid and tid values (int | str | None)
    shapes: Interner = field(default_factory=Interner)
    ids: Interner = field(default_factory=Interner)
    metadata: list[tuple[int, str, Any, Any, Any]] = field(default_factory=list)
    counters: list[tuple[int, str, float]] = field(default_factory=list)  # (event, series, v)
    memory: dict[str, list[np.ndarray]] = field(default_factory=dict)
    skipped: int = 0  # array items that were not event objects

    def __post_init__(self) -> None:
        self.shapes.add("")

    def cat_all(self, name: str) -> np.ndarray:
        """All batches of one column (the array itself, not a copy, when there is one)."""
        parts = getattr(self, name)
        if len(parts) == 1:
            out: np.ndarray = parts[0]
            return out
        return np.concatenate(parts) if parts else np.zeros(0)

    def mem(self, name: str) -> np.ndarray:
        parts = self.memory.get(name, [])
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


__all__ = ["Columns", "Interner"]
