"""Sampled profiles (speedscope, collapsed stacks, pyinstrument) as merged call trees.

Every sampling format boils down to weighted stacks (or, for evented profiles, nested spans);
the loaders turn them into "items" (a path element with a parent item, a depth, a frame, a
weight) and `build_tree` folds them with the same level-by-level merge the trace and pstats
trees use, so a sampled profile gets the icicle, bottom-up, sandwich and diff views for free.
Weights are converted once here: time units become nanoseconds, bytes stay bytes, and
anything else ("none", "samples") is a plain count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.calltree import _merge, _tree
from perfview.core.model import Bundle, CallTree, SampledProfile

# speedscope's ValueUnit names → (perfview unit, factor to that unit)
UNITS: dict[str, tuple[str, float]] = {
    "nanoseconds": ("ns", 1.0),
    "microseconds": ("ns", 1e3),
    "milliseconds": ("ns", 1e6),
    "seconds": ("ns", 1e9),
    "bytes": ("bytes", 1.0),
    "none": ("samples", 1.0),
    "samples": ("samples", 1.0),
}
# The column suffix a weight in each unit gets (core.units reads units from suffixes).
SUFFIX = {"ns": "_ns", "bytes": "_bytes", "samples": "_samples"}


@dataclass
class Items:
    """Path elements of one profile (see `calltree._merge`): parent item, depth, frame, weights."""

    up: np.ndarray
    level: np.ndarray
    key: np.ndarray
    total: np.ndarray
    self_: np.ndarray
    calls: np.ndarray

    def __len__(self) -> int:
        return len(self.up)


def stack_items(
    flat_keys: np.ndarray, lengths: np.ndarray, weights: np.ndarray, counts: np.ndarray
) -> Items:
    """Items of weighted stacks given root-first and concatenated (`lengths` frames each).

    `counts` is how many samples each stack stands for (identical stacks summed upstream);
    the leaf of each stack gets its weight as self weight.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = lengths > 0
    n = int(lengths.sum())
    starts = np.cumsum(lengths) - lengths
    level = np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)
    up = np.where(level > 0, np.arange(n, dtype=np.int64) - 1, -1)
    total = np.repeat(np.asarray(weights, dtype=np.float64), lengths)
    self_ = np.zeros(n, dtype=np.float64)
    self_[(starts + lengths - 1)[keep]] = np.asarray(weights, dtype=np.float64)[keep]
    calls = np.repeat(np.asarray(counts, dtype=np.float64), lengths)
    return Items(up, level, np.asarray(flat_keys, dtype=np.int64), total, self_, calls)


def span_items(parent: np.ndarray, depth: np.ndarray, key: np.ndarray, dur: np.ndarray) -> Items:
    """Items of nested spans (evented profiles): self = duration not covered by children."""
    parent = np.asarray(parent, dtype=np.int64)
    dur = np.asarray(dur, dtype=np.float64)
    inner = parent >= 0
    child_sum = np.bincount(parent[inner], weights=dur[inner], minlength=len(parent))
    self_ = np.maximum(dur - child_sum, 0.0)
    return Items(parent, np.asarray(depth, np.int64), np.asarray(key, np.int64), dur, self_,
                 np.ones(len(parent)))  # fmt: skip


def _under_root(items: Items, root_key: int, extra_self: float, extra_calls: float) -> Items:
    """The same items one level down, under a new item with frame `root_key` (a thread)."""
    top = items.level == 0
    up = np.where(items.up >= 0, items.up + 1, 0)
    return Items(
        np.concatenate([[-1], up]),
        np.concatenate([[0], items.level + 1]),
        np.concatenate([[root_key], items.key]),
        np.concatenate([[items.total[top].sum() + extra_self], items.total]),
        np.concatenate([[extra_self], items.self_]),
        np.concatenate([[items.calls[top].sum() + extra_calls], items.calls]),
    )


def build_tree(
    parts: list[Items],
    frames: pd.DataFrame,
    thread_keys: list[int] | None = None,
    loose: list[tuple[float, float]] | None = None,
    root_extra: tuple[float, float] = (0.0, 0.0),
) -> CallTree:
    """One merged tree of every part (profile/thread). With `thread_keys`, each part hangs
    under its own root frame (the thread), which also keeps `loose` (weight, samples) of
    stacks that had no frame at all; `root_extra` is that for a tree without thread roots
    (it becomes the root's self weight)."""
    if thread_keys is not None:
        extra = loose or [(0.0, 0.0)] * len(parts)
        parts = [
            _under_root(p, k, w, c) for p, k, (w, c) in zip(parts, thread_keys, extra, strict=True)
        ]
    offsets = np.cumsum([0] + [len(p) for p in parts])
    ups = [np.where(p.up >= 0, p.up + off, -1) for p, off in zip(parts, offsets, strict=False)]

    def cat(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype=dtype)

    parent, frame, metrics = _merge(
        cat(ups, np.int64),
        cat([p.level for p in parts], np.int64),
        cat([p.key for p in parts], np.int64),
        cat([p.total for p in parts], np.float64),
        cat([p.self_ for p in parts], np.float64),
        cat([p.calls for p in parts], np.float64),
    )
    metrics["calls"][0] = metrics["calls"][parent == 0].sum()  # the samples of every stack
    if root_extra != (0.0, 0.0):
        metrics["total_ns"][0] += root_extra[0]
        metrics["self_ns"][0] += root_extra[0]
        metrics["calls"][0] += root_extra[1]
    return _tree(parent, frame, frames, metrics)


