"""Tables and series over a `CudaSnapshot`: segments, live allocations, timeline, OOM, tree.

Pure numpy/pandas functions (the CLI prints them, the GUI draws them). Active memory over time
follows PyTorch's memory_viz: an `alloc` adds its size, a `free_completed` (or the older `free`)
removes it; segment events change reserved memory, not active memory. The curve is anchored at
the snapshot's end state (the sum of active blocks), counted backwards, so allocations made
before history recording started are included without guessing.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from perfview.core.analysis.calltree import _merge, _tree, make_frames
from perfview.core.model import CallTree
from perfview.core.model.cuda_memory import INTERNAL_PREFIXES, CudaSnapshot, site_labels

ACTIVE = "active_allocated"
_ALLOC = ("alloc",)
_FREE = ("free_completed", "free")
NO_STACK = "(no stack recorded)"
BEFORE = "(allocated before history / other sites)"


# What the Segments page's figures mean, beside torch's `_memory_viz.segsum` (which reports the
# same segments, reserved bytes and totals: tests/agreement/test_memory_viz.py).
SEGMENT_DEFINITIONS = {
    "used": "the bytes of the segment's live (active) blocks, each request rounded up to the "
    "allocator's block size; torch's _memory_viz segsum calls only the requested bytes "
    "allocated",
    "free": "the bytes of the segment's other blocks (inactive, or freed and waiting on a "
    "stream); segsum's free also counts the rounding inside live blocks, as internal free",
    "largest free": "the largest block outside the live ones: the biggest request the segment "
    "can take without growing",
}


def _hex(values: np.ndarray) -> list[str]:
    return [f"0x{int(v):x}" for v in values]


def segments_table(snap: CudaSnapshot) -> pd.DataFrame:
    """One row per segment: reserved, used and free bytes, block counts and fragmentation.

    `fragmentation_pct` is 100 × (1 − largest free block / free bytes): 0 when the free space is
    one block (any request up to it fits), near 100 when it is scattered in small holes.
    """
    seg = snap.segments
    blk = snap.blocks
    n = len(seg)
    active = is_in(blk["state"], (ACTIVE,))
    size = blk["size_bytes"].to_numpy(dtype=np.int64)
    sid = blk["segment"].to_numpy(dtype=np.int64)
    used = np.bincount(sid[active], weights=size[active], minlength=n).astype(np.int64)
    n_blocks = np.bincount(sid, minlength=n)
    n_active = np.bincount(sid[active], minlength=n)
    largest = np.zeros(n, dtype=np.int64)
    if (~active).any():
        free_sizes = pd.Series(size[~active]).groupby(sid[~active]).max()
        largest[free_sizes.index.to_numpy()] = free_sizes.to_numpy()
    total = seg["total_bytes"].to_numpy(dtype=np.int64)
    free = np.maximum(total - used, 0)
    frag = np.where(free > 0, 100.0 * (1.0 - largest / np.maximum(free, 1)), 0.0)
    out = pd.DataFrame(
        {
            "segment": seg["segment"].to_numpy(),
            "device": seg["device"].to_numpy(),
            "address": _hex(seg["address"].to_numpy()),
            "segment_type": seg["segment_type"].astype(str).to_numpy(),
            "total_bytes": total,
            "used_bytes": used,
            "free_bytes": free,
            "blocks": n_blocks,
            "active_blocks": n_active,
            "largest_free_bytes": largest,
            "fragmentation_pct": np.round(frag, 1),
            "stream": seg["stream"].to_numpy(),
        }
    )
    return out.sort_values(["total_bytes", "segment"], ascending=[False, True], kind="stable")


def _block_stacks(snap: CudaSnapshot) -> np.ndarray:
    """Stack of each block; a block recorded without frames borrows its last `alloc` entry's."""
    stacks = snap.blocks["stack"].to_numpy(dtype=np.int64).copy()
    missing = stacks == 0
    tr = snap.trace
    if missing.any() and len(tr):
        allocs = tr[is_in(tr["action"], ("alloc",))]
        last = allocs.drop_duplicates(["device", "addr"], keep="last")
        key = pd.MultiIndex.from_arrays([last["device"], last["addr"]])
        found = pd.Series(last["stack"].to_numpy(), index=key)
        blk = snap.blocks[missing]
        probe = pd.MultiIndex.from_arrays([blk["device"], blk["address"]])
        stacks[missing] = found.reindex(probe).fillna(0).to_numpy(dtype=np.int64)
    return stacks


