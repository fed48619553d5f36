"""What the torch pages remember per loaded trace, within one memory budget for all of it.

The pages ask for the same steps, masks and graphs many times (the Overview and its findings,
the critical path's page, track and what-if replays), so each is made once per events table
and remembered while that table lives (`common.per_events`, `common._remembered`). Unbounded,
that memory grows with the trace: the critical path's graph alone is ~186 bytes a slice, 6 GB
for a 10 GB trace, kept while its tab is open on top of the tables themselves. So everything
remembered here shares one budget (`BUDGET`, an eighth of the machine's memory, at least
512 MB): the least recently used results are let go first, and a result bigger than the
whole budget is handed out without being kept (asked again, it is made again: slower, never
more memory). A 1 GB trace's results (~1 GB together) stay remembered as before.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

MIN_BUDGET = 512 << 20


def _default_budget() -> int:
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - no sysconf
        return 2 << 30
    return max(MIN_BUDGET, total // 8)


BUDGET = _default_budget()


def nbytes(value: Any) -> int:
    """Bytes the arrays of `value` hold (arrays, frames, dataclasses, tuples, lists, dicts
    of them; anything else counts 0). Views are counted as if they owned their bytes: an
    overestimate, which only lets a result go sooner."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=False).sum())
    if isinstance(value, pd.Series | pd.Index):
        return int(value.memory_usage(deep=False))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, tuple | list):
        return sum(nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    return 0


class Store:
    """Remembered results by key, least recently used first, within `BUDGET` bytes for all
    stores together (`_ALL`). Thread-safe: pages are prepared on worker threads."""

    def __init__(self) -> None:
        self.items: dict[Hashable, tuple[Any, int]] = {}

    def get(self, key: Hashable) -> Any | None:
        with _LOCK:
            hit = self.items.get(key)
            if hit is None:
                return None
            _ORDER.move_to_end((id(self), key))
            return hit[0]

    def put(self, key: Hashable, value: Any) -> None:
        """Remember `value` under `key`, letting the least recently used results of every
        store go while the total is over the budget; not kept when it alone is over it."""
        size = nbytes(value)
        with _LOCK:
            self._drop(key)
            if size > BUDGET:
                return
            self.items[key] = (value, size)
            _ORDER[(id(self), key)] = (self, size)
            global _total
            _total += size
            while _total > BUDGET and _ORDER:
                (_, old_key), (store, _) = next(iter(_ORDER.items()))
                store._drop(old_key)

    def while_alive(self, owner: Any, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()`, remembered under `key` for as long as `owner` lives (an events
        table: held by a weak reference, whose end lets the result go) and the budget
        keeps it; made again once either let it go."""
        hit = self.get(key)
        if hit is not None and hit[0]() is owner:
            return hit[1]
        value = compute()
        self.put(key, (weakref.ref(owner, lambda _ref: self.pop(key)), value))
        return value

    def pop(self, key: Hashable) -> None:
        with _LOCK:
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        global _total
        hit = self.items.pop(key, None)
        if hit is not None:
            _ORDER.pop((id(self), key), None)
            _total -= hit[1]


_LOCK = threading.RLock()
_ORDER: OrderedDict[tuple[int, Hashable], tuple[Store, int]] = OrderedDict()
_total = 0


def total() -> int:
    """Bytes remembered now, all stores together."""
    return _total


__all__ = ["BUDGET", "Store", "nbytes", "total"]
