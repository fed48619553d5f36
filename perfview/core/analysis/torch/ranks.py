"""Ranks page: a folder of per-rank traces, each rank's step times, the slowest flagged.

A run is one folder with one trace per worker: `tensorboard_trace_handler` writes
`<worker>.<epoch_ms>.pt.trace.json[.gz]`, HTA-style jobs `rank-N.<stamp>.pt.trace.json.gz` or
`…rank-N.json.gz`. The rank of a file comes from its `distributedInfo.rank` metadata; when that
is absent, from the file name (`rank-N`, `rank_N`, `rankN`, `workerN`, a trailing `_N`/`-N`
right before the extension); failing that, from the file's position in name order. Nothing is
ever typed in by hand.

Loading is done by the caller's `load` (normally `perfview.loaders.load`), so this module stays
free of file-format knowledge and tests can pass a stub. A thread pool of two loads files side
by side (the JSON decoder releases the GIL for part of its work).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, step_rows
from perfview.core.analysis.torch.overview import utilization_table
from perfview.core.model import Bundle, Timeline

TRACE_RE = re.compile(r"\.(?:pt\.trace\.)?json(?:\.gz)?$", re.IGNORECASE)
_NAME_RANK = (
    re.compile(r"(?:rank|worker)[-_]?(\d+)", re.IGNORECASE),
    # `name_3.json`, but not tensorboard_trace_handler's `<host>_<pid>.<epoch_ms>.pt.trace.json`
    # (that number is a process id, not a rank).
    re.compile(r"[-_](\d+)\.(?:pt\.trace\.)?json(?:\.gz)?$", re.IGNORECASE),
)


def trace_files(folder: Path) -> list[Path]:
    """The trace files of a run folder (not recursive), sorted by name."""
    return sorted(p for p in Path(folder).iterdir() if p.is_file() and TRACE_RE.search(p.name))


def rank_from_meta(meta: dict[str, Any]) -> int | None:
    """distributedInfo.rank when the trace recorded it."""
    info = meta.get("distributedInfo")
    if isinstance(info, dict):
        rank = info.get("rank")
        if isinstance(rank, int) and not isinstance(rank, bool):
            return rank
        if isinstance(rank, str) and rank.isdigit():
            return int(rank)
    return None


def rank_from_name(name: str) -> int | None:
    """The rank a file name states (`rank-3…`, `rank_3…`, `worker_3.json`), else None."""
    for pattern in _NAME_RANK:
        match = pattern.search(name)
        if match:
            return int(match.group(1))
    return None


@dataclass(frozen=True)
class RankTrace:
    """One loaded rank: its number, where the number came from, the file and its bundle."""

    rank: int
    source: str  # "distributedInfo" | "file name" | "file order"
    path: Path
    bundle: Bundle


def load_ranks(folder: Path, load: Callable[[Path], Bundle], workers: int = 2) -> list[RankTrace]:
    """Load every trace in `folder` and give each its rank (see the module docstring)."""
    files = trace_files(folder)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        bundles = list(pool.map(load, files))
    out = []
    for order, (path, bundle) in enumerate(zip(files, bundles, strict=True)):
        meta = bundle.timeline.meta if bundle.timeline is not None else {}
        rank, source = rank_from_meta(meta), "distributedInfo"
        if rank is None:
            rank, source = rank_from_name(path.name), "file name"
        if rank is None:
            rank, source = order, "file order"
        out.append(RankTrace(rank, source, path, bundle))
    return sorted(out, key=lambda r: (r.rank, r.path.name))


def _rank_row(trace: RankTrace) -> dict[str, Any]:
    timeline: Timeline | None = trace.bundle.timeline
    steps = step_rows(timeline) if timeline is not None else pd.DataFrame({"dur_ns": []})
    dur = steps["dur_ns"].to_numpy(dtype=I64)
    util = utilization_table(timeline) if timeline is not None else pd.DataFrame()
    per_device = util[util["stream"] == "all"] if len(util) else util
    return {
        "rank": trace.rank,
        "rank_source": trace.source,
        "file": trace.path.name,
        "steps": len(dur),
        "step_mean_ns": float(dur.mean()) if len(dur) else np.nan,
        "step_median_ns": float(np.median(dur)) if len(dur) else np.nan,
        "step_min_ns": float(dur.min()) if len(dur) else np.nan,
        "step_max_ns": float(dur.max()) if len(dur) else np.nan,
        "gpu_util_pct": float(per_device["utilization_pct"].mean()) if len(per_device) else np.nan,
        "comm_ns": float(per_device["comm_ns"].sum()) if len(per_device) else np.nan,
    }


def ranks_table(traces: list[RankTrace]) -> pd.DataFrame:
    """One row per rank, slowest flagged.

    Columns: rank, rank_source, file, steps, step_mean_ns, step_median_ns, step_min_ns,
    step_max_ns, gpu_util_pct, comm_ns, slowest (bool: highest mean step time),
    vs_fastest_pct (mean step time above the fastest rank's, in percent).
    """
    out = pd.DataFrame([_rank_row(t) for t in traces])
    if not len(out):
        cols = ["rank", "rank_source", "file", "steps", "step_mean_ns", "slowest"]
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in cols})
    mean = out["step_mean_ns"]
    out["slowest"] = (mean == mean.max()) & mean.notna()
    fastest = mean.min()
    out["vs_fastest_pct"] = (
        (mean - fastest) * 100.0 / fastest if fastest and fastest > 0 else np.nan
    )
    out["steps"] = out["steps"].astype(I64)
    return out.reset_index(drop=True)


def single_rank_table(bundle: Bundle) -> pd.DataFrame:
    """The ranks table for one opened file (the `ranks` view of a single trace)."""
    meta = bundle.timeline.meta if bundle.timeline is not None else {}
    rank, source = rank_from_meta(meta), "distributedInfo"
    if rank is None:
        rank, source = rank_from_name(bundle.path.name), "file name"
    if rank is None:
        rank, source = 0, "file order"
    return ranks_table([RankTrace(rank, source, bundle.path, bundle)])


__all__ = [
    "RankTrace",
    "load_ranks",
    "rank_from_meta",
    "rank_from_name",
    "ranks_table",
    "single_rank_table",
    "trace_files",
]
