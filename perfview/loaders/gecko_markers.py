"""A Firefox Profiler profile's markers as a Timeline: intervals as slices, instants as instants,
one track per thread that has markers.

Markers come in every shape the profile's versions wrote:

- `phase` (0 instant, 1 interval, 2 interval start, 3 interval end) with `startTime` and
  `endTime`: what Firefox and the profiler write today;
- `startTime`/`endTime` without a phase: an interval where both are numbers, else an instant;
- `time` with a `data.interval` of "start" or "end" (old *tracing* markers), else an instant.

Starts and ends are paired per thread and name, innermost first (a stack per name); a start
never ended runs to the thread's last marker, an end never started is dropped. Times are
milliseconds from the profile's zero (a raw child process's from its own `meta.startTime`,
shifted by the loader), kept as int64 ns. Slices that overlap without nesting go to extra rows
of their thread (`nesting.assign_rows`), as a trace's do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis import nesting
from perfview.core.model import Timeline, schema

_INSTANT, _INTERVAL, _START, _END = 0, 1, 2, 3


@dataclass
class Markers:
    """The markers of every thread, gathered thread by thread (`add`), as flat lists."""

    slices: list[tuple[int, float, float, str, str]] = field(default_factory=list)
    instants: list[tuple[int, float, str, str]] = field(default_factory=list)
    threads: list[tuple[int, str, str]] = field(default_factory=list)  # process, thread, label

    def add(
        self,
        columns: dict[str, list[Any]],
        n: int,
        strings: list[Any],
        offset_ms: float,
        where: tuple[int, str, str],
    ) -> None:
        """One thread's marker table (as columns, `n` rows) with its strings; `where` is the
        thread's process number, name and label."""
        names = [_name(v, strings) for v in _column(columns, "name", n)]
        cats = [_category(d) for d in _column(columns, "data", n)]
        if "phase" in columns or "startTime" in columns:
            starts = _times(_column(columns, "startTime", n), offset_ms)
            ends = _times(_column(columns, "endTime", n), offset_ms)
            phases = [_phase(p, s, e) for p, s, e in zip(_column(columns, "phase", n), starts,
                                                          ends, strict=True)]  # fmt: skip
        else:
            starts = _times(_column(columns, "time", n), offset_ms)
            ends = [math.nan] * n
            phases = [_tracing(d) for d in _column(columns, "data", n)]
        lane = len(self.threads)
        before = len(self.slices) + len(self.instants)
        self._pair(lane, names, cats, starts, ends, phases)
        if len(self.slices) + len(self.instants) > before:
            self.threads.append(where)
        else:  # nothing drawable: no track
            pass

    def _pair(
        self,
        lane: int,
        names: list[str],
        cats: list[str],
        starts: list[float],
        ends: list[float],
        phases: list[int],
    ) -> None:
        open_: dict[str, list[tuple[float, str]]] = {}
        last = max((t for t in starts + ends if math.isfinite(t)), default=0.0)
        for name, cat, start, end, phase in zip(names, cats, starts, ends, phases, strict=True):
            if phase == _INSTANT and math.isfinite(start):
                self.instants.append((lane, start, name, cat))
            elif phase == _INTERVAL and math.isfinite(start) and math.isfinite(end):
                self.slices.append((lane, start, max(end, start), name, cat))
            elif phase == _START and math.isfinite(start):
                open_.setdefault(name, []).append((start, cat))
            elif phase == _END and open_.get(name):
                begin, begin_cat = open_[name].pop()
                time = end if math.isfinite(end) else start
                if math.isfinite(time):
                    self.slices.append((lane, begin, max(time, begin), name, begin_cat))
        for name, stack in open_.items():  # never ended: to the thread's last marker
            self.slices += [(lane, begin, max(last, begin), name, cat) for begin, cat in stack]

    def timeline(self) -> Timeline | None:
        """The markers as a Timeline, or None when no thread has one."""
        if not self.slices and not self.instants:
            return None
        origin = min([s[1] for s in self.slices] + [i[1] for i in self.instants])
        return _build(self, origin)


def _column(columns: dict[str, list[Any]], name: str, n: int) -> list[Any]:
    values = columns.get(name) or []
    return list(values[:n]) + [None] * (n - len(values[:n]))


def _name(value: Any, strings: list[Any]) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(strings):
        return str(strings[value])
    return "(marker)"


def _category(data: Any) -> str:
    if isinstance(data, dict):
        value = data.get("type") or data.get("category")
        if isinstance(value, str):
            return value
    return "marker"


def _times(values: list[Any], offset_ms: float) -> list[float]:
    """Finite milliseconds (NaN for anything else), shifted by the thread's offset."""
    out = []
    for v in values:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        out.append(float(v) + offset_ms if ok and abs(v) < 1e12 else math.nan)
    return out


