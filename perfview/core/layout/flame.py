"""Rectangle layout for icicles and timelines. Pure numpy.

Views draw *rows* of rectangles: an icicle row is a call depth, a timeline row is one depth of
one track. Everything here produces `Rects`, a struct of arrays sorted by (row, x0): `layout`
for a merged call tree, `layout_events` for time-ordered slices. Culling them to a window and
merging sub-pixel slices (every frame) is in `flame_cull.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfview.core.analysis.calltree import node_depths
from perfview.core.model import CallTree

_F = np.float64


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
            np.ones(n, np.int64) if count is None else np.asarray(count, dtype=np.int64),
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
    compiled = _by_row_compiled(ts, dur, row32, buckets, node)
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
        order if node is None else np.asarray(node, dtype=np.int64)[order],
        np.zeros(len(order), np.int32)
        if buckets is None
        else np.asarray(buckets, dtype=np.int32)[order],
        np.ones(len(order), np.int64),
    )
    if by_row.is_sorted():
        return by_row
    x1 = np.asarray(ts, dtype=_F) + np.asarray(dur, dtype=_F)
    return Rects.make(ts, x1, row, node, buckets).sorted()


def _by_row_compiled(
    ts: np.ndarray,
    dur: np.ndarray,
    row32: np.ndarray,
    buckets: np.ndarray | None,
    node: np.ndarray | None,
) -> Rects | None:
    """`layout_events` by the compiled counting sort (`layout_kernels`), for a big timeline's
    int64 columns already in (row, ts) order per row; None: take the numpy way."""
    from perfview.core.layout import layout_kernels

    ts, dur = np.asarray(ts), np.asarray(dur)
    if ts.dtype != np.int64 or dur.dtype != np.int64 or not layout_kernels.ready(len(row32)):
        return None
    by_row, _merge = layout_kernels.kernels()
    plain = layout_kernels.plain
    bucket = np.zeros(len(row32), np.int32) if buckets is None else buckets
    x0, x1, row, nodes, bucket, ordered = by_row(
        plain(ts, np.int64),
        plain(dur, np.int64),
        plain(row32, np.int32),
        plain(bucket, np.int32),
        np.zeros(0, np.int64) if node is None else plain(node, np.int64),
    )
    if ordered != 1:
        return None
    return Rects(x0, x1, row, nodes, bucket, np.ones(len(x0), np.int64))


__all__ = ["Rects", "layout", "layout_events"]
