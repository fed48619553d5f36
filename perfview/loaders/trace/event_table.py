"""The events and instants tables of the Timeline, from the per-event columns `build` reads.

Kept apart from `build` so each module stays small. The events table's categorical columns
are made in the slices' order as found, on the threads beside the lanes (`event_labels`),
and only their small codes are put in the final order (`events_table`).
"""

from __future__ import annotations

from collections.abc import Callable
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

    def let_go_fields(self) -> None:
        """The per-event times, pids, tids, names and categories were read for the last
        time (the labels, the instants and the flows' ends are made): let go, so the args
        index, the flows' binding and the events table are made without them beside them.
        `cols`, `ph` and `ok` stay for the report."""
        self.ts = self.pid = self.tid = self.name = self.cat = _EMPTY


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


@dataclass
class SliceParts:
    """What `events_table` reads besides the sorted slices, in their terms: `src` the
    slices' event rows in the final order, `order` the slices as found in that order,
    `labels` their categorical columns as found (`event_labels`). Handed over whole so that
    the table can let each part go once read: `build` keeps no reference of its own."""

    src: np.ndarray
    order: np.ndarray
    labels: dict[str, Any]


COLUMN_ORDER = (
    "ts", "dur", "name", "cat", "kind", "pid", "tid", "lane", "depth", "parent", "corr",
    "ext_id", "shape",
)  # fmt: skip


def events_table(
    ev: Events, s: SortedSlices, lanes: pd.DataFrame, fast: ModuleType | None,
    parts: SliceParts, read: Callable[..., object],
) -> pd.DataFrame:  # fmt: skip
    """The events table from the sorted slices `s` and `parts` (see there). A slice's pid
    and tid are its lane's (a lane is one pid, tid and overlap row): read from `lanes`
    here, not carried per slice through the build's peak (16 bytes a slice). Made column by
    column, each input let go once its column is made: `s.end` and `s.lane` (the table
    keeps the duration and an int32 lane), the labels as found, `order` and `src`, and the
    file's corr and ext columns (`read`: the build's let-go, see `build._read`). At a
    10 GB trace's build, where a load peaks, those are ~50 bytes a slice that no longer sit
    beside the finished columns. `s` and `parts` are left emptied."""
    cols = ev.cols
    slice_ph = ev.ph("X") | ev.ph("B")  # X or B: the others (async) have no corr / ext id
    out: dict[str, Any] = {"ts": s.start}
    out["pid"] = lanes["pid"].to_numpy(dtype=I64)[s.lane]
    out["tid"] = lanes["tid"].to_numpy(dtype=I64)[s.lane]
    out["depth"], out["parent"] = s.depth, s.parent
    out["dur"] = s.end - s.start
    s.end = _EMPTY
    out["lane"] = s.lane.astype(np.int32)
    s.lane = _EMPTY
    order, labels = parts.order, parts.labels
    parts.order, parts.labels = _EMPTY, {}
    for key in ("name", "cat", "kind", "shape"):
        out[key] = _reordered(labels.pop(key), order)
    del order
    src = parts.src
    parts.src = _EMPTY
    out["corr"] = _ids(cols, "corr", src, slice_ph, fast, read)
    out["ext_id"] = _ids(cols, "ext", src, slice_ph, fast, read)
    del src, slice_ph
    return pd.DataFrame({key: out.pop(key) for key in COLUMN_ORDER}, copy=False)


def _ids(
    cols: Columns, column: str, src: np.ndarray, slice_ph: np.ndarray,
    fast: ModuleType | None, read: Callable[..., object],
) -> np.ndarray:  # fmt: skip
    """The file's `column` (corr or ext) for each slice's event (-1 where not X or B), the
    column let go once gathered."""
    values = cols.cat_all(column).astype(I64, copy=False)
    if fast is not None:
        gathered: np.ndarray = fast.gather_where(values, src, slice_ph)
    else:
        gathered = np.where(slice_ph[src], values[src], -1)
    del values
    read(column)
    return gathered


_EMPTY = np.zeros(0, dtype=I64)


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


__all__ = ["Events", "SliceParts", "event_labels", "events_table", "instants_table"]
