"""A time range of a loaded trace written back as Chrome trace-event JSON (Perfetto opens it).

Why: a 1 GB trace is too big to share or to open in Perfetto's browser UI; the few
milliseconds around a problem are not. Slices that overlap the range are kept whole (their true
durations), with their args, lanes' process/thread names, instants and counter samples inside
the range, and flows whose both ends are kept. Times are written in µs with three decimals
from exact int64 ns (so nothing is rounded), relative to the trace's origin, which is kept as
kineto's `baseTimeNanoseconds`.

Built as text: names are encoded once per category and rows are formatted from numpy columns,
never a dict per event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.atomic import atomic_write
from perfview.core.model import Timeline

I64 = np.int64
CHUNK = 50_000  # rows formatted per write


def _us(ns: np.ndarray) -> list[str]:
    """Exact µs text for int64 ns: 1234567 → "1234.567" (negative values too)."""
    ns = np.asarray(ns, dtype=I64)
    sign = np.where(ns < 0, "-", "")
    mag = np.abs(ns)
    whole, frac = np.divmod(mag, 1000)
    return [f"{s}{w}.{f:03d}" for s, w, f in zip(sign, whole.tolist(), frac.tolist(), strict=True)]


def _encoded(column: pd.Series, rows: np.ndarray) -> list[str]:
    """JSON string literals of a (categorical) text column at `rows`, each value encoded once."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        cats = [json.dumps(str(c), ensure_ascii=False) for c in column.cat.categories]
        codes = column.cat.codes.to_numpy()[rows]
        table = np.asarray([*cats, '""'], dtype=object)
        return table[np.where(codes < 0, len(cats), codes)].tolist()  # type: ignore[no-any-return]
    return [json.dumps(str(v), ensure_ascii=False) for v in column.to_numpy()[rows]]


def overlapping(timeline: Timeline, t0: int, t1: int) -> np.ndarray:
    """Rows of the slices that overlap [t0, t1] (zero-length ones inside it count)."""
    ev = timeline.events
    ts = ev["ts"].to_numpy(dtype=I64)
    end = ts + ev["dur"].to_numpy(dtype=I64)
    return np.flatnonzero((ts <= t1) & (end >= t0))


def _slice_lines(tl: Timeline, rows: np.ndarray) -> Iterator[str]:
    ev = tl.events
    args = tl.args
    for lo in range(0, len(rows), CHUNK):
        part = rows[lo : lo + CHUNK]
        names = _encoded(ev["name"], part)
        cats = _encoded(ev["cat"], part)
        ts = _us(ev["ts"].to_numpy(dtype=I64)[part])
        dur = _us(ev["dur"].to_numpy(dtype=I64)[part])
        pid = ev["pid"].to_numpy()[part].tolist()
        tid = ev["tid"].to_numpy()[part].tolist()
        for i, row in enumerate(part.tolist()):
            raw = args.raw(row)
            extra = ""
            if raw:
                text = raw.decode("utf-8", "replace")
                if _is_json_object(text):
                    extra = f',"args":{text}'
            yield (
                f'{{"ph":"X","name":{names[i]},"cat":{cats[i]},"pid":{pid[i]},"tid":{tid[i]},'
                f'"ts":{ts[i]},"dur":{dur[i]}{extra}}}'
            )


def _is_json_object(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def _meta_lines(tl: Timeline, rows: np.ndarray) -> Iterator[str]:
    """process_name / thread_name metadata for the lanes the kept slices are on."""
    lanes = tl.lanes.set_index(tl.lanes["lane"].astype(np.int64))
    used = np.unique(tl.events["lane"].to_numpy()[rows]) if len(rows) else np.zeros(0, int)
    seen_pid: set[int] = set()
    seen_tid: set[tuple[int, int]] = set()
    for lane in used.tolist():
        if lane not in lanes.index:
            continue
        rec = lanes.loc[lane]
        pid, tid = int(rec["pid"]), int(rec["tid"])
        if pid not in seen_pid:
            seen_pid.add(pid)
            name = json.dumps(str(rec["process"]), ensure_ascii=False)
            yield f'{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{name}}}}}'
        if (pid, tid) not in seen_tid:
            seen_tid.add((pid, tid))
            name = json.dumps(str(rec["thread"]), ensure_ascii=False)
            yield (
                f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},'
                f'"args":{{"name":{name}}}}}'
            )


