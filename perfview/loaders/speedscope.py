"""speedscope JSON (https://www.speedscope.app/file-format-schema.json): py-spy, pyinstrument,
austin2speedscope and many non-Python profilers write it.

A file holds shared frames and one or more profiles (usually one per thread): `sampled`
profiles list stacks of frame indices (root first) with weights, `evented` ones list open/close
events. Every profile becomes one thread root of the merged tree (a single profile needs no
root); profiles whose unit differs from the first non-empty one (a heap profile next to a CPU
profile) are left out of the tree with a warning, since bytes and seconds do not add up.
Evented profiles also become a Timeline, one lane per profile, so the Timeline page shows them.
"""

from __future__ import annotations

import re
from itertools import chain
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
import pandas as pd

from perfview.core.analysis.sampled import (
    UNITS,
    Items,
    build_tree,
    frames_table,
    span_items,
    stack_items,
)
from perfview.core.model import Bundle, SampledProfile, Timeline, schema
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN, read_content, strip_bom
from perfview.loaders.speedscope_fast import decode, plain, stack_codes

NAME: Final = "speedscope"
DESCRIPTION = "a speedscope profile"
EXTENSIONS = (".speedscope.json", ".speedscope")
FORMAT: Final = "sampled"
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_SCHEMA = re.compile(rb'"\$schema"\s*:\s*"[^"]*speedscope')
_PROFILES = re.compile(rb'"profiles"\s*:\s*\[')
_TYPE = re.compile(rb'"type"\s*:\s*"(sampled|evented)"')
_SHARED = re.compile(rb'"shared"\s*:\s*\{')


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object naming speedscope's schema, or with `profiles` of a speedscope type."""
    text = strip_bom(head).lstrip()
    if not text.startswith(b"{"):
        return False
    if _SCHEMA.search(text[:4096]):
        return True
    return bool(_PROFILES.search(text) and (_SHARED.search(text) or _TYPE.search(text)))


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _read(path: Path) -> Any:
    raw = read_content(path)
    try:
        return decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise LoadError(f"it is a speedscope file that is not valid JSON ({exc})") from exc


def _frames(doc: dict[str, Any]) -> pd.DataFrame:
    shared = doc.get("shared")
    raw = shared.get("frames") if isinstance(shared, dict) else None
    if not isinstance(raw, list):
        raise LoadError("it is a speedscope file without a shared frames list")
    names, files, lines = [], [], []
    for f in raw:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            raise LoadError("it is a speedscope file with a frame that has no name")
        line = f.get("line")
        names.append(f["name"])
        files.append(f["file"] if isinstance(f.get("file"), str) else "")
        lines.append(line if type(line) is int and -(2**62) < line < 2**62 else -1)
    return frames_table(names, files, lines)


def _number(value: Any, what: str) -> float:
    if type(value) not in (int, float) or not abs(value) <= 1e300:  # NaN fails too
        raise LoadError(f"it is a speedscope file with a {what} that is not a finite number")
    return float(value)


def _sampled(
    prof: dict[str, Any], n_frames: int, scale: float
) -> tuple[Items, tuple[float, float], int]:
    """Items of a sampled profile, (weight, count) of frame-less samples, its sample count."""
    flat, lengths, inv = _stack_index(prof.get("samples"), n_frames)
    weights = plain(prof.get("weights"))
    if not isinstance(weights, list):
        raise LoadError("it is a speedscope sampled profile without samples and weights")
    if len(inv) != len(weights):
        raise LoadError("it is a speedscope profile with more samples than weights, or fewer")
    try:
        w = np.asarray(weights, dtype=np.float64) * scale
    except (TypeError, ValueError) as exc:
        raise LoadError("it is a speedscope profile with a weight that is not a number") from exc
    if w.shape != (len(inv),):  # a list for a weight: [[1, 2], [3, 4]] is four numbers
        raise LoadError("it is a speedscope profile with a weight that is not a number")
    if not np.isfinite(w).all():
        raise LoadError("it is a speedscope profile with a weight that is not a finite number")
    weight = np.bincount(inv, weights=w, minlength=len(lengths))
    counts = np.bincount(inv, minlength=len(lengths)).astype(np.float64)
    empty = lengths == 0
    loose = (float(weight[empty].sum()), float(counts[empty].sum()))
    return stack_items(flat, lengths, weight, counts), loose, len(inv)