def _phase(phase: Any, start: float, end: float) -> int:
    if isinstance(phase, int) and not isinstance(phase, bool) and 0 <= phase <= 3:
        return phase
    return _INTERVAL if math.isfinite(start) and math.isfinite(end) else _INSTANT


def _tracing(data: Any) -> int:
    interval = data.get("interval") if isinstance(data, dict) else None
    return (
        {"start": _START, "end": _END}.get(interval, _INSTANT)
        if isinstance(interval, str)
        else _INSTANT
    )


def _ns(ms: np.ndarray, origin: float) -> np.ndarray:
    return np.rint((ms - origin) * 1e6).astype(np.int64)


def _build(markers: Markers, origin: float) -> Timeline:
    threads = markers.threads
    cols = list(zip(*markers.slices, strict=True)) if markers.slices else [()] * 5
    thread = np.asarray(cols[0], dtype=np.int64)
    ts = _ns(np.asarray(cols[1], dtype=np.float64), origin)
    end = _ns(np.asarray(cols[2], dtype=np.float64), origin)
    order = np.lexsort((ts - end, ts, thread))
    thread, ts, end = thread[order], ts[order], end[order]
    names = np.asarray(cols[3], dtype=object)[order] if len(order) else np.zeros(0, dtype=object)
    cats = np.asarray(cols[4], dtype=object)[order] if len(order) else np.zeros(0, dtype=object)
    sub = nesting.assign_rows(thread, ts, end).astype(np.int64)
    n_sub = int(sub.max()) + 1 if len(sub) else 1
    lane_key = thread * n_sub + sub  # (thread, row) in display order
    keys = np.unique(np.concatenate([lane_key, np.arange(len(threads)) * n_sub]))
    lane = np.searchsorted(keys, lane_key)
    order = np.lexsort((ts - end, ts, lane))
    lane, ts, end, names, cats = lane[order], ts[order], end[order], names[order], cats[order]
    depth, parent = nesting.nest(lane, ts, end)
    events = pd.DataFrame(
        {
            "ts": ts, "dur": end - ts, "name": names, "cat": cats, "kind": "annotation",
            "pid": np.asarray([threads[k // n_sub][0] for k in keys], dtype=np.int64)[lane],
            "tid": keys[lane] // n_sub, "lane": lane.astype(np.int32),
            "depth": np.asarray(depth, dtype=np.int16), "parent": np.asarray(parent, np.int64),
            "corr": -1, "ext_id": -1, "shape": "",
        }
    )  # fmt: skip
    lanes = _lanes(threads, keys, n_sub, lane, np.asarray(depth, dtype=np.int64))
    instants = _instants(markers, threads, origin)
    duration = max(int(end.max(initial=0)), int(instants["ts"].max()) if len(instants) else 0)
    return Timeline(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.coerce(instants, schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=schema.empty(schema.MEMORY_EVENTS),
        origin_ns=0,
        duration_ns=duration,
        meta={"gecko_markers": True},
    )


def _lanes(
    threads: list[tuple[int, str, str]],
    keys: np.ndarray,
    n_sub: int,
    lane: np.ndarray,
    depth: np.ndarray,
) -> pd.DataFrame:
    owner = keys // n_sub
    counts = np.bincount(lane, minlength=len(keys))
    deepest = np.zeros(len(keys), dtype=np.int64)
    np.maximum.at(deepest, lane, depth)
    return pd.DataFrame(
        {
            "lane": np.arange(len(keys)), "pid": [threads[t][0] for t in owner], "tid": owner,
            "sub": keys % n_sub, "process": [f"process {threads[t][0]}" for t in owner],
            "thread": [threads[t][1] for t in owner], "label": [threads[t][2] for t in owner],
            "device": "cpu", "sort_key": np.arange(len(keys)), "max_depth": deepest,
            "n_events": counts,
        }
    )  # fmt: skip


def _instants(markers: Markers, threads: list[tuple[int, str, str]], origin: float) -> pd.DataFrame:
    cols = list(zip(*markers.instants, strict=True)) if markers.instants else [()] * 4
    thread = np.asarray(cols[0], dtype=np.int64)
    return pd.DataFrame(
        {
            "ts": _ns(np.asarray(cols[1], dtype=np.float64), origin),
            "name": pd.Series(cols[2], dtype=object),
            "cat": pd.Series(cols[3], dtype=object),
            "pid": np.asarray([threads[t][0] for t in thread], dtype=np.int64),
            "tid": thread,
            "scope": "t",
        }
    )


__all__ = ["Markers"]
