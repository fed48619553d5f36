"""Which trace files a run folder holds and which rank each one is; one trace's `ranks` row.

A run is one folder with one trace per worker: `tensorboard_trace_handler` writes
`<worker>.<epoch_ms>.pt.trace.json[.gz]`, HTA-style jobs `rank-N.<stamp>.pt.trace.json.gz` or
`…rank-N.json.gz`. The rank of a file comes from its `distributedInfo.rank` metadata; when that
is absent, from the file name (`rank-N`, `rank_N`, `rankN`, `workerN`, a trailing `_N`/`-N`
right before the extension); failing that, from the file's position in name order. Nothing is
ever typed in by hand.

A folder is opened as a job by `perfview.jobs` (ranks reduced in worker processes; its tables are
`job_views`); this module only names the files and ranks, and gives the `ranks` view of one
opened trace (`single_rank_table`).
"""

from __future__ import annotations

import re
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


def _rank_row(rank: int, source: str, path: Path, timeline: Timeline | None) -> dict[str, Any]:
    steps = step_rows(timeline) if timeline is not None else pd.DataFrame({"dur_ns": []})
    dur = steps["dur_ns"].to_numpy(dtype=I64)
    util = utilization_table(timeline) if timeline is not None else pd.DataFrame()
    per_device = util[util["stream"] == "all"] if len(util) else util
    return {
        "rank": rank,
        "rank_source": source,
        "file": path.name,
        "steps": len(dur),
        "step_mean_ns": float(dur.mean()) if len(dur) else np.nan,
        "step_median_ns": float(np.median(dur)) if len(dur) else np.nan,
        "step_min_ns": float(dur.min()) if len(dur) else np.nan,
        "step_max_ns": float(dur.max()) if len(dur) else np.nan,
        "gpu_util_pct": float(per_device["utilization_pct"].mean()) if len(per_device) else np.nan,
        "comm_ns": float(per_device["comm_ns"].sum()) if len(per_device) else np.nan,
    }


def single_rank_table(bundle: Bundle) -> pd.DataFrame:
    """The `ranks` view of one opened trace: its one row, flagged as the slowest of itself.

    Columns: rank, rank_source, file, steps, step_mean_ns, step_median_ns, step_min_ns,
    step_max_ns, gpu_util_pct, comm_ns, slowest, vs_fastest_pct (a job's `ranks` view has
    these and more, see `job_views.ranks_table`).
    """
    meta = bundle.timeline.meta if bundle.timeline is not None else {}
    rank, source = rank_from_meta(meta), "distributedInfo"
    if rank is None:
        rank, source = rank_from_name(bundle.path.name), "file name"
    if rank is None:
        rank, source = 0, "file order"
    out = pd.DataFrame([_rank_row(rank, source, bundle.path, bundle.timeline)])
    mean = out["step_mean_ns"]
    out["slowest"] = (mean == mean.max()) & mean.notna()
    fastest = mean.min()
    out["vs_fastest_pct"] = (
        (mean - fastest) * 100.0 / fastest if fastest and fastest > 0 else np.nan
    )
    out["steps"] = out["steps"].astype(I64)
    return out.reset_index(drop=True)


__all__ = [
    "rank_from_meta",
    "rank_from_name",
    "single_rank_table",
    "trace_files",
]
