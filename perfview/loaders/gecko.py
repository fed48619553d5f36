"""Firefox Profiler profiles (Gecko JSON): threads of sampled stacks, in both shapes it writes.

Written by Firefox itself, `samply`, and Python 3.15's built-in sampling profiler
(`python -m profiling.sampling run --gecko`). Two shapes share one model:

- the *raw Gecko* format (Firefox's own dump): per thread, `samples`, `stackTable` and
  `frameTable` as `{"schema": {column: index}, "data": [[...], ...]}` rows, a per-thread
  `stringTable`, each frame a location string such as `name (file:line)`; child processes
  under `processes` (sometimes as JSON text);
- the *processed* format (what the Firefox Profiler saves, and what CPython writes): per
  thread, columnar tables `{"column": [...]}` with a `funcTable` (name, fileName, lineNumber),
  strings in the thread's `stringArray`/`stringTable` or the profile's `shared.stringArray`.

Either way a thread's stack table *is* a tree (each stack's `prefix` is an earlier stack),
so the stacks become the merge's items directly: a stack's weight is its samples', a
subtree's total is summed level by level, and `sampled.build_tree` folds the threads (as
roots) into one tree. Nothing walks a stack per sample: the work is linear in the tables.
Markers become a Timeline (`gecko_markers`): intervals as slices, instants as instants, a
track per thread. Weights: sample counts, or milliseconds where the profile
says its samples carry `tracing-ms` weights.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
import pandas as pd

from perfview.core.analysis.sampled import Items, build_tree, frames_table
from perfview.core.model import Bundle, SampledProfile
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN, read_json, strip_bom
from perfview.loaders.gecko_markers import Markers

NAME: Final = "gecko"
DESCRIPTION = "a Firefox Profiler (Gecko) profile"
EXTENSIONS = (".gecko.json", ".gecko")
FORMAT: Final = "sampled"
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_NOT = "it is not a Firefox Profiler profile"
_LOCATION = re.compile(r"^(?P<name>.*\S) \((?P<file>[^()]*?)(?::(?P<line>\d+))?(?::\d+)?\)$")
_MAX_THREADS = 10_000


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object with a `meta` object that has an `interval`, and `threads` (or a
    thread's tables) in the head: Chrome traces and speedscope files have neither."""
    text = strip_bom(head).lstrip()
    if not text.startswith(b"{"):
        return False
    return (
        b'"meta"' in text
        and b'"interval"' in text
        and (b'"threads"' in text or b'"stackTable"' in text)
    )


def refuse(head: bytes, path: Path) -> str | None:
    return None


def _table(raw: Any, what: str) -> dict[str, list[Any]]:
    """A table as columns: the processed shape as it is, the raw `schema`/`data` shape
    turned around. Anything else is a LoadError naming `what`."""
    if not isinstance(raw, dict):
        raise LoadError(f"{_NOT}: its {what} is not a table")
    schema, data = raw.get("schema"), raw.get("data")
    if isinstance(schema, dict) and isinstance(data, list):
        columns: dict[str, list[Any]] = {}
        for name, index in schema.items():
            if not isinstance(index, int) or index < 0:
                raise LoadError(f"{_NOT}: its {what} has a bad schema")
            columns[str(name)] = [
                row[index] if isinstance(row, list) and index < len(row) else None for row in data
            ]
        columns["length"] = [len(data)]
        return columns
    return {k: v for k, v in raw.items() if isinstance(v, list)} | {"length": [raw.get("length")]}


def _ints(values: list[Any] | None, n: int, what: str, *, limit: int) -> np.ndarray:
    """`n` indexes below `limit` (-1 for none): a bad reference is a LoadError, never a
    wrong tree."""
    if values is None:
        return np.full(n, -1, dtype=np.int64)
    if len(values) < n:
        raise LoadError(f"{_NOT}: its {what} column is shorter than its table")
    past = max(limit, 0)  # a number no table reaches: an index out of any range
    out = np.fromiter(
        (
            (v if -1 <= v < past else past)
            if isinstance(v, int) and not isinstance(v, bool)
            else -1
            for v in values[:n]
        ),
        dtype=np.int64,
        count=n,
    )
    if n and (out.max(initial=-1) >= limit or out.min(initial=0) < -1):
        raise LoadError(f"{_NOT}: its {what} refers past the end of its table")
    return out


