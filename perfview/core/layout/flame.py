"""Rectangle layout for icicles and timelines. Pure numpy.

Views draw *rows* of rectangles: an icicle row is a call depth, a timeline row is one depth of
one track. Everything here produces `Rects`, a struct of arrays sorted by (row, x0): `layout`
for a merged call tree, `layout_events` for time-ordered slices. Culling them to a window and
merging sub-pixel slices (every frame) is in `flame_cull.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from perfview.core.analysis.calltree import node_depths
from perfview.core.model import CallTree

_F = np.float64
_SMALL = 1 << 31  # up to this many slices a slice's event row fits an int32


def ones(n: int) -> np.ndarray:
    """`n` counts of one, as a read-only view of a single int64 (no bytes per rect): level 0
    of a layout stands for one slice per rect, 8 bytes a slice it need not keep."""
    return np.broadcast_to(np.ones(1, dtype=np.int64), (n,))


def node_dtype(n: int) -> type[np.signedinteger[Any]]:
    """The event rows of `n` slices: int32 while they fit (4 bytes a slice less than int64
    on level 0, which holds one rect per slice), else int64."""
    return np.int32 if n < _SMALL else np.int64


def bucket_dtype(buckets: np.ndarray | None) -> type[np.integer[Any]]:
    """Colour buckets as one byte when every one is in 0..255 (the palette has 24), else
    int32: 3 bytes a slice less on level 0."""
    if buckets is None or not len(buckets):
        return np.uint8
    b = np.asarray(buckets)
    return np.uint8 if int(b.min()) >= 0 and int(b.max()) < 256 else np.int32


@dataclass(frozen=True)
class Rects:
    """Rectangles as parallel arrays. `count` is how many original slices each one stands for.

    `node` is the tree node (icicle) or event row (timeline) the rectangle shows; for a merged
    rectangle it is the widest slice it holds (what a tooltip or a click reports).
    """

    x0: np.ndarray
    x1: np.ndarray
    row: np.ndarray
    node: np.ndarray
    bucket: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.x0)

    def take(self, idx: np.ndarray) -> Rects:
        """A subset (or reordering) of the rectangles."""
        return Rects(
            self.x0[idx],
            self.x1[idx],
            self.row[idx],
            self.node[idx],
            self.bucket[idx],
            self.count[idx],
        )

    @staticmethod
    def make(
        x0: np.ndarray,
        x1: np.ndarray,
        row: np.ndarray,
        node: np.ndarray | None = None,
        bucket: np.ndarray | None = None,
        count: np.ndarray | None = None,
    ) -> Rects:
        """Build with the canonical dtypes; missing node/bucket/count get defaults."""
        n = len(x0)
        return Rects(
            np.asarray(x0, dtype=_F),
            np.asarray(x1, dtype=_F),
            np.asarray(row, dtype=np.int32),
            np.arange(n, dtype=np.int64) if node is None else np.asarray(node, dtype=np.int64),
            np.zeros(n, np.int32) if bucket is None else np.asarray(bucket, dtype=np.int32),
            ones(n) if count is None else np.asarray(count, dtype=np.int64),
        )

    @staticmethod
    def empty() -> Rects:
        z = np.zeros(0)
        return Rects.make(z, z, z)

    def sorted(self) -> Rects:
        """Sorted by (row, x0, -x1): the order culling and merging rely on."""
        order = np.lexsort((-self.x1, self.x0, self.row))
        return self.take(order)

    def is_sorted(self) -> bool:
        """Whether already in the (row, x0) order culling relies on (cheaper than sorting)."""
        if len(self) < 2:
            return True
        row_step = np.diff(self.row)
        if (row_step < 0).any():
            return False
        same_row = row_step == 0
        return bool((np.diff(self.x0)[same_row] >= 0).all())


# ---------------------------------------------------------------------------------------------
# layouts


def layout(
    tree: CallTree,
    metric: str = "total_ns",
    buckets: np.ndarray | None = None,
) -> Rects:
    """Merged icicle: x = cumulative `metric` of earlier siblings inside the parent's span.

    The root spans [0, metric[root]]; row = depth. Siblings are ordered heaviest first, so the
    big callees sit at the left. When children add up to more than their parent (estimated
    cProfile trees, recursion) they are scaled down to fit, so no child pokes out of its parent.
    `buckets` gives each node's colour (e.g. `colors.bucket_codes` of its frame name).
    """
    n = len(tree)
    if n == 0:
        return Rects.empty()
    total = np.maximum(np.asarray(tree.metrics[metric], dtype=_F), 0.0)
    parent = np.asarray(tree.parent, dtype=np.int64)
    depth = np.asarray(node_depths(tree), dtype=np.int64)

    kids = np.arange(1, n, dtype=np.int64)
    kid_parent = parent[1:]
    # Heaviest first inside each parent; a stable lexsort keeps ties in node order.
    order = kids[np.lexsort((-total[1:], kid_parent))]
    child_sum = np.bincount(kid_parent, weights=total[1:], minlength=n)
    fit = np.ones(n)
    over = child_sum > total
    fit[over] = total[over] / child_sum[over]  # child_sum > total >= 0, so never 0

    width = np.zeros(n)
    x0 = np.zeros(n)
    width[0] = total[0]
    scale = np.ones(n)  # width / total of each node (for scaling its children)
    # Exclusive running sum of raw totals among ordered siblings (per parent group).
    ordered_total = total[order]
    csum = np.cumsum(ordered_total) - ordered_total
    grp_parent = parent[order]
    starts = np.r_[True, grp_parent[1:] != grp_parent[:-1]] if len(order) else np.zeros(0, bool)
    grp_first = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    offset_raw = np.empty(n)
    offset_raw[order] = csum - csum[grp_first]

    by_depth = np.argsort(depth, kind="stable")
    level_edges = np.searchsorted(depth[by_depth], np.arange(depth.max() + 2))
    for d in range(1, int(depth.max()) + 1):
        nodes = by_depth[level_edges[d] : level_edges[d + 1]]
        p = parent[nodes]
        k = scale[p] * fit[p]
        width[nodes] = total[nodes] * k
        x0[nodes] = x0[p] + offset_raw[nodes] * k
        scale[nodes] = k
    bucket = np.zeros(n, np.int32) if buckets is None else buckets
    return Rects.make(x0, x0 + width, depth, np.arange(n), bucket).sorted()


def layout_events(
    ts: np.ndarray,
    dur: np.ndarray,
    row: np.ndarray,
    buckets: np.ndarray | None = None,
    node: np.ndarray | None = None,
) -> Rects:
    """Time-ordered rectangles: [ts, ts + dur] on `row` (track row or depth), sorted for culling.

    `node` defaults to the position in the inputs, i.e. the event row when whole columns of
    `Timeline.events` are passed.
    """
    row32 = np.asarray(row, dtype=np.int32)
    n = len(row32)
    # level 0 holds one rect per slice: its event rows int32 and colour buckets one byte
    # where they fit, and counts of one that take no memory (`ones`)
    n_nodes = n if node is None or not len(node) else int(np.max(node)) + 1
    ndt, bdt = node_dtype(n_nodes), bucket_dtype(buckets)
    compiled = _by_row_compiled(ts, dur, row32, buckets, node, ndt, bdt)
    if compiled is not None:
        return compiled
    # Timeline events come sorted by (lane, ts): a stable sort on the row alone then gives
    # (row, ts) order, ~50x faster than the full lexsort on millions of slices. Each column
    # is gathered in that order straight from the inputs (building the rects first and
    # reordering them after cost twice the passes: 0.3 s of a 1 GB trace's layout).
    order = np.argsort(row32, kind="stable")
    x0 = np.asarray(ts)[order].astype(_F)
    by_row = Rects(
        x0,
        x0 + np.asarray(dur)[order],
        row32[order],
        (order if node is None else np.asarray(node)[order]).astype(ndt),
        np.zeros(n, bdt) if buckets is None else np.asarray(buckets)[order].astype(bdt),
        ones(n),
    )
    if by_row.is_sorted():
        return by_row
    x1 = np.asarray(ts, dtype=_F) + np.asarray(dur, dtype=_F)
    full = Rects.make(ts, x1, row, node, buckets).sorted()
    return Rects(
        full.x0, full.x1, full.row, full.node.astype(ndt), full.bucket.astype(bdt), ones(n)
    )


def _by_row_compiled(
    ts: np.ndarray,
    dur: np.ndarray,
    row32: np.ndarray,
    buckets: np.ndarray | None,
    node: np.ndarray | None,
    node_type: type[np.signedinteger[Any]],
    bucket_type: type[np.integer[Any]],
) -> Rects | None:
    """`layout_events` by the compiled counting sort (`layout_kernels`), for a big timeline's
    int64 columns already in (row, ts) order per row, into int32 event rows and one-byte
    buckets (the types `layout_kernels.warm` compiles); None: take the numpy way."""
    from perfview.core.layout import layout_kernels

    ts, dur = np.asarray(ts), np.asarray(dur)
    if (
        ts.dtype != np.int64
        or dur.dtype != np.int64
        or node_type is not np.int32
        or bucket_type is not np.uint8
        or not layout_kernels.ready(len(row32))
    ):
        return None
    by_row, _merge = layout_kernels.kernels()
    plain = layout_kernels.plain
    bucket = np.zeros(len(row32), np.uint8) if buckets is None else buckets
    x0, x1, row, nodes, bucket, ordered = by_row(
        plain(ts, np.int64),
        plain(dur, np.int64),
        plain(row32, np.int32),
        plain(bucket, np.uint8),
        np.zeros(0, np.int32) if node is None else plain(node, np.int32),
    )
    if ordered != 1:
        return None
    return Rects(x0, x1, row, nodes, bucket, ones(len(x0)))


__all__ = ["Rects", "bucket_dtype", "layout", "layout_events", "node_dtype", "ones"]