def _stack_index(samples: Any, n_frames: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Frames of the distinct stacks (concatenated), their lengths, and each sample's stack.

    The raw samples text is scanned with numpy when it has the usual shape; otherwise it is
    decoded and grouped with a dict.
    """
    fast = stack_codes(samples) if isinstance(samples, msgspec.Raw) else None
    if fast is not None:
        flat, lengths, inv = fast
    else:
        samples = plain(samples)
        if not isinstance(samples, list):
            raise LoadError("it is a speedscope sampled profile without samples and weights")
        index: dict[tuple[int, ...], int] = {}
        try:  # a bare frame index is a one-frame stack (some writers drop the brackets)
            inv = np.fromiter(
                (
                    index.setdefault((s,) if type(s) is int else tuple(s), len(index))
                    for s in samples
                ),
                np.int64,
                len(samples),
            )
        except (TypeError, ValueError) as exc:
            raise LoadError("it is a speedscope profile whose samples are not lists") from exc
        stacks = list(index)
        if not all(type(k) is int for s in stacks for k in s):
            raise LoadError("it is a speedscope profile whose samples name frames it does not have")
        lengths = np.fromiter(map(len, stacks), np.int64, len(stacks))
        try:
            flat = np.fromiter(chain.from_iterable(stacks), np.int64, int(lengths.sum()))
        except OverflowError:
            flat = np.array([-1], dtype=np.int64)
    if len(flat) and not (flat.min() >= 0 and flat.max() < n_frames):
        raise LoadError("it is a speedscope profile whose samples name frames it does not have")
    return flat, lengths, inv


def _evented(
    prof: dict[str, Any], n_frames: int, scale: float
) -> tuple[Items, np.ndarray, np.ndarray, int]:
    """Items of an evented profile, each span's (start, duration) and the opened-frame count."""
    events = plain(prof.get("events"))
    if not isinstance(events, list):
        raise LoadError("it is a speedscope evented profile without events")
    end_value = _number(prof.get("endValue", 0), "endValue")
    stack: list[int] = []
    key: list[int] = []
    parent: list[int] = []
    depth: list[int] = []
    start: list[float] = []
    dur: list[float] = []
    opened = 0
    for ev in events:
        if not isinstance(ev, dict):
            raise LoadError(
                "it is a speedscope evented profile with an event that is not an object"
            )
        kind, at, frame = ev.get("type"), _number(ev.get("at"), "event time"), ev.get("frame")
        if type(frame) is not int or not 0 <= frame < n_frames:
            raise LoadError("it is a speedscope profile whose events name frames it does not have")
        if kind == "O":
            parent.append(stack[-1] if stack else -1)
            depth.append(len(stack))
            stack.append(len(key))
            key.append(frame)
            start.append(at)
            dur.append(0.0)
            opened += 1
        elif kind == "C":
            if not stack or key[stack[-1]] != frame:
                raise LoadError(
                    "it is a speedscope evented profile that closes a frame it never opened"
                )
            node = stack.pop()
            dur[node] = at - start[node]
        else:
            raise LoadError(
                f"it is a speedscope evented profile with an unknown event type {kind!r}"
            )
    for node in stack:  # still open at the end: close them at endValue
        dur[node] = max(end_value - start[node], 0.0)
    dur_a = np.maximum(np.asarray(dur, dtype=np.float64) * scale, 0.0)
    start_a = np.asarray(start, dtype=np.float64) * scale
    items = span_items(np.asarray(parent), np.asarray(depth), np.asarray(key), dur_a)
    return items, start_a, dur_a, opened


def _profiles(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        raise LoadError("it is a speedscope file that is not a JSON object")
    profiles = doc.get("profiles")
    if not isinstance(profiles, list) or not all(isinstance(p, dict) for p in profiles):
        raise LoadError("it is a speedscope file without a list of profiles")
    return profiles


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Read every profile of a speedscope file into one merged tree (threads as roots)."""
    path = Path(path)
    progress(0.0, "reading speedscope JSON")
    doc = _read(path)
    profiles = _profiles(doc)
    frames = _frames(doc)
    n = len(frames)
    progress(0.5, "merging stacks")
    parts: list[Items] = []
    loose: list[tuple[float, float]] = []
    rows: list[tuple[int, str, str, int, float]] = []
    spans: list[tuple[int, np.ndarray, np.ndarray, Items]] = []
    warnings: list[str] = []
    tree_unit: str | None = None
    units: list[str] = []
    n_samples = 0
    duration = 0.0
    for i, prof in enumerate(profiles):
        unit_name = prof.get("unit", "none")
        if unit_name not in UNITS:
            raise LoadError(f"it is a speedscope profile with an unknown unit {unit_name!r}")
        unit, scale = UNITS[unit_name]
        units.append(unit)
        kind = prof.get("type")
        name = prof.get("name") if isinstance(prof.get("name"), str) else f"profile {i}"
        if kind == "sampled":
            items, lost, count = _sampled(prof, n, scale)
            weight = float(items.total[items.level == 0].sum()) + lost[0]
        elif kind == "evented":
            items, start, dur, count = _evented(prof, n, scale)
            lost, weight = (0.0, 0.0), float(items.total[items.level == 0].sum())
            spans.append((i, start, dur, items))
        else:
            raise LoadError(f"it is a speedscope file with an unknown profile type {kind!r}")
        n_samples += count
        rows.append((i, str(name), unit_name, count, weight))
        if unit == "ns":
            span = _number(prof.get("endValue", 0), "endValue") - _number(
                prof.get("startValue", 0), "startValue"
            )
            duration = max(duration, span * scale)
        if tree_unit is None and count:
            tree_unit = unit
        if count and unit != tree_unit:
            warnings.append(f"profile {name!r} is in {unit_name} and is not merged with the others")
            continue
        if count:
            parts.append(items)
            loose.append(lost)
    tree_unit = tree_unit or "samples"
    thread_keys = None
    if len(parts) > 1:
        merged = [r for r, u in zip(rows, units, strict=True) if r[3] and u == tree_unit]
        thread_frames = frames_table([r[1] for r in merged], [""] * len(merged), [-1] * len(merged))
        frames = pd.concat([frames, thread_frames], ignore_index=True)
        thread_keys = list(range(n, n + len(merged)))
    tree = build_tree(parts, frames, thread_keys, loose if thread_keys else None)
    threads = pd.DataFrame(rows, columns=["thread", "name", "unit", "samples", "weight"])
    progress(1.0, "done")
    return Bundle(
        format=FORMAT,
        path=path,
        tree=tree,
        timeline=_timeline(spans, profiles, frames) if spans else None,
        sampled=SampledProfile(unit=tree_unit, threads=threads, source=NAME),
        counts={"samples": n_samples, "threads": len(profiles), "frames": n},
        duration_ns=round(duration) if duration < 9e18 else 0,
        warnings=warnings,
    )


def _timeline(
    spans: list[tuple[int, np.ndarray, np.ndarray, Items]],
    profiles: list[dict[str, Any]],
    frames: pd.DataFrame,
) -> Timeline:
    """Evented profiles as a trace: one lane per profile, spans nested as they were opened."""
    lane_parts, ts, dur, key, depth, parent = [], [], [], [], [], []
    offset = 0
    for lane, (_i, start, d, items) in enumerate(spans):
        lane_parts.append(np.full(len(d), lane, dtype=np.int32))
        ts.append(start)
        dur.append(d)
        key.append(items.key)
        depth.append(items.level)
        parent.append(np.where(items.up >= 0, items.up + offset, -1))
        offset += len(d)
    lane_a = np.concatenate(lane_parts)
    ts_a = np.rint(np.concatenate(ts)).astype(np.int64)
    origin = int(ts_a.min()) if len(ts_a) else 0
    ts_a -= origin
    dur_a = np.rint(np.concatenate(dur)).astype(np.int64)
    order = np.lexsort((-dur_a, ts_a, lane_a))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    par = np.concatenate(parent)[order]
    names = frames["name"].astype(str).to_numpy()[np.concatenate(key)[order]]
    n = len(order)
    events = pd.DataFrame(
        {
            "ts": ts_a[order], "dur": dur_a[order], "name": names, "cat": "speedscope",
            "kind": "python", "pid": 0, "tid": lane_a[order].astype(np.int64),
            "lane": lane_a[order], "depth": np.concatenate(depth)[order].astype(np.int16),
            "parent": np.where(par >= 0, rank[np.maximum(par, 0)], -1),
            "corr": np.full(n, -1), "ext_id": np.full(n, -1), "shape": "",
        }
    )  # fmt: skip
    labels = [str(profiles[i].get("name") or f"profile {i}") for i, *_ in spans]
    lanes = pd.DataFrame(
        {
            "lane": np.arange(len(spans)), "pid": 0, "tid": np.arange(len(spans)), "sub": 0,
            "process": "speedscope", "thread": labels, "label": labels, "device": "cpu",
            "sort_key": np.arange(len(spans)),
            "max_depth": [int(s[3].level.max()) if len(s[3]) else 0 for s in spans],
            "n_events": [len(s[2]) for s in spans],
        }
    )  # fmt: skip
    end = int((ts_a + dur_a).max()) if n else 0
    return Timeline(
        events=schema.coerce(events, schema.EVENTS),
        lanes=schema.coerce(lanes, schema.LANES),
        instants=schema.empty(schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=schema.empty(schema.MEMORY_EVENTS),
        origin_ns=origin,
        duration_ns=end,
        meta={"speedscope": True},
    )
