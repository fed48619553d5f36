"""Chrome Trace Event loader: torch.profiler / kineto traces and any other producer.

Reads the object form ({"traceEvents": [...], ...}) and the bare-array form, plain or gzip,
including unterminated arrays and files cut mid-event (chrome://tracing tolerates both).
The pipeline is: `trace_decode` (bytes, events as raw slices, exact decimals) →
`trace_columns` (typed msgspec batches → numpy columns) → `trace_build` / `trace_tables`
(slices, lanes, nesting, instants, counters, flows, memory) → a `Bundle` here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from perfview.core import schema
from perfview.core.errors import EmptyProfile, LoadError
from perfview.core.model import ArgsStore, Bundle, Timeline
from perfview.core.progress import Progress, noop
from perfview.loaders.base import strip_bom
from perfview.loaders.trace_build import build
from perfview.loaders.trace_columns import Columns, decode_events
from perfview.loaders.trace_decode import parse_decimal, read_bytes, split_events

NAME = "trace"
DESCRIPTION = "a Chrome trace / torch.profiler trace (JSON)"
EXTENSIONS = (".pt.trace.json", ".pt.trace.json.gz", ".json", ".json.gz", ".gz")

META_MAX_BYTES = 64 * 1024  # top-level keys bigger than this (stackFrames, samples) are dropped
TORCH_KEYS = ("deviceProperties", "distributedInfo", "baseTimeNanoseconds", "schemaVersion")
TORCH_CATS = frozenset(
    {
        "cpu_op", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "ac2g",
        "fwdbwd", "python_function", "user_annotation", "gpu_user_annotation",
        "cpu_instant_event", "operator", "runtime", "memcpy", "memset", "async_cpu_to_gpu",
    }
)  # fmt: skip
_EVENT_KEY = re.compile(rb'"(ph|ts|traceEvents)"\s*:')


def sniff(head: bytes, path: Path) -> bool:
    """True when the head looks like trace JSON.

    A leading '{' alone is not enough: a Python 2 pstats dump also starts with '{', so the
    head must be text with an event key ("ph", "ts" or "traceEvents").
    """
    text = strip_bom(head).lstrip()
    if text.startswith(b"["):
        rest = text[1:].lstrip()
        return rest.startswith(b"{") or (not rest and _looks_like_text(head))
    if not text.startswith(b"{"):
        return False
    return _looks_like_text(head[:4096]) and _EVENT_KEY.search(text) is not None


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a multibyte character cut at the end is fine
    return True


def refuse(head: bytes, path: Path) -> str | None:
    """Why a JSON-looking file is not a trace (for the 'unknown format' message), else None."""
    text = strip_bom(head).lstrip()
    if text[:1] in (b"{", b"[") and _looks_like_text(head[:4096]):
        return "it is JSON but not a trace (no traceEvents array and no events with a 'ph' key)"
    return None


def load(path: Path, *, progress: Progress = noop) -> Bundle:
    """Load a Chrome trace file into a Bundle with a Timeline.

    msgspec reports invalid UTF-8 inside a JSON string as UnicodeDecodeError and nesting past
    its depth limit as RecursionError, from any of its decode calls. Both mean the file is not
    a readable JSON trace, so they become LoadError here, once, rather than at each call site
    (found by scripts/fuzz_loaders.py).
    """
    try:
        return _load(Path(path), progress)
    except UnicodeDecodeError as exc:
        raise LoadError(
            "it is not a readable trace: a JSON string in it holds bytes that are not UTF-8 text"
        ) from exc
    except RecursionError as exc:
        raise LoadError("it is not a readable trace: its JSON is nested too deeply") from exc


def _load(path: Path, progress: Progress) -> Bundle:
    progress(0.0, "reading")
    buf, read_warning = read_bytes(path, progress, 0.3)
    split = split_events(buf)
    warnings = [w for w in (read_warning, *split.warnings) if w]
    if not split.events:
        raise EmptyProfile("the trace has no events")
    cols = decode_events(buf, split.events, progress, 0.3, 0.8)
    meta = _meta(split.top)
    # The raw events are views of `buf`: drop both before the args are joined, so the file
    # text and the args copies are never all alive at once (peak memory).
    del split, buf
    blob = b"".join(cols.arg_blobs)
    cols.arg_blobs.clear()
    if cols.n == 0:
        raise EmptyProfile("the trace has no events (the list holds no event objects)")
    progress(0.85, "building the timeline")
    built = build(cols)
    if built.counts["slices"] + built.counts["async"] + len(built.instants) == 0 and (
        len(built.counters) + len(built.memory) == 0
    ):
        raise EmptyProfile("the trace has no slices, instants or counters to show")
    args = _args_store(blob, cols.cat_all("arg_lens").astype(np.int64), built.arg_index)
    base = meta.get("baseTimeNanoseconds")
    base_ns = base if isinstance(base, int) and not isinstance(base, bool) else 0
    meta["torch"] = _is_torch(meta, cols)
    progress(0.95, "checking tables")
    timeline = Timeline(
        events=built.events,
        lanes=built.lanes,
        instants=built.instants,
        counters=built.counters,
        flows=built.flows,
        memory=built.memory,
        args=args,
        origin_ns=base_ns + built.t0_ns,
        duration_ns=built.duration_ns,
        meta=meta,
    )
    _validate(timeline)
    progress(1.0, "done")
    return Bundle(
        format=NAME,
        path=path,
        timeline=timeline,
        counts=built.counts,
        duration_ns=built.duration_ns,
        warnings=warnings + built.warnings,
    )


def _meta(top: dict[str, msgspec.Raw]) -> dict[str, Any]:
    """Small top-level keys decoded (deviceProperties, distributedInfo, displayTimeUnit, …)."""
    meta: dict[str, Any] = {}
    for key, raw in top.items():
        if len(raw) > META_MAX_BYTES:
            continue
        try:
            meta[key] = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        if key == "baseTimeNanoseconds" and not isinstance(meta[key], int):
            values, ok = parse_decimal(bytes(raw), 1, 0)  # exact even when written as a float
            meta[key] = int(values[0]) if ok[0] else 0
    return meta


def _is_torch(meta: dict[str, Any], cols: Columns) -> bool:
    """kineto wrote it: its top-level keys, its categories or its profiler spans."""
    if any(key in meta for key in TORCH_KEYS[:3]):
        return True
    if any(isinstance(c, str) and c.lower() in TORCH_CATS for c in cols.cats.values):
        return True
    return any(
        isinstance(n, str) and (n.startswith("ProfilerStep#") or n.startswith("PyTorch Profiler"))
        for n in cols.names.values
    )


def _args_store(blob: bytes, lens: np.ndarray, index: np.ndarray) -> ArgsStore:
    """Reorder the kept args (file order) into events-table order.

    Consecutive events that were also consecutive in the file form one run, copied as one
    slice, so the cost follows the number of runs rather than the number of bytes or events.
    """
    if len(index) == 0:
        return ArgsStore()
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    out_off = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(lens[index], out=out_off[1:])
    brk = np.ones(len(index), dtype=bool)
    brk[1:] = index[1:] != index[:-1] + 1
    first = np.flatnonzero(brk)
    last = np.append(first[1:], len(index)) - 1
    starts = offsets[index[first]].tolist()
    stops = offsets[index[last] + 1].tolist()
    view = memoryview(blob)
    data = b"".join([view[a:b] for a, b in zip(starts, stops, strict=True)])
    return ArgsStore(blob=data, offsets=out_off)


def _validate(tl: Timeline) -> None:
    try:
        schema.validate(tl.events, schema.EVENTS, "events")
        schema.validate(tl.lanes, schema.LANES, "lanes")
        schema.validate(tl.instants, schema.INSTANTS, "instants")
        schema.validate(tl.counters, schema.COUNTERS, "counters")
        schema.validate(tl.flows, schema.FLOWS, "flows")
        schema.validate(tl.memory, schema.MEMORY_EVENTS, "memory")
    except ValueError as exc:  # pragma: no cover - a bug, not a user error
        raise LoadError(f"the trace could not be converted ({exc})") from exc


__all__ = ["DESCRIPTION", "EXTENSIONS", "NAME", "load", "refuse", "sniff"]