def _length(table: dict[str, list[Any]], column: str) -> int:
    """The table's row count: its stated `length`, never more than its `column` holds (work
    is bounded by the file, not by a number in it)."""
    held = len(table.get(column, []))
    stated = table.get("length", [None])[0]
    if not isinstance(stated, int) or isinstance(stated, bool) or stated < 0:
        return held
    if stated > held:
        raise LoadError(f"{_NOT}: its {column} column is shorter than its table")
    return stated


def _depths(prefix: np.ndarray) -> np.ndarray:
    """Each stack's depth from its prefix chain, by pointer doubling (log depth passes)."""
    depth = (prefix >= 0).astype(np.int64)
    up = prefix.copy()
    while (up >= 0).any():
        has = up >= 0
        safe = np.where(has, up, 0)
        depth = depth + np.where(has, depth[safe], 0)
        up = np.where(has, up[safe], -1)
    return depth


def _subtree_sums(
    prefix: np.ndarray, weight: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each stack's weight and sample count including its descendants'. Every prefix is an
    earlier stack, so one pass from the last stack to the first adds each into its parent:
    linear in the table whatever its depth (a 200,000-deep chain included)."""
    parents, total, calls = prefix.tolist(), weight.tolist(), count.tolist()
    for i in range(len(parents) - 1, 0, -1):
        parent = parents[i]
        if parent >= 0:
            total[parent] += total[i]
            calls[parent] += calls[i]
    return np.asarray(total, dtype=np.float64), np.asarray(calls, dtype=np.float64)


class _Strings:
    """A profile's string table and the frames interned from it (name, file, line)."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str, int], int] = {}

    def key(self, name: str, file: str, line: int) -> int:
        return self.index.setdefault((name, file, line), len(self.index))

    def frames(self) -> pd.DataFrame:
        rows = list(self.index)
        return frames_table([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def _line(value: Any) -> int:
    """A line number, or -1 for none (or for anything no source file has)."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31
    return int(value) if ok else -1


def _text(strings: list[Any], i: int) -> str:
    if 0 <= i < len(strings):
        value = strings[i]
        return value if isinstance(value, str) else str(value)
    return ""


def _frame_keys(thread: dict[str, Any], strings: list[Any], interned: _Strings) -> np.ndarray:
    """Each frame of the thread's frame table as an interned (name, file, line) key."""
    frames = _table(thread.get("frameTable"), "frame table")
    n = _length(frames, "func" if "func" in frames else "location")
    if "func" in frames:  # processed: frame → function (name, file, line)
        funcs = _table(thread.get("funcTable"), "function table")
        n_funcs = _length(funcs, "name")
        func = _ints(frames.get("func"), n, "frame table's func", limit=n_funcs)
        names = _ints(funcs.get("name"), n_funcs, "function name", limit=len(strings))
        files = _ints(funcs.get("fileName"), n_funcs, "function file", limit=len(strings))
        lines = funcs.get("lineNumber") or []
        lines = lines + [None] * (n_funcs - len(lines))
        keys = [
            interned.key(
                _text(strings, int(names[f])),
                _text(strings, int(files[f])),
                _line(lines[f]),
            )
            if f >= 0
            else interned.key("(unknown)", "", -1)
            for f in func.tolist()
        ]
        return np.asarray(keys, dtype=np.int64)
    location = _ints(frames.get("location"), n, "frame location", limit=len(strings))
    keys = []
    for i in location.tolist():
        text = _text(strings, i)
        m = _LOCATION.match(text)
        if m is None:
            keys.append(interned.key(text, "", -1))
        else:
            line = m.group("line")
            number = int(line) if line and len(line) < 18 else -1
            keys.append(interned.key(m.group("name"), m.group("file"), number))
    return np.asarray(keys, dtype=np.int64)


def _thread_items(
    thread: dict[str, Any], strings: list[Any], interned: _Strings
) -> tuple[Items, tuple[float, float], int, str]:
    """The thread's stack table as merge items weighted by its samples; the (weight, count)
    of its samples that have no stack, its sample count and its weight unit."""
    frame_key = _frame_keys(thread, strings, interned)
    stacks = _table(thread.get("stackTable"), "stack table")
    n_stacks = _length(stacks, "frame")
    prefix = _ints(stacks.get("prefix"), n_stacks, "stack prefix", limit=n_stacks)
    if n_stacks and (prefix >= np.arange(n_stacks)).any():
        raise LoadError(f"{_NOT}: a stack's prefix is not an earlier stack")
    frame = _ints(stacks.get("frame"), n_stacks, "stack frame", limit=len(frame_key))
    samples = _table(thread.get("samples"), "samples")
    n_samples = _length(samples, "stack")
    stack = _ints(samples.get("stack"), n_samples, "sample stack", limit=n_stacks)
    raw_samples = thread.get("samples")
    weight_type = raw_samples.get("weightType") if isinstance(raw_samples, dict) else None
    weights = _weights(samples.get("weight"), n_samples)
    unit, scale = ("ns", 1e6) if weight_type == "tracing-ms" else ("samples", 1.0)
    used = stack >= 0
    self_w = np.bincount(stack[used], weights=weights[used] * scale, minlength=n_stacks)
    self_n = np.bincount(stack[used], minlength=n_stacks).astype(np.float64)
    depth = _depths(prefix)
    total, calls = _subtree_sums(prefix, self_w, self_n)
    keep = (calls > 0) & (frame >= 0)
    keep &= np.where(prefix >= 0, keep[np.maximum(prefix, 0)], True)  # an unkept parent
    new_index = np.cumsum(keep) - 1
    up = np.where(prefix[keep] >= 0, new_index[np.maximum(prefix[keep], 0)], -1)
    items = Items(
        up.astype(np.int64),
        depth[keep],
        frame_key[np.maximum(frame[keep], 0)],
        total[keep],
        self_w[keep],
        calls[keep],
    )
    loose = (float((weights[~used] * scale).sum()), float((~used).sum()))
    return items, loose, n_samples, unit


def _weights(raw: list[Any] | None, n: int) -> np.ndarray:
    """Each sample's weight: the profile's `weight` column, else 1 (a sample counts once)."""
    if not isinstance(raw, list) or len(raw) < n:
        return np.ones(n, dtype=np.float64)
    values = [
        w if isinstance(w, (int, float)) and not isinstance(w, bool) else 0.0 for w in raw[:n]
    ]
    out = np.asarray(values, dtype=np.float64)
    if not np.isfinite(out).all() or (out < 0).any():
        raise LoadError(f"{_NOT}: a sample's weight is not a finite count")
    return out


def _threads(doc: dict[str, Any]) -> list[tuple[dict[str, Any], list[Any], float, int]]:
    """Every thread of the profile and of its child processes, each with its strings, the
    milliseconds its process's zero lies after the profile's (raw child processes count from
    their own `meta.startTime`) and its process's number."""
    shared = doc.get("shared")
    shared_strings = shared.get("stringArray") if isinstance(shared, dict) else None
    out: list[tuple[dict[str, Any], list[Any], float, int]] = []
    root = _start_time(doc)
    pending: list[Any] = [doc]
    process = -1
    while pending and len(out) <= _MAX_THREADS:
        profile = pending.pop(0)
        if isinstance(profile, str):  # old raw profiles nest child processes as JSON text
            try:
                profile = msgspec.json.decode(profile.encode("utf-8", "surrogatepass"))
            except (msgspec.DecodeError, UnicodeError, RecursionError):
                continue
        if not isinstance(profile, dict):
            continue
        process += 1
        start = _start_time(profile)
        offset = start - root if start is not None and root is not None else 0.0
        for thread in _list(profile.get("threads")):
            if isinstance(thread, str):
                pending.append({"threads": [], "processes": [thread]})
                continue
            if not isinstance(thread, dict):
                continue
            strings = thread.get("stringArray", thread.get("stringTable", shared_strings))
            out.append((thread, strings if isinstance(strings, list) else [], offset, process))
        pending.extend(p for p in _list(profile.get("processes")) if isinstance(p, (dict, str)))
    if len(out) > _MAX_THREADS:
        raise LoadError(f"{_NOT}: it has more than {_MAX_THREADS} threads")
    return out


def _start_time(profile: dict[str, Any]) -> float | None:
    meta = profile.get("meta")
    start = meta.get("startTime") if isinstance(meta, dict) else None
    if isinstance(start, (int, float)) and not isinstance(start, bool) and abs(start) < 1e15:
        return float(start)
    return None


def _unique(name: str, rows: list[tuple[int, str, int, float]]) -> str:
    """`name`, numbered when an earlier thread has it (two processes' main threads): each
    thread keeps a root of its own in the tree."""
    taken = {row[1] for row in rows}
    number = 2
    unique = name
    while unique in taken:
        unique, number = f"{name} #{number}", number + 1
    return unique


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _thread_name(thread: dict[str, Any]) -> str:
    name = str(thread.get("name") or "thread")
    ids = [f"{k} {thread[k]}" for k in ("pid", "tid") if thread.get(k) not in (None, "")]
    return f"{name} ({', '.join(ids)})" if ids else name


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Every thread's samples merged into one tree, each thread under its own root."""
    path = Path(path)
    progress(0.0, "reading the Firefox Profiler profile")
    doc = read_json(path, _NOT)
    if not isinstance(doc, dict) or not isinstance(doc.get("meta"), dict):
        raise LoadError(f"{_NOT}: it has no meta object")
    threads = _threads(doc)
    interned = _Strings()
    parts: list[Items] = []
    loose: list[tuple[float, float]] = []
    rows: list[tuple[int, str, int, float]] = []
    units: set[str] = set()
    markers = 0
    marks = Markers()
    for i, (thread, strings, offset, process) in enumerate(threads):
        progress(0.1 + 0.8 * i / max(len(threads), 1), f"thread {i + 1} of {len(threads)}")
        items, stackless, n_samples, unit = _thread_items(thread, strings, interned)
        marker_table = thread.get("markers")
        if isinstance(marker_table, dict):
            columns = _table(marker_table, "markers")
            n_markers = _length(columns, "name")
            markers += n_markers
            label = _thread_name(thread)
            marks.add(columns, n_markers, strings, offset, (process, label, label))
        if n_samples == 0:
            continue
        units.add(unit)
        parts.append(items)
        loose.append(stackless)
        weight = float(items.total[items.level == 0].sum()) + stackless[0]
        rows.append((len(rows), _unique(_thread_name(thread), rows), n_samples, weight))
    if not parts:
        raise EmptyProfile("the Firefox Profiler profile holds no samples")
    if len(units) > 1:
        raise LoadError(f"{_NOT} perfview can merge: its threads weigh samples in several units")
    thread_keys = [interned.key(name, "", -1) for _i, name, _n, _w in rows]
    tree = build_tree(parts, interned.frames(), thread_keys, loose)
    table = pd.DataFrame(rows, columns=["thread", "name", "samples", "weight"])
    total = float(table["weight"].sum())
    progress(1.0, "done")
    timeline = marks.timeline()
    return Bundle(
        format=FORMAT,
        path=path,
        tree=tree,
        timeline=timeline,
        sampled=SampledProfile(unit=units.pop(), threads=table, source=NAME),
        counts={
            "samples": int(table["samples"].sum()),
            "threads": len(table),
            "frames": len(interned.index) - len(rows),
            "markers": markers,
            "weight": int(total) if total.is_integer() else round(total),
        },
    )
