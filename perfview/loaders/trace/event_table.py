"""The events and instants tables of the Timeline, from the per-event columns `build` reads.

Kept apart from `build` so each module stays small. The events table's categorical columns
are made in the slices' order as found, on the threads beside the lanes (`event_labels`),
and only their small codes are put in the final order (`events_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.model import schema
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.lanes import categorical, kinds_for
from perfview.loaders.trace.slices import Phases, Slices
from perfview.loaders.trace.tables import SortedSlices

I64 = np.int64


@dataclass
class Events:
    """The per-event columns every stage of `build` reads (times relative to t0)."""

    cols: Columns
    ph: Phases
    ts: np.ndarray
    ok: np.ndarray  # a valid timestamp
    pid: np.ndarray
    tid: np.ndarray
    name: np.ndarray  # interner codes (int32 or int64)
    cat: np.ndarray


def event_labels(ev: Events, sl: Slices, part: int) -> dict[str, Any]:
    """The events table's categorical columns in the slices' order as found, in two parts
    (0: name and kind, 1: cat and shape) for the two threads beside the lanes: each
    factorizes its codes, and only their small codes are put in the final order later
    (`events_table`)."""
    cols, src = ev.cols, sl.src
    if part == 1:
        return {
            "cat": categorical(ev.cat[src], cols.cats.values),
            "shape": categorical(cols.cat_all("shape")[src], cols.shapes.values),
        }
    kind = kinds_for(ev.cat[src], cols.cats.values, ev.name[src], cols.names.values)
    kind[sl.is_async] = schema.KINDS.index("async")
    return {
        "name": categorical(ev.name[src], cols.names.values),
        "kind": pd.Categorical.from_codes(kind, categories=pd.Index(list(schema.KINDS))),
    }


def _reordered(labels: pd.Categorical, order: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(labels.codes[order], dtype=labels.dtype, validate=False)


def events_table(
    ev: Events, src: np.ndarray, order: np.ndarray, s: SortedSlices, fast: ModuleType | None,
    labels: dict[str, Any], pid: np.ndarray, tid: np.ndarray,
) -> pd.DataFrame:  # fmt: skip
    """The events table from the sorted slices `s`: `src`, `pid` and `tid` are the slices'
    event rows, pids and tids in that order (`order`: the slices as found, in that order),
    taken by `build` so that the slices as found are let go before this table is made."""
    cols = ev.cols
    slice_ph = ev.ph("X") | ev.ph("B")  # X or B: the others (async) have no corr / ext id

    def ids(column: str) -> np.ndarray:
        values = cols.cat_all(column).astype(I64, copy=False)
        if fast is not None:
            out: np.ndarray = fast.gather_where(values, src, slice_ph)
            return out
        return np.where(slice_ph[src], values[src], -1)

    return pd.DataFrame(
        {
            "ts": s.start,
            "dur": s.end - s.start,
            "name": _reordered(labels["name"], order),
            "cat": _reordered(labels["cat"], order),
            "kind": _reordered(labels["kind"], order),
            "pid": pid,
            "tid": tid,
            "lane": s.lane.astype(np.int32),
            "depth": s.depth,
            "parent": s.parent,
            "corr": ids("corr"),
            "ext_id": ids("ext"),
            "shape": _reordered(labels["shape"], order),
        },
        copy=False,
    )


def instants_table(ev: Events, inst: np.ndarray, scope: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ts": ev.ts[inst],
            "name": categorical(ev.name[inst], ev.cols.names.values),
            "cat": categorical(ev.cat[inst], ev.cols.cats.values),
            "pid": ev.pid[inst],
            "tid": ev.tid[inst],
            "scope": pd.Categorical(
                [chr(c) for c in scope.tolist()] if len(scope) < 1000 else _chars(scope),
                categories=["t", "p", "g"],
            ),
        }
    )


def _chars(codes: np.ndarray) -> np.ndarray:
    return codes.view("S1").astype(str)


__all__ = ["Events", "event_labels", "events_table", "instants_table"]
