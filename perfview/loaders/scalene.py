"""Scalene's JSON profiles (`scalene run -o profile.json`, older `scalene --json --outfile`).

Scalene samples CPU time (split into Python, native and system), GPU time and memory
(average and peak footprint, volume allocated, copy volume) and attributes each to a source
line; its JSON holds, per profiled file, every line's numbers (`lines`) and per-function sums
(`functions`). Each file becomes one block of a `LineReport`, so the Lines page shows it as
annotated source with Scalene's columns (`COLUMNS`) instead of memory_profiler's.

The schema moved across releases (1.x wrote `n_growth_mb` as growth, 2.x writes it equal to
the peak; 2.x sorts its keys, so `files` comes late, after the stacks): the sniff looks for any
of Scalene's own top-level or per-line keys, and a number a release did not write is NaN.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from perfview.core.model import Bundle, LineColumn, LineReport, schema
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN, read_json, strip_bom

NAME: Final = "scalene"
DESCRIPTION = "a Scalene profile"
EXTENSIONS = (".json",)
FORMAT: Final = "scalene"
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_NOT = "it is not a Scalene profile"
_MIB = float(2**20)
# Keys only Scalene writes: top-level ones, then per-line ones (a head cut inside `files`)
_KEYS = re.compile(
    rb'"(?:alloc_samples|elapsed_time_sec|max_footprint_mb|max_footprint_fname|'
    rb'n_cpu_percent_python|n_copy_mb_s)"\s*:'
)
_TRACE = re.compile(rb'"(?:traceEvents|ph)"\s*:')
# schema.SCALENE_LINES column ← (Scalene's key, factor)
_FIELDS: dict[str, tuple[str, float]] = {
    "cpu_python_pct": ("n_cpu_percent_python", 1.0),
    "cpu_native_pct": ("n_cpu_percent_c", 1.0),
    "cpu_system_pct": ("n_sys_percent", 1.0),
    "gpu_pct": ("n_gpu_percent", 1.0),
    "gpu_peak_bytes": ("n_gpu_peak_memory_mb", _MIB),
    "mem_avg_bytes": ("n_avg_mb", _MIB),
    "mem_peak_bytes": ("n_peak_mb", _MIB),
    "mem_growth_bytes": ("n_growth_mb", _MIB),
    "alloc_bytes": ("n_malloc_mb", _MIB),
    "alloc_pct": ("n_usage_fraction", 100.0),
    "python_alloc_pct": ("n_python_fraction", 100.0),
    "mallocs": ("n_mallocs", 1.0),
    "copy_bytes_per_s": ("n_copy_mb_s", _MIB),
}
# What the source view shows per line, in Scalene's own order
COLUMNS = (
    LineColumn("Python", "cpu_python_pct", "pct"),
    LineColumn("native", "cpu_native_pct", "pct"),
    LineColumn("system", "cpu_system_pct", "pct"),
    LineColumn("GPU", "gpu_pct", "pct"),
    LineColumn("Mem avg", "mem_avg_bytes", "bytes"),
    LineColumn("Mem peak", "mem_peak_bytes", "bytes"),
    LineColumn("Allocated", "alloc_bytes", "bytes"),
    LineColumn("Alloc share", "alloc_pct", "pct"),
    LineColumn("Copy/s", "copy_bytes_per_s", "rate"),
)


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object with one of Scalene's own keys in the head, and no trace's keys."""
    text = strip_bom(head).lstrip()
    return text.startswith(b"{") and bool(_KEYS.search(text)) and not _TRACE.search(text[:4096])


def refuse(head: bytes, path: Path) -> str | None:
    return None


