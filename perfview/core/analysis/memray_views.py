"""Tables and trees over a `MemrayCapture`: sites at the peak, leaks, memory over time.

Pure pandas/numpy; the CLI prints these and the GUI draws them. Flame-graph trees carry bytes
in `total_ns` (what the icicle lays out) with a `unit_bytes` marker and allocation counts in
`calls`, built by the same path merge as the CUDA snapshot's tree.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from perfview.core.analysis.calltree import make_frames
from perfview.core.analysis.cuda_memory_views import _tree_from_paths
from perfview.core.model import CallTree
from perfview.core.model.memray_model import MemrayCapture

NO_FRAME = "(no Python frame)"


def counts(cap: MemrayCapture) -> dict[str, int]:
    """JSON counts: records of every kind (frees too), threads, peak and leaked bytes."""
    return {
        "records": int(cap.meta.get("records", 0)),
        "threads": len(cap.threads),
        "peak_bytes": int(cap.meta.get("peak_bytes", 0)),
        "leaked_bytes": int(cap.leaks["size_bytes"].sum()),
    }


def site_labels(cap: MemrayCapture) -> np.ndarray:
    """Per stack: its innermost Python frame as 'function (file:line)' (the innermost frame
    when there is none, e.g. native-only stacks), as memray's tables name a location."""
    names = cap.frames["name"].to_numpy(dtype=object)
    files = cap.frames["file"].to_numpy(dtype=object)
    lines = cap.frames["line"].to_numpy(dtype=np.int64)
    is_py = np.array([str(f).endswith(".py") or str(f).startswith("<") for f in files], bool)
    n = len(cap.stack_offsets) - 1
    labels = np.full(n, NO_FRAME, dtype=object)
    for s in range(n):
        ids = cap.stack(s)
        if not len(ids):
            continue
        py = np.flatnonzero(is_py[ids])
        f = int(ids[py[0]] if len(py) else ids[0])
        labels[s] = f"{names[f]} ({files[f]}:{lines[f]})"
    return labels


def _by_site(cap: MemrayCapture, sites: pd.DataFrame) -> pd.DataFrame:
    labels = site_labels(cap)
    out = pd.DataFrame(
        {
            "location": labels[sites["stack"].to_numpy()],
            "size_bytes": sites["size_bytes"].to_numpy(),
            "count": sites["count"].to_numpy(),
        }
    )
    out = out.groupby("location", as_index=False, sort=False).sum()
    total = max(int(out["size_bytes"].sum()), 1)
    out["share_pct"] = np.round(100.0 * out["size_bytes"] / total, 2)
    return out.sort_values(["size_bytes", "location"], ascending=[False, True], kind="stable")


def allocations_table(cap: MemrayCapture) -> pd.DataFrame:
    """Allocation sites alive at the high-water mark, by innermost frame, largest first."""
    return _by_site(cap, cap.peak).reset_index(drop=True)


def leaks_table(cap: MemrayCapture) -> pd.DataFrame:
    """Sites whose allocations were never freed before tracking stopped, largest first."""
    return _by_site(cap, cap.leaks).reset_index(drop=True)


def timeline_table(cap: MemrayCapture) -> pd.DataFrame:
    """memray's memory snapshots: resident set size and tracked heap over time."""
    return cap.memory.copy()


# Frames of the launcher above the user's script (`memray run`, runpy, perfview's recorder):
# the same few levels on top of every stack, they say nothing about the program.
_LAUNCHER = re.compile(r"([/\\]memray[/\\]|runpy|[/\\]perfview[/\\]runner[/\\])")


def launcher_frames(cap: MemrayCapture) -> np.ndarray:
    """Bool per frame: a frame of the launcher (memray's CLI, runpy, perfview's recorder)."""
    files = cap.frames["file"].astype(str)
    return np.array([bool(_LAUNCHER.search(f)) for f in files], dtype=bool)


def site_tree(cap: MemrayCapture, sites: pd.DataFrame, *, hide_launcher: bool = True) -> CallTree:
    """Flame graph of `sites` (peak, leaks or a time range): root-first stacks, bytes wide.

    The launcher's frames at the root of each stack are left out unless asked for; a stack
    made only of them (allocations of the launcher itself) keeps them."""
    stacks = sites["stack"].to_numpy(dtype=np.int64)
    uniq, inv = np.unique(stacks, return_inverse=True)
    inv = inv.reshape(-1)
    weight = np.bincount(inv, weights=sites["size_bytes"].to_numpy(np.float64), minlength=len(uniq))
    count = np.bincount(inv, weights=sites["count"].to_numpy(np.float64), minlength=len(uniq))
    no_frame = len(cap.frames)
    names = [*cap.frames["name"].astype(str), NO_FRAME]
    files = [*cap.frames["file"].astype(str), ""]
    launcher = launcher_frames(cap) if hide_launcher else np.zeros(len(cap.frames), bool)
    keys = []
    for s in uniq:
        ids = cap.stack(int(s))[::-1].astype(np.int64)
        own = np.flatnonzero(~launcher[ids])
        if len(own):
            ids = ids[own[0] :]  # drop the launcher's leading frames only
        keys.append(ids if len(ids) else np.array([no_frame], dtype=np.int64))
    return _tree_from_paths(keys, weight, count, make_frames(names, files))


def range_sites(cap: MemrayCapture, lo: int, hi: int) -> pd.DataFrame:
    """Allocations made between memory snapshots `lo` and `hi` (by site): what the temporal
    view's selection shows. An interval counts when it was allocated within (lo, hi]."""
    iv = cap.intervals
    start = iv["start"].to_numpy()
    mask = (start > lo) & (start <= hi)
    sel = iv[mask]
    return pd.DataFrame(
        {
            "stack": sel["stack"].to_numpy(),
            "size_bytes": sel["size_bytes"].to_numpy(),
            "count": sel["count"].to_numpy(),
        }
    )
