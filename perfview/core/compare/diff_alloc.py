"""Diff sides of allocation captures: CUDA snapshots (live bytes by allocation site) and memray
captures (bytes at the high-water mark, leaked bytes, by location).

Rows are keyed by the site text ('forward (model.py:10)' / the op when no Python frame), so two
runs of the same code meet row by row however their addresses and stack ids differ. Totals:
the snapshot's active bytes, memray's peak and leaked bytes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis import cuda_memory_views, memray_views
from perfview.core.model import Bundle


def cuda_sites(bundle: Bundle) -> tuple[pd.DataFrame, float]:
    """Live CUDA blocks grouped by the Python line (else op) that allocated them."""
    if bundle.cuda_snapshot is None:
        raise ValueError(f"{bundle.title} holds no CUDA memory snapshot")
    table = cuda_memory_views.allocations_table(bundle.cuda_snapshot)
    site = np.where(table["python"] != "", table["python"], table["op"])
    site = np.where(site == "", cuda_memory_views.NO_STACK, site)
    frame = (
        pd.DataFrame({"site": site.astype(object), "size_bytes": table["size_bytes"], "count": 1})
        .groupby("site", as_index=False, sort=False)
        .sum()
    )
    return frame, float(table["size_bytes"].sum())


def _basename_locations(locations: pd.Series) -> pd.Series:
    """'f (/a/b/x.py:3)' → 'f (x.py:3)': runs from different checkouts or temp dirs match."""
    return locations.astype(str).str.replace(r"\(([^()]*[/\\])([^/\\()]*)\)$", r"(\2)", regex=True)


def memray_sites(
    bundle: Bundle, leaks: bool, match: str = "basename"
) -> tuple[pd.DataFrame, float]:
    """memray locations at the peak (or leaked), bytes and allocation counts."""
    if bundle.memray is None:
        raise ValueError(f"{bundle.title} holds no memray capture")
    cap = bundle.memray
    table = memray_views.leaks_table(cap) if leaks else memray_views.allocations_table(cap)
    total = table["size_bytes"].sum() if leaks else cap.meta.get("peak_bytes", 0)
    table = table[["location", "size_bytes", "count"]]
    if match == "basename":
        table = table.assign(location=_basename_locations(table["location"]))
        table = table.groupby("location", as_index=False, sort=False).sum()
    return table.reset_index(drop=True), float(total)