def _number(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return float("nan")


def _line_rows(
    file: str, entries: list[Any], block: int
) -> tuple[list[int], list[str], list[list[float]]]:
    """A file's lines (number, text, Scalene's numbers), each line once, in source order."""
    seen: dict[int, tuple[str, list[float]]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise LoadError(f"{_NOT}: a line of {file} is not an object")
        number = entry.get("lineno")
        if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number < 2**31:
            raise LoadError(f"{_NOT}: a line of {file} has no line number")
        text = entry.get("line")
        values = [_number(entry.get(key)) * factor for key, factor in _FIELDS.values()]
        seen[number] = (str(text).rstrip("\r\n") if text is not None else "", values)
    order = sorted(seen)
    return order, [seen[n][0] for n in order], [seen[n][1] for n in order]


def _functions(file: str, entries: list[Any]) -> list[tuple[Any, ...]]:
    rows = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise LoadError(f"{_NOT}: a function of {file} is not an object")
        number = entry.get("lineno")
        line = number if isinstance(number, int) and not isinstance(number, bool) else -1
        values = [_number(entry.get(key)) * factor for key, factor in _FIELDS.values()]
        rows.append((file, str(entry.get("line", "")), max(min(line, 2**31), -1), *values))
    return rows


def _columns(values: list[list[float]]) -> dict[str, np.ndarray]:
    array = np.asarray(values, dtype=np.float64).reshape(-1, len(_FIELDS))
    out = {name: array[:, i] for i, name in enumerate(_FIELDS)}
    cpu = np.nan_to_num(array[:, :3])
    out["cpu_total_pct"] = cpu.sum(axis=1)
    return {name: out[name] for name in schema.SCALENE_LINES}


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Every profiled file's lines as a block of a `LineReport`, with Scalene's functions."""
    path = Path(path)
    progress(0.0, "reading the Scalene profile")
    doc = read_json(path, _NOT)
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        raise LoadError(f"{_NOT}: it has no files object")
    blocks: list[tuple[str, list[int], list[str], list[list[float]]]] = []
    functions: list[tuple[Any, ...]] = []
    for file, data in doc["files"].items():
        if not isinstance(data, dict):
            raise LoadError(f"{_NOT}: the entry of {file} is not an object")
        lines = data.get("lines")
        numbers, texts, values = _line_rows(str(file), lines if isinstance(lines, list) else [], 0)
        if numbers:
            blocks.append((str(file), numbers, texts, values))
        listed = data.get("functions")
        functions += _functions(str(file), listed if isinstance(listed, list) else [])
    if not blocks:
        raise EmptyProfile("the Scalene profile holds no profiled lines")
    progress(0.7, "building tables")
    report = _report(blocks, functions)
    elapsed = _number(doc.get("elapsed_time_sec"))
    peak = _number(doc.get("max_footprint_mb"))
    progress(1.0, "done")
    return Bundle(
        format=FORMAT,
        path=path,
        lines=report,
        counts={
            "files": len(blocks),
            "lines": len(report.lines),
            "functions": len(functions),
            "peak_bytes": int(peak * _MIB) if np.isfinite(peak) and 0 <= peak < 2**42 else 0,
        },
        duration_ns=int(elapsed * 1e9) if np.isfinite(elapsed) and 0 <= elapsed < 9e9 else 0,
    )


def _report(
    blocks: list[tuple[str, list[int], list[str], list[list[float]]]],
    functions: list[tuple[Any, ...]],
) -> LineReport:
    sizes = np.asarray([len(b[1]) for b in blocks], dtype=np.int64)
    n = int(sizes.sum())
    nan = np.full(n, np.nan)
    lines = pd.DataFrame(
        {
            "report": np.zeros(n, dtype=np.int32),
            "block": np.repeat(np.arange(len(blocks)), sizes).astype(np.int32),
            "file": pd.Series(np.repeat([b[0] for b in blocks], sizes), dtype=object),
            "line": np.asarray([x for b in blocks for x in b[1]], dtype=np.int64),
            "mem_bytes": nan,
            "increment_bytes": nan,
            "occurrences": nan,
            "content": pd.Series([t for b in blocks for t in b[2]], dtype=object),
            **_columns([v for b in blocks for v in b[3]]),
        }
    )
    schema.validate(lines, schema.LINES | schema.SCALENE_LINES, "lines")
    block_df = pd.DataFrame(
        {
            "block": np.arange(len(blocks), dtype=np.int32),
            "report": np.zeros(len(blocks), dtype=np.int32),
            "file": pd.Series([b[0] for b in blocks], dtype=object),
            "function": pd.Series([Path(b[0]).name for b in blocks], dtype=object),
            "first_line": np.asarray([b[1][0] for b in blocks], dtype=np.int64),
            "n_lines": sizes,
        }
    )
    head = ["file", "function", "line"]
    table = pd.DataFrame(functions, columns=[*head, *_FIELDS]) if functions else None
    if table is not None:
        values = _columns(table[list(_FIELDS)].to_numpy(np.float64).tolist())
        table = pd.concat([table[head], pd.DataFrame(values)], axis=1)
        table["line"] = table["line"].astype(np.int64)
    return LineReport(
        lines=lines, blocks=block_df, columns=COLUMNS, functions=table, block_kind="File"
    )