def allocations_table(snap: CudaSnapshot) -> pd.DataFrame:
    """Live allocations (active blocks), largest first, with the Python line and op behind each."""
    blk = snap.blocks
    active = is_in(blk["state"], (ACTIVE,))
    stacks = _block_stacks(snap)[active]
    py, op = site_labels(snap)
    live = blk[active]
    out = pd.DataFrame(
        {
            "device": live["device"].to_numpy(),
            "address": _hex(live["address"].to_numpy()),
            "size_bytes": live["size_bytes"].to_numpy(),
            "requested_bytes": live["requested_bytes"].to_numpy(),
            "segment": live["segment"].to_numpy(),
            "python": py[stacks],
            "op": op[stacks],
            "frames": np.diff(snap.stack_offsets)[stacks],
        }
    )
    return out.sort_values("size_bytes", ascending=False, kind="stable").reset_index(drop=True)


def is_in(col: pd.Series, names: tuple[str, ...]) -> np.ndarray:
    """Bool per row: str(value) is one of `names`; by category code when the column is
    categorical, as loaders make it (`astype(str)` would build a string per row: a second
    per million rows)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = [i for i, c in enumerate(col.cat.categories) if str(c) in names]
        return np.isin(col.cat.codes.to_numpy(), np.array(cats, dtype=np.int64))
    return np.isin(col.astype(str).to_numpy(), names)


def _address_order(tr: pd.DataFrame) -> np.ndarray:
    """Trace rows sorted by (device, addr, seq). Loaders write one device's entries after
    another in `seq` order, so then one stable sort by address per device is that order."""
    dev = tr["device"].to_numpy()
    seq = tr["seq"].to_numpy()
    addr = tr["addr"].to_numpy()
    if len(dev) and (dev[0] == dev).all() and (np.diff(seq) > 0).all():
        return np.argsort(addr, kind="stable")
    return np.lexsort((seq, addr, dev))


def _event_sites(snap: CudaSnapshot) -> tuple[np.ndarray, np.ndarray]:
    """Per trace entry: (active-bytes delta, stack of the allocation it belongs to; -1 if
    unknown). A free is matched to the latest earlier `alloc` at the same device and address."""
    tr = snap.trace
    size = tr["size_bytes"].to_numpy(dtype=np.int64)
    is_alloc = is_in(tr["action"], _ALLOC)
    is_free = is_in(tr["action"], _FREE)
    delta = np.where(is_alloc, size, np.where(is_free, -size, 0))
    order = _address_order(tr)
    dev = tr["device"].to_numpy()[order]
    addr = tr["addr"].to_numpy()[order]
    pos = np.arange(len(order))
    group_start = np.ones(len(order), dtype=bool)
    group_start[1:] = (dev[1:] != dev[:-1]) | (addr[1:] != addr[:-1])
    start_pos = np.maximum.accumulate(np.where(group_start, pos, 0))
    last_alloc = np.maximum.accumulate(np.where(is_alloc[order], pos, -1))
    valid = last_alloc >= start_pos
    stacks_sorted = tr["stack"].to_numpy(dtype=np.int64)[order]
    owner = np.where(valid, stacks_sorted[np.maximum(last_alloc, 0)], -1)
    site = np.empty(len(order), dtype=np.int64)
    site[order] = owner
    return delta, site


def _device_order(snap: CudaSnapshot, device: int) -> np.ndarray:
    tr = snap.trace
    idx = np.flatnonzero(tr["device"].to_numpy() == device)
    seq = tr["seq"].to_numpy()[idx]
    if (np.diff(seq) > 0).all():  # as loaders write it: already in order
        return idx
    return idx[np.argsort(seq, kind="stable")]


def _end_active(snap: CudaSnapshot, device: int) -> int:
    blk = snap.blocks
    mask = is_in(blk["state"], (ACTIVE,)) & (blk["device"].to_numpy() == device)
    return int(blk["size_bytes"].to_numpy()[mask].sum())


def trace_devices(snap: CudaSnapshot) -> list[int]:
    return sorted(int(d) for d in np.unique(snap.trace["device"].to_numpy()))


def active_curve(
    snap: CudaSnapshot, device: int, delta: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(trace rows of `device` in order, active bytes after each), anchored at the end state.
    `delta`: `_event_sites(snap)[0]` where the caller has it already."""
    rows = _device_order(snap, device)
    if delta is None:
        delta, _ = _event_sites(snap)
    d = delta[rows]
    after = _end_active(snap, device) - (d[::-1].cumsum()[::-1] - d)
    return rows, np.maximum(after, 0)