def frames_table(names: list[str], files: list[str], lines: list[int]) -> pd.DataFrame:
    """The CallTree frames table (name, file, line; line -1 when unknown)."""
    return pd.DataFrame(
        {
            "name": pd.Series(names, dtype=object),
            "file": pd.Series(files, dtype=object),
            "line": np.asarray(lines, dtype=np.int64).reshape(-1),
        }
    )


def outermost(tree: CallTree) -> np.ndarray:
    """True for nodes with no strict ancestor of the same frame (so recursion counts once)."""
    parent = tree.parent.astype(np.int64)
    frame = tree.frame.astype(np.int64)
    recursive = np.zeros(len(parent), dtype=bool)
    nodes = np.arange(1, len(parent), dtype=np.int64)
    anc = parent[1:]
    while len(nodes):
        live = anc > 0
        nodes, anc = nodes[live], anc[live]
        hit = frame[anc] == frame[nodes]
        recursive[nodes[hit]] = True
        nodes, anc = nodes[~hit], parent[anc[~hit]]
    return ~recursive


def functions_table(tree: CallTree, unit: str) -> pd.DataFrame:
    """Per frame: self and total weight and samples, like pstats' tottime/cumtime.

    Total counts each frame once per sample even when it recurses (outermost nodes only).
    Columns: name, file, line, self<sfx>, total<sfx>, self_pct, total_pct, samples, where
    <sfx> is `_ns`, `_bytes` or `_samples` by unit.
    """
    sfx = SUFFIX.get(unit, "_samples")
    n_frames = len(tree.frames)
    nodes = np.arange(1, len(tree))
    frame = tree.frame[nodes].astype(np.int64)
    m = tree.metrics
    outer = outermost(tree)[nodes]
    self_w = np.bincount(frame, weights=m["self_ns"][nodes], minlength=n_frames)
    total_w = np.bincount(frame[outer], weights=m["total_ns"][nodes][outer], minlength=n_frames)
    calls = m.get("calls", np.zeros(len(tree)))[nodes]
    samples = np.bincount(frame[outer], weights=calls[outer], minlength=n_frames)
    grand = float(m["total_ns"][0]) or 1.0
    table = pd.DataFrame(
        {
            "name": tree.frames["name"].astype(object).to_numpy(),
            "file": tree.frames["file"].astype(object).to_numpy(),
            "line": tree.frames["line"].to_numpy(dtype=np.int64),
            f"self{sfx}": _as_unit(self_w, unit),
            f"total{sfx}": _as_unit(total_w, unit),
            "self_pct": self_w * 100.0 / grand,
            "total_pct": total_w * 100.0 / grand,
            "samples": np.rint(samples).astype(np.int64),
        }
    )
    order = np.lexsort((-self_w, -total_w))
    return table.iloc[order].reset_index(drop=True)


def _as_unit(values: np.ndarray, unit: str) -> np.ndarray:
    """ns and bytes columns are int64 (the model's rule); plain weights may be fractional."""
    if unit in ("ns", "bytes"):
        out: np.ndarray = np.rint(values).astype(np.int64)
        return out
    return np.asarray(values, dtype=np.float64)


def threads_table(profile: SampledProfile) -> pd.DataFrame:
    """The profile's threads (speedscope profiles, or collapsed thread roots).

    `weight` is in the unit the row names (speedscope's own `unit`: py-spy's seconds), and
    `weight<sfx>` (`_ns`, `_bytes`, `_samples`: the profile's unit, which the loaders keep)
    is the same figure for formatting; rows in another unit (a heap profile beside a CPU
    one) have no value there.
    """
    out = profile.threads.copy()
    weight = out["weight"].to_numpy(dtype=np.float64)
    column = f"weight{SUFFIX.get(profile.unit, '_samples')}"
    if "unit" not in out:
        out[column] = weight
        return out
    units = [UNITS.get(str(u), (profile.unit, 1.0)) for u in out["unit"]]
    factor = np.asarray([f for _, f in units], dtype=np.float64)
    same = np.asarray([kind == profile.unit for kind, _ in units], dtype=bool)
    out["weight"] = weight / factor
    out[column] = np.where(same, weight, np.nan)
    return out


def sampled(bundle: Bundle) -> SampledProfile:
    if bundle.sampled is None:
        from perfview.core.model.errors import LoadError

        raise LoadError(f"{bundle.path} holds no sampled profile")
    return bundle.sampled


def bundle_functions(bundle: Bundle) -> pd.DataFrame:
    """The `functions` view of a sampled bundle."""
    profile = sampled(bundle)
    if bundle.tree is None:
        return functions_table(build_tree([], frames_table([], [], [])), profile.unit)
    return functions_table(bundle.tree, profile.unit)


__all__ = [
    "SUFFIX",
    "UNITS",
    "Items",
    "build_tree",
    "bundle_functions",
    "frames_table",
    "functions_table",
    "outermost",
    "span_items",
    "stack_items",
    "threads_table",
]