def _instant_lines(tl: Timeline, t0: int, t1: int) -> Iterator[str]:
    ins = tl.instants
    ts_all = ins["ts"].to_numpy(dtype=I64)
    rows = np.flatnonzero((ts_all >= t0) & (ts_all <= t1))
    names, cats = _encoded(ins["name"], rows), _encoded(ins["cat"], rows)
    scopes = ins["scope"].astype(str).to_numpy()[rows]
    ts = _us(ts_all[rows])
    pid, tid = ins["pid"].to_numpy()[rows].tolist(), ins["tid"].to_numpy()[rows].tolist()
    for i in range(len(rows)):
        scope = scopes[i] if scopes[i] in ("t", "p", "g") else "t"
        yield (
            f'{{"ph":"i","name":{names[i]},"cat":{cats[i]},"pid":{pid[i]},"tid":{tid[i]},'
            f'"ts":{ts[i]},"s":"{scope}"}}'
        )


def _counter_lines(tl: Timeline, t0: int, t1: int) -> Iterator[str]:
    """Counter samples: series `event.key` goes back as event `event` with arg `key`."""
    cnt = tl.counters
    ts_all = cnt["ts"].to_numpy(dtype=I64)
    rows = np.flatnonzero((ts_all >= t0) & (ts_all <= t1))
    ts = _us(ts_all[rows])
    pid = cnt["pid"].to_numpy()[rows].tolist()
    series = cnt["name"].astype(str).to_numpy()[rows]
    values = cnt["value"].to_numpy(dtype=np.float64)[rows].tolist()
    for i in range(len(rows)):
        event, _, key = str(series[i]).rpartition(".")
        if not event:
            event, key = key, "value"
        value = values[i] if np.isfinite(values[i]) else 0.0
        yield (
            f'{{"ph":"C","name":{json.dumps(event)},"pid":{pid[i]},"ts":{ts[i]},'
            f'"args":{{{json.dumps(key)}:{value!r}}}}}'
        )


def _flow_lines(tl: Timeline, kept: np.ndarray) -> Iterator[str]:
    """Flow arrows whose start and end slices are both kept (s at the start, f at the end)."""
    fl = tl.flows
    src, dst = fl["src_event"].to_numpy(dtype=I64), fl["dst_event"].to_numpy(dtype=I64)
    keep = np.zeros(len(tl.events), dtype=bool)
    keep[kept] = True
    ok = (src >= 0) & (dst >= 0)
    ok[ok] &= keep[src[ok]] & keep[dst[ok]]
    rows = np.flatnonzero(ok)
    ev = tl.events
    pid, tid = ev["pid"].to_numpy(), ev["tid"].to_numpy()
    names, cats = _encoded(fl["name"], rows), _encoded(fl["cat"], rows)
    ids = fl["flow_id"].to_numpy()[rows].tolist()
    src_ts, dst_ts = _us(fl["src_ts"].to_numpy()[rows]), _us(fl["dst_ts"].to_numpy()[rows])
    for i, row in enumerate(rows.tolist()):
        s, d = int(src[row]), int(dst[row])
        common = f'"name":{names[i]},"cat":{cats[i]},"id":{ids[i]}'
        yield f'{{"ph":"s",{common},"pid":{pid[s]},"tid":{tid[s]},"ts":{src_ts[i]}}}'
        yield f'{{"ph":"f","bp":"e",{common},"pid":{pid[d]},"tid":{tid[d]},"ts":{dst_ts[i]}}}'


def write_range(timeline: Timeline, path: str | Path, t0: int, t1: int, source: str = "") -> int:
    """Write the part of `timeline` in [t0, t1] ns to `path` (atomically); returns the number
    of slices written."""
    lo, hi = (int(t0), int(t1)) if t0 <= t1 else (int(t1), int(t0))
    rows = overlapping(timeline, lo, hi)
    other: dict[str, Any] = {"exported_by": "perfview", "range_ns": [lo, hi]}
    if source:
        other["source"] = source
    head = {
        "displayTimeUnit": "ns",
        "baseTimeNanoseconds": int(timeline.origin_ns),
        "otherData": other,
    }
    for key in ("deviceProperties", "distributedInfo", "schemaVersion"):
        if key in timeline.meta:
            head[key] = timeline.meta[key]
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(head, ensure_ascii=False)[:-1] + ',"traceEvents":[\n')
        first = True
        for parts in (
            _meta_lines(timeline, rows),
            _slice_lines(timeline, rows),
            _instant_lines(timeline, lo, hi),
            _counter_lines(timeline, lo, hi),
            _flow_lines(timeline, rows),
        ):
            for line in parts:
                fh.write(line if first else ",\n" + line)
                first = False
        fh.write("\n]}\n")
    return len(rows)


__all__ = ["overlapping", "write_range"]