def timeline_table(snap: CudaSnapshot) -> pd.DataFrame:
    """Every trace entry with the active bytes after it (per device, in recorded order)."""
    parts = []
    py, op = site_labels(snap)
    delta, owner = _event_sites(snap)
    tr = snap.trace
    for device in trace_devices(snap):
        rows, active = active_curve(snap, device, delta)
        site = owner[rows]
        label = np.where(site >= 0, py[np.maximum(site, 0)], "")
        label = np.where(label == "", np.where(site >= 0, op[np.maximum(site, 0)], ""), label)
        parts.append(
            pd.DataFrame(
                {
                    "device": device,
                    "seq": tr["seq"].to_numpy()[rows],
                    "ts_ns": tr["ts_ns"].to_numpy()[rows],
                    "action": tr["action"].astype(str).to_numpy()[rows],
                    "size_bytes": tr["size_bytes"].to_numpy()[rows],
                    "active_bytes": active,
                    "site": label,
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=["device", "seq", "ts_ns", "action", "size_bytes", "active_bytes", "site"]
        )
    return pd.concat(parts, ignore_index=True)


def oom_table(snap: CudaSnapshot, before: int = 30, after: int = 5) -> pd.DataFrame:
    """Around each `oom` entry: the `before` entries that led to it, the OOM, and the `after`
    entries that followed on the same device (what the program freed or retried).

    `oom` numbers the OOM each row belongs to; `offset` is the row's position relative to it
    (negative before, 0 for the OOM itself)."""
    table = timeline_table(snap)
    ooms = np.flatnonzero(table["action"].to_numpy() == "oom")
    if not len(ooms):
        return table.iloc[0:0].assign(oom=pd.Series(dtype=int), offset=pd.Series(dtype=int))
    keep = []
    device = table["device"].to_numpy()
    for k, row in enumerate(ooms.tolist()):
        lo = row
        while lo > 0 and row - lo < before and device[lo - 1] == device[row]:
            lo -= 1
        hi = row
        while hi + 1 < len(table) and hi - row < after and device[hi + 1] == device[row]:
            hi += 1
        keep.append(table.iloc[lo : hi + 1].assign(oom=k, offset=np.arange(lo - row, hi - row + 1)))
    return pd.concat(keep, ignore_index=True)


def has_oom(snap: CudaSnapshot) -> bool:
    return bool(is_in(snap.trace["action"], ("oom",)).any())


def timeline_bands(
    snap: CudaSnapshot, device: int, k: int = 9, points: int = 4000
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Active memory of `device` split by allocation site, for a stacked area plot.

    Returns (x, labels, bands): x is ns since the first entry (entry index without time_us),
    bands[i] the bytes of site i at each x; the last band holds every other site and what was
    allocated before history began, so the bands always sum to the active curve.
    """
    delta, owner = _event_sites(snap)
    rows, total = active_curve(snap, device, delta)
    if not len(rows):
        return np.zeros(0), [], np.zeros((0, 0))
    d, site = delta[rows], owner[rows]
    py, op = site_labels(snap)
    labels_all = np.where(py != "", py, op)
    labels_all = np.where(labels_all == "", NO_STACK, labels_all)
    # The event's label as a number: np.unique over a few thousand stacks' labels, not over
    # millions of events' strings (the same sorted `uniq` and `inv`).
    names, of_stack = np.unique(np.append(labels_all, BEFORE), return_inverse=True)
    of_stack = of_stack.reshape(-1)
    lab_id = np.where(site >= 0, of_stack[np.maximum(site, 0)], of_stack[-1])
    seen = np.bincount(lab_id, minlength=len(names)) > 0  # np.unique(lab_id), by counting
    present = np.flatnonzero(seen)
    inv = (np.cumsum(seen) - 1)[lab_id]
    uniq = names[present]
    known = uniq != BEFORE
    # Rank sites by the area they cover: an allocation of d bytes at event i stays until its
    # free, so sum(d_i * (events left after i)) over a site's events is its area (bytes·events).
    area = np.bincount(inv, weights=d * (len(d) - np.arange(len(d))), minlength=len(uniq))
    area[~known] = -1
    top = [int(i) for i in np.argsort(-area, kind="stable")[:k] if known[i] and area[i] > 0]
    pick = _sample(len(rows), points)
    bands = [np.cumsum(np.where(inv == i, d, 0))[pick] for i in top]
    rest = total[pick] - (np.sum(bands, axis=0) if bands else 0)
    x_all = snap.trace["ts_ns"].to_numpy()[rows]
    x = (x_all - x_all[0]) if snap.has_time and (x_all >= 0).all() else np.arange(len(rows))
    labels = [str(uniq[i]) for i in top] + [BEFORE]
    return x[pick].astype(np.float64), labels, np.vstack([*bands, np.maximum(rest, 0)])


def band_stacks(snap: CudaSnapshot, labels: list[str], depth: int = 40) -> dict[str, list[str]]:
    """The stack behind each band of `timeline_bands` (by its label), as memory_viz shows an
    allocation's frames on hover: of the stacks named after the label, the one whose
    allocations came to the most bytes, innermost frame first, as "name (file:line)",
    without the allocator's and the interpreter's own frames, at most `depth` frames.
    A label no stack is named after (the band of every other site) is left out."""
    n = len(snap.stack_offsets) - 1
    if n <= 0 or not labels:
        return {}
    delta, owner = _event_sites(snap)
    alloc = (delta > 0) & (owner >= 0)
    size = np.bincount(owner[alloc], weights=delta[alloc], minlength=n)[:n]
    py, op = site_labels(snap)
    named = np.where(py != "", py, op)
    named = np.where(named == "", NO_STACK, named)
    names = snap.frames["name"].astype(str).to_numpy(dtype=object)
    files = snap.frames["file"].astype(str).to_numpy(dtype=object)
    lines = snap.frames["line"].to_numpy(dtype=np.int64)
    hidden = interpreter_frames(snap) | np.array(
        [n.startswith(INTERNAL_PREFIXES) for n in names], dtype=bool
    )
    out: dict[str, list[str]] = {}
    for label in labels:
        candidates = np.flatnonzero(named == label)
        if not len(candidates) or label == NO_STACK:
            continue
        best = int(candidates[np.argmax(size[candidates])])
        ids = snap.stack(best).astype(np.int64)
        ids = ids[~hidden[ids]][:depth]
        out[label] = [f"{names[f]} ({files[f]}:{lines[f]})" for f in ids.tolist()]
    return out


def _sample(n: int, points: int) -> np.ndarray:
    """Indices to draw: all when few, else evenly spread (always including the last)."""
    if n <= points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, points).astype(np.int64))


# CPython's own C frames (the eval loop, vectorcall glue) between Python frames: a dozen per
# Python call in torch's combined stacks, they bury the user's frames 100+ levels deep.
_INTERPRETER = re.compile(r"/(Objects|Python|Include|Modules|Parser)/([^/]+/)*[^/]+\.[ch]$")


def interpreter_frames(snap: CudaSnapshot) -> np.ndarray:
    """Bool per frame: a frame of CPython's interpreter itself (by its source path)."""
    files = snap.frames["file"].astype(str)
    return np.array([bool(_INTERPRETER.search(f)) for f in files], dtype=bool)


def live_tree(snap: CudaSnapshot, *, hide_interpreter: bool = True) -> CallTree:
    """Flame-graph tree of live bytes (active blocks) by stack, outermost frame at the root.

    metrics: total_ns/self_ns hold BYTES (the icicle lays out `total_ns`; `unit` says bytes),
    calls = number of blocks. CPython's interpreter frames are left out unless asked for
    (the Python and C++ frames around them stay, in order).
    """
    blk = snap.blocks
    active = is_in(blk["state"], (ACTIVE,))
    stacks = _block_stacks(snap)[active]
    sizes = blk["size_bytes"].to_numpy(dtype=np.float64)[active]
    uniq, inv = np.unique(stacks, return_inverse=True)
    weight = np.bincount(inv.reshape(-1), weights=sizes, minlength=len(uniq))
    count = np.bincount(inv.reshape(-1), minlength=len(uniq)).astype(np.float64)
    no_stack = len(snap.frames)
    names = [*snap.frames["name"].astype(str), NO_STACK]
    files = [*snap.frames["file"].astype(str), ""]
    hidden = interpreter_frames(snap) if hide_interpreter else np.zeros(len(snap.frames), bool)
    keys: list[np.ndarray] = []
    for s in uniq:
        ids = snap.stack(int(s))[::-1].astype(np.int64)
        ids = ids[~hidden[ids]]
        keys.append(ids if len(ids) else np.array([no_stack], dtype=np.int64))
    return _tree_from_paths(keys, weight, count, make_frames(names, files))


def _tree_from_paths(
    keys: list[np.ndarray], weight: np.ndarray, count: np.ndarray, frames: pd.DataFrame
) -> CallTree:
    """Merge root-first frame paths, each with a weight and a count, into a CallTree."""
    if not keys:
        empty = np.zeros(1)
        return CallTree(
            parent=np.array([-1], dtype=np.int32),
            frame=np.array([-1], dtype=np.int32),
            frames=frames.iloc[0:0],
            metrics={"total_ns": empty, "self_ns": empty, "calls": empty, "unit_bytes": empty},
        )
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    level = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)
    up = np.where(level > 0, np.arange(len(level)) - 1, -1)
    key = np.concatenate(keys)
    total = np.repeat(weight, lengths)
    leaf = np.zeros(len(level), dtype=bool)
    leaf[starts + lengths - 1] = True
    self_ = np.where(leaf, total, 0.0)
    calls = np.repeat(count, lengths)
    parent, frame, metrics = _merge(up, level, key, total, self_, calls)
    metrics["unit_bytes"] = np.ones(len(parent))
    return _tree(parent, frame, frames, metrics)
