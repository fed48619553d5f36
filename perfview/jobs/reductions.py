"""Each rank's reduction kept in the parsed-column cache, so reopening a job skips the parse.

A job's views read only per-rank reductions (steps, collectives, totals: ~15 kB a rank), so
that is what a reopen needs back, not the rank's columns. An entry is a verified, durable
artifact folder (`perfview.store.artifacts`, the one rule for files perfview reads back):
numeric columns of the two small frames as exact raw arrays, text columns and the scalar fields
in the manifest. The
key is the cache's key of the trace (path, size, mtime, perfview build) plus a digest of the
code that reduces a rank, so a changed analysis never reads an old reduction. Damaged or
unreadable entries are dropped and the rank is parsed again; with the cache off
(`PERFVIEW_CACHE_MAX_MB=0`) nothing is read or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from functools import cache as memo
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import collectives, job
from perfview.core.analysis.torch.critical_path import graph as cp_graph
from perfview.core.analysis.torch.critical_path import job_what_if as cp_job_what_if
from perfview.core.analysis.torch.critical_path import path as cp_path
from perfview.core.analysis.torch.job import RankReduction
from perfview.store import artifacts, cache_bound
from perfview.store import parsed_columns as column_cache

PREFIX = "rank-"  # entries sit beside the trace entries, evicted by the same LRU bound
_FRAMES = ("steps", "comms", "critical_steps", "critical", "waits", "ops", "kernels")
_SCALARS = ("meta_rank", "name_rank", "world_size", "origin_ns", "duration_ns", "events")


@memo
def _code_digest() -> str:
    """What the reduction depends on beyond the loaders (already in the cache's key)."""
    h = hashlib.blake2b(digest_size=8)
    for module in (job, collectives, cp_graph, cp_path, cp_job_what_if):
        with contextlib.suppress(OSError, TypeError):
            h.update(Path(str(module.__file__)).read_bytes())
    return h.hexdigest()


def entry_for(path: Path) -> Path | None:
    """Where `path`'s reduction lives, or None when the cache is off or the file is gone."""
    if cache_bound.max_bytes() <= 0:
        return None
    try:
        key = column_cache.key(path)
    except OSError:
        return None
    return column_cache.cache_dir() / f"{PREFIX}{key}-{_code_digest()}"


def get(path: Path, order: int) -> RankReduction | None:
    """The cached reduction of `path` (its `order` in this job), or None."""
    entry = entry_for(path)
    if entry is None or not entry.is_dir():
        return None
    try:
        folder = artifacts.open_folder(entry)
        meta = folder.meta
        arrays = folder.read(list(meta["arrays"]), [])
        frames = {name: _frame(name, meta["columns"][name], arrays) for name in _FRAMES}
        return RankReduction(
            path=str(path),
            order=order,
            **{name: meta[name] for name in _SCALARS},
            steps=frames["steps"],
            comms=frames["comms"],
            critical_steps=frames["critical_steps"],
            critical=frames["critical"],
            ops=frames["ops"],
            kernels=frames["kernels"],
            totals={str(k): int(v) for k, v in meta["totals"].items()},
            warnings=[str(w) for w in meta["warnings"]],
        )
    except (artifacts.Damaged, OSError, ValueError, KeyError, TypeError):
        shutil.rmtree(entry, ignore_errors=True)  # parsed again; never a wrong number
        return None


def put(path: Path, reduction: RankReduction) -> None:
    """Store `reduction` durably; a full disk or a read-only cache just means no entry."""
    entry = entry_for(path)
    if entry is None:
        return
    meta: dict[str, Any] = {name: getattr(reduction, name) for name in _SCALARS}
    meta["totals"] = {k: int(v) for k, v in reduction.totals.items()}
    meta["warnings"] = list(reduction.warnings)
    arrays: dict[str, np.ndarray] = {}
    meta["columns"] = {}
    for name in _FRAMES:
        columns: list[dict[str, Any]] = []
        for col, series in getattr(reduction, name).items():
            spec: dict[str, Any] = {"name": str(col), "dtype": str(series.dtype)}
            if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(
                series.dtype
            ):
                arrays[f"{name}.{col}"] = series.to_numpy()
            else:  # text: a few dozen short strings a rank
                spec["values"] = [None if pd.isna(v) else str(v) for v in series.tolist()]
            columns.append(spec)
        meta["columns"][name] = columns
    meta["arrays"] = list(arrays)
    with contextlib.suppress(OSError, TypeError, ValueError):
        artifacts.write_folder(entry, arrays, {}, meta)


def _frame(name: str, columns: list[dict[str, Any]], arrays: dict[str, Any]) -> pd.DataFrame:
    data: dict[str, pd.Series] = {}
    for spec in columns:
        col = spec["name"]
        raw = spec["values"] if "values" in spec else arrays[f"{name}.{col}"]
        data[col] = pd.Series(raw, dtype=spec["dtype"])
    return pd.DataFrame(data)


__all__ = ["PREFIX", "entry_for", "get", "put"]
