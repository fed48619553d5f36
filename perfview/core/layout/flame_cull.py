"""Culling and sub-pixel merging of `Rects` (laid out by `flame.py`), for icicles and timelines.

Its own module because it is a separate concern from the layout: the layout runs once per
document, culling and merging run every frame. Works on `Rects` sorted by (row, x0), so that a
view can ask "what is visible in [x_lo, x_hi] at this zoom?" without touching every slice:

* culling uses `searchsorted` per row, on `x0` for the right edge and on a running maximum of
  `x1` for the left edge, so a long slice that starts before `x_lo` is still found;
* slices narrower than `min_px` are merged per row into one rectangle per pixel column, which
  keeps the *count* of slices it stands for and the colour bucket covering most of its width;
* `FlameIndex` caches pre-merged levels of detail (each twice as coarse as the last), so a
  zoomed-out frame over millions of slices only touches a few hundred thousand rectangles.

Pixel columns are aligned to multiples of the pixel width in data units (not to `x_lo`), so
merged rectangles do not flicker while panning. Pure numpy.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from perfview.core.layout import flame_ends
from perfview.core.layout.flame import Rects

# One level of detail as stored: its rects, row bounds and running end maximum (`_Level`).
LevelArrays = tuple[Rects, np.ndarray, np.ndarray]


def _row_bounds(rects: Rects) -> np.ndarray:
    """offsets[r]..offsets[r+1] are the rects of row r (rows 0..max)."""
    n_rows = int(rects.row.max()) + 1 if len(rects) else 0
    return np.searchsorted(rects.row, np.arange(n_rows + 1)).astype(np.int64)


def _end_max(rects: Rects, bounds: np.ndarray) -> np.ndarray:
    """Running maximum of x1 within each row: monotone, so `searchsorted` finds the first rect
    that can still reach past x_lo even when a long slice started far to the left."""
    out = np.empty_like(rects.x1)
    for r in range(len(bounds) - 1):
        a, b = bounds[r], bounds[r + 1]
        if b > a:
            np.maximum.accumulate(rects.x1[a:b], out=out[a:b])
    return out


_ROWS_ONE_BY_ONE = 8  # up to this many rows a searchsorted per row is cheaper


def _cull_index(
    rects: Rects,
    bounds: np.ndarray,
    end_max: np.ndarray,
    x_lo: float,
    x_hi: float,
    rows: tuple[int, int] | None,
) -> np.ndarray:
    """Indexes (sorted) of rects overlapping [x_lo, x_hi] in rows [rows[0], rows[1]]."""
    n_rows = len(bounds) - 1
    r_lo, r_hi = (0, n_rows - 1) if rows is None else (max(rows[0], 0), min(rows[1], n_rows - 1))
    parts = []
    for r in range(r_lo, r_hi + 1):
        a, b = int(bounds[r]), int(bounds[r + 1])
        if a == b:
            continue
        i = a + int(np.searchsorted(end_max[a:b], x_lo, side="right"))
        j = a + int(np.searchsorted(rects.x0[a:b], x_hi, side="right"))
        if j > i:
            parts.append(np.arange(i, j))
    if not parts:
        return np.zeros(0, dtype=np.int64)
    idx = np.concatenate(parts)
    # Inside [i, j) a short slice can still end before x_lo; x0 <= x_hi holds by construction.
    keep = (rects.x1[idx] >= x_lo) & (rects.x0[idx] <= x_hi)
    return idx[keep]


@dataclass(frozen=True)
class _RowKeys:
    """A level's per-row sorted arrays laid end to end as one ascending array, so that every
    row is searched by ONE `searchsorted`: row r's value v becomes r * width + (v - base),
    `width` a power of two over twice the span, as float32 (8 bytes a rect for both keys:
    64 ranks of 160k slices keep one of these per level they draw). Rounding is monotone,
    so the keys keep each row's order and a search finds every rect the exact one does
    (rounding only adds near neighbours); the rects found are then checked exactly, so the
    answer is `_cull_index`'s to the bit."""

    end: np.ndarray  # keys of the running end maximum
    start: np.ndarray  # keys of x0
    base: float
    width: float

    @classmethod
    def of(cls, rects: Rects, end_max: np.ndarray) -> _RowKeys:
        base = float(rects.x0.min())
        span = max(float(end_max.max()) - base, 1.0)
        width = 2.0 ** (int(np.ceil(np.log2(span))) + 1)
        shift = rects.row.astype(np.float64) * width
        end = (shift + (end_max - base)).astype(np.float32)
        start = (shift + (rects.x0 - base)).astype(np.float32)
        return cls(end, start, base, width)

    def cull(
        self, rects: Rects, end_max: np.ndarray, x_lo: float, x_hi: float, r_lo: int, r_hi: int
    ) -> np.ndarray:
        shift = np.arange(r_lo, r_hi + 1, dtype=np.float64) * self.width
        # a row's keys lie in [0, width / 2) past its shift: a bound outside stays in the row
        lo, hi = -0.25 * self.width, 0.75 * self.width
        d_lo = min(max(x_lo - self.base, lo), hi)
        d_hi = min(max(x_hi - self.base, lo), hi)
        # rounded as the keys were: a key >= (<=) its bound's key when its value is
        i = np.searchsorted(self.end, (shift + d_lo).astype(np.float32), side="left")
        j = np.searchsorted(self.start, (shift + d_hi).astype(np.float32), side="right")
        lengths = np.maximum(j - i, 0)
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        before = np.cumsum(lengths) - lengths
        idx = np.repeat(i - before, lengths) + np.arange(total, dtype=np.int64)
        # exactly `_cull_index`'s set: past the running end (its i), up to x_hi (its j),
        # and not ending before x_lo
        keep = (end_max[idx] > x_lo) & (rects.x0[idx] <= x_hi) & (rects.x1[idx] >= x_lo)
        return idx[keep]


def _group_argmax(gid: np.ndarray, weight: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the position of its largest weight (first on ties). `gid` must be sorted
    (groups contiguous), which lets this run in O(n) without a sort."""
    starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
    gmax = np.maximum.reduceat(weight, starts)
    pos = np.flatnonzero(
        weight >= gmax[np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(gid)]))]
    )
    g = gid[pos]
    first = np.r_[True, g[1:] != g[:-1]]
    out = np.zeros(n_groups, dtype=np.int64)
    out[g[first]] = pos[first]
    return out


_DENSE_LIMIT = 4_000_000  # cells of the (group x bucket) weight table built without sorting


def _dominant_bucket(
    gid: np.ndarray,
    bucket: np.ndarray,
    weight: np.ndarray,
    n_groups: int,
    widest: np.ndarray,
) -> np.ndarray:
    """Per group (gid sorted), the bucket with the largest summed weight.

    Exact through a dense (group x bucket) table when that is small (the zoomed-out case:
    few groups, many slices each). With very many groups (building a fine level of detail
    over millions of slices, where groups hold one to three slices) the bucket of the widest
    member stands in: sorting (group, bucket) keys there cost seconds, and with so few
    members per group the answer is nearly always the same.
    """
    n_buckets = int(bucket.max()) + 1
    if n_groups * n_buckets > _DENSE_LIMIT:
        return np.asarray(bucket[widest], dtype=np.int32)
    key = gid * n_buckets + bucket
    table = np.bincount(key, weights=weight, minlength=n_groups * n_buckets)
    return np.asarray(np.argmax(table.reshape(n_groups, n_buckets), axis=1), dtype=np.int32)


def merge(rects: Rects, px_per_unit: float, min_px: float = 1.0) -> Rects:
    """Merge slices narrower than `min_px` pixels into one rect per (row, pixel column).

    `rects` must be sorted by (row, x0). A merged rect spans its members (min x0 .. max x1),
    counts them, takes the colour bucket holding most of their width (ties: most slices) and
    reports the node of its widest member. Wide slices pass through unchanged and split runs.
    """
    n = len(rects)
    if n == 0 or px_per_unit <= 0:
        return rects
    width = rects.x1 - rects.x0
    narrow = width * px_per_unit < min_px
    if not narrow.any():
        return rects
    col = np.floor(rects.x0 * (px_per_unit / min_px)).astype(np.int64)
    same = np.zeros(n, dtype=bool)
    same[1:] = narrow[1:] & narrow[:-1] & (rects.row[1:] == rects.row[:-1]) & (col[1:] == col[:-1])
    if not same.any():
        return rects
    starts = np.flatnonzero(~same)
    gid = np.cumsum(~same) - 1
    n_groups = len(starts)
    x0 = rects.x0[starts]
    x1 = np.maximum.reduceat(rects.x1, starts)
    count = np.add.reduceat(rects.count, starts)
    row = rects.row[starts]
    widest = _group_argmax(gid, width, n_groups)
    node = rects.node[widest].astype(np.int64)  # as the compiled merge's (level 0's: int32)
    # Zero-length slices still carry weight through their count (ties → most slices).
    weight = width + 1e-9 * (width.max() + 1.0) * rects.count
    bucket = _dominant_bucket(gid, rects.bucket.astype(np.int64), weight, n_groups, widest)
    return Rects(x0, x1, row, node, bucket, count.astype(np.int64))


def _merged(rects: Rects, px_per_unit: float, min_px: float = 1.0) -> Rects:
    """`merge(rects, px_per_unit, min_px)`, compiled for a big level, or for a frame's
    slices once numba is loaded (`layout_kernels`: the same rects, in two passes instead of
    a dozen temporaries, without the GIL; a zoomed-in frame merging ~100k slices took 12 ms
    in numpy, 2 ms so)."""
    from perfview.core.layout import layout_kernels

    if not len(rects) or px_per_unit <= 0 or not layout_kernels.ready(len(rects)):
        return merge(rects, px_per_unit, min_px)
    _by_row, compiled = layout_kernels.kernels()
    plain = layout_kernels.plain
    *arrays, groups = compiled(
        plain(rects.x0, np.float64), plain(rects.x1, np.float64), plain(rects.row, np.int32),
        plain(rects.node, np.int64), plain(rects.bucket, np.int32),
        plain(rects.count, np.int64), px_per_unit, px_per_unit / min_px, min_px, _DENSE_LIMIT,
    )  # fmt: skip
    return rects if groups < 0 else Rects(*arrays)


def merged_loaded(rects: Rects, px_per_unit: float, min_px: float = 1.0) -> Rects:
    """`merge`, compiled where numba is loaded already (the window loads it at start-up),
    numpy otherwise: it never imports numba (~1 s holding the GIL), so the GUI thread may
    call it. A job layer's frame merges every rank's slices in view at once (~6 ms of a
    60-row frame in numpy)."""
    if "numba" in sys.modules:
        return _merged(rects, px_per_unit, min_px)
    return merge(rects, px_per_unit, min_px)


def visible(
    rects: Rects,
    x_lo: float,
    x_hi: float,
    px_per_unit: float,
    min_px: float = 1.0,
    rows: tuple[int, int] | None = None,
) -> Rects:
    """Rects overlapping [x_lo, x_hi] (and rows, if given), sub-pixel slices merged.

    `rects` must be sorted by (row, x0) (`Rects.sorted()`); for repeated queries over large
    data use `FlameIndex`, which keeps the per-row bounds and levels of detail between calls.
    """
    return _Level(rects).query(x_lo, x_hi, px_per_unit, min_px, rows)


@dataclass
class _Level:
    """One level of detail: rects plus the per-row arrays culling needs. A big level keeps
    its running end maximum one value in `flame_ends.STRIDE` (`end_max` then holds those)."""

    rects: Rects
    bounds: np.ndarray = field(init=False)
    end_max: np.ndarray = field(init=False)
    _keys: _RowKeys | None = field(init=False, default=None)
    _first: np.ndarray | None = field(init=False, default=None)  # a sampled level's rows

    def __post_init__(self) -> None:
        self.bounds = _row_bounds(self.rects)
        if len(self.rects) >= flame_ends.SAMPLED_FROM:
            self.end_max = flame_ends.sampled_end_max(self.rects, self.bounds)
        else:
            self.end_max = _end_max(self.rects, self.bounds)
        self._first = self._sampled_rows()

    def _sampled_rows(self) -> np.ndarray | None:
        stride = flame_ends.stride_of(self.end_max)
        return None if stride == 1 else flame_ends.first_values(self.bounds, stride)

    def cull(self, x_lo: float, x_hi: float, rows: tuple[int, int] | None) -> np.ndarray:
        """`_cull_index` of this level; many rows at once (a job's ranks, a whole trace in
        view) through `_RowKeys`, made the first time: a searchsorted per row cost ~6 µs a
        row, the largest part of a frame with thousands of rows in view. A sampled level:
        the compiled search a row (no keys made), or row by row until that is on disk."""
        n_rows = len(self.bounds) - 1
        r_lo, r_hi = (
            (0, n_rows - 1) if rows is None else (max(rows[0], 0), min(rows[1], n_rows - 1))
        )
        if self._first is not None:
            return self._cull_sampled(self._first, x_lo, x_hi, r_lo, r_hi)
        if r_hi - r_lo + 1 <= _ROWS_ONE_BY_ONE:
            return _cull_index(self.rects, self.bounds, self.end_max, x_lo, x_hi, rows)
        if self._keys is None:
            self._keys = _RowKeys.of(self.rects, self.end_max)
        return self._keys.cull(self.rects, self.end_max, x_lo, x_hi, r_lo, r_hi)

    def _cull_sampled(
        self, first: np.ndarray, x_lo: float, x_hi: float, r_lo: int, r_hi: int
    ) -> np.ndarray:
        from perfview.core.layout import layout_kernels

        if r_hi < r_lo:
            return np.zeros(0, dtype=np.int64)
        x0, x1 = self.rects.x0, self.rects.x1
        usable = all(a.dtype == np.float64 for a in (x0, x1, self.end_max))
        if usable and self.bounds.dtype == np.int64 and layout_kernels.ready(len(x0)):
            cull = layout_kernels.cull_kernel()
            ends, starts = self.end_max[0], self.end_max[1]
            args = (x0, x1, self.bounds, ends, starts, first, flame_ends.STRIDE)
            out: np.ndarray = cull(*args, float(x_lo), float(x_hi), r_lo, r_hi)
            return out
        return flame_ends.cull_rows(
            self.rects, self.bounds, self.end_max, first, x_lo, x_hi, r_lo, r_hi
        )

    @classmethod
    def restored(cls, rects: Rects, bounds: np.ndarray, end_max: np.ndarray) -> _Level:
        """A level whose search arrays were computed before (a cached layout): nothing is
        recomputed, so restoring a 1 GB trace's chain costs no pass over its slices."""
        level = cls.__new__(cls)
        level.rects, level.bounds, level.end_max = rects, bounds, end_max
        level._keys = None
        level._first = level._sampled_rows()
        return level

    def query(
        self,
        x_lo: float,
        x_hi: float,
        px_per_unit: float,
        min_px: float,
        rows: tuple[int, int] | None,
    ) -> Rects:
        idx = self.cull(x_lo, x_hi, rows)
        return _merged(self.rects.take(idx), px_per_unit, min_px)


class FlameIndex:
    """Rects prepared for many `query` calls: per-row search arrays and cached coarser levels.

    Level k >= 1 merges sub-cell slices on a grid of `base_cell * 2**(k-1)` data units. The
    finest cell is chosen so that level 0 (the original rects) is only used when the window
    holds about `raw_budget` slices or fewer (cheap to merge per frame). Levels are built
    lazily but always as a chain, each from the one before: the first zoomed-out frame pays
    for the chain once (about 1 s for 5M slices), after which zooming in or out never stalls.
    """

    def __init__(
        self,
        rects: Rects,
        raw_budget: int = 100_000,
        direct_below: int = 50_000,
        screen_px: int = 1400,
        presorted: bool = False,
    ):
        """`presorted`: the caller vouches that `rects` are in (row, x0) order (`layout_events`
        checked it already), so the check is not paid twice."""
        self.rects = rects if presorted or rects.is_sorted() else rects.sorted()
        n = len(self.rects)
        span = float(self.rects.x1.max() - self.rects.x0.min()) if n else 0.0
        self.x_min = float(self.rects.x0.min()) if n else 0.0
        self.x_max = float(self.rects.x1.max()) if n else 0.0
        self.n_rows = int(self.rects.row.max()) + 1 if n else 0
        # Level 0 serves windows narrower than screen_px * base_cell, which hold about
        # n * screen_px * base_cell / span slices: keep that near raw_budget.
        finest_cells = int(np.clip(n * screen_px // max(raw_budget, 1), 1024, 1 << 24))
        self.base_cell = span / finest_cells if span > 0 else 0.0
        self._direct = n < direct_below
        # Beyond this level one cell spans the whole data: nothing coarser can merge more.
        self.max_level = int(np.ceil(np.log2(finest_cells))) + 1
        self._levels: list[_Level] = [_Level(self.rects)]
        self._growing = threading.Lock()

    def state(self) -> tuple[dict[str, float | int | bool], list[LevelArrays]]:
        """What `restore` needs to rebuild this index: its scalars, and the rects and search
        arrays (row bounds, running end maximum) of every level built so far."""
        scalars: dict[str, float | int | bool] = {
            "x_min": self.x_min,
            "x_max": self.x_max,
            "n_rows": self.n_rows,
            "base_cell": self.base_cell,
            "direct": self._direct,
            "max_level": self.max_level,
        }
        return scalars, [(lvl.rects, lvl.bounds, lvl.end_max) for lvl in self._levels]

    @classmethod
    def restore(
        cls,
        scalars: dict[str, float | int | bool],
        levels: list[LevelArrays],
    ) -> FlameIndex:
        """The index `state` described, without sorting, merging or scanning anything."""
        index = cls.__new__(cls)
        index.rects = levels[0][0]
        index.x_min, index.x_max = float(scalars["x_min"]), float(scalars["x_max"])
        index.n_rows, index.base_cell = int(scalars["n_rows"]), float(scalars["base_cell"])
        index._direct, index.max_level = bool(scalars["direct"]), int(scalars["max_level"])
        index._levels = [_Level.restored(*level) for level in levels]
        index._growing = threading.Lock()
        return index

    def _level(self, k: int) -> _Level:
        """Level k, building any missing finer levels first (each from the previous one).
        Under a lock: a job's tiles are drawn on a worker while the GUI thread may ask too,
        and two threads growing the chain at once would each append a level."""
        if len(self._levels) > k:
            return self._levels[k]
        with self._growing:
            while len(self._levels) <= k:
                j = len(self._levels)
                cell = self.base_cell * 2.0 ** (j - 1)
                self._levels.append(_Level(_merged(self._levels[-1].rects, 1.0 / cell)))
        return self._levels[k]

    def build_levels(self, up_to: int | None = None) -> int:
        """Build the level chain now (up to `up_to`, default all); returns how many exist.

        For a worker thread: the first zoomed-out frame would otherwise pay for the chain on
        the GUI thread (a few hundred ms per million slices). Coarse levels are small, so
        the whole chain costs little more than the levels a zoomed-out frame needs anyway.
        """
        last = self.max_level if up_to is None else min(up_to, self.max_level)
        if not self._direct and self.base_cell > 0 and len(self.rects):
            self._level(last)
        return len(self._levels)

    def level_for(self, px_per_unit: float, min_px: float = 1.0) -> int:
        """Index of the level a query at this zoom uses (0 = the original rects)."""
        if self._direct or self.base_cell <= 0 or px_per_unit <= 0:
            return 0
        pixel = min_px / px_per_unit
        if pixel < self.base_cell:
            return 0
        return min(1 + int(np.floor(np.log2(pixel / self.base_cell))), self.max_level)

    def query(
        self,
        x_lo: float,
        x_hi: float,
        px_per_unit: float,
        min_px: float = 1.0,
        rows: tuple[int, int] | None = None,
    ) -> Rects:
        """Visible, merged rects for the window [x_lo, x_hi] drawn at `px_per_unit`.

        Zoomed out (level k > 0) the answer comes from level k + 1, whose cell is between one
        and two pixels: already merged, so it is only culled. That skips the per-frame merge
        (the costliest step) at the price of narrow slices snapping to <= 2-px cells.
        """
        if not len(self.rects):
            return self.rects
        k = self.level_for(px_per_unit, min_px)
        if k == 0:
            return self._levels[0].query(x_lo, x_hi, px_per_unit, min_px, rows)
        level = self._level(min(k + 1, self.max_level))
        return level.rects.take(level.cull(x_lo, x_hi, rows))

    def culled(
        self,
        x_lo: float,
        x_hi: float,
        px_per_unit: float,
        min_px: float = 1.0,
        rows: tuple[int, int] | None = None,
    ) -> tuple[Rects, np.ndarray, bool]:
        """What `query` would merge, unmerged: the level's rects, the positions of those in
        the window, and whether they still need `merge` at `min_px` (level 0). For a caller
        that merges many indexes' rects together (a job's ranks, in pixels) in one call."""
        k = self.level_for(px_per_unit, min_px)
        if k == 0 or not len(self.rects):
            return self.rects, self._levels[0].cull(x_lo, x_hi, rows), True
        level = self._level(min(k + 1, self.max_level))
        return level.rects, level.cull(x_lo, x_hi, rows), False

    def hit(self, x: float, row: int, tolerance: float = 0.0) -> int:
        """Position (into `self.rects`) of the narrowest rect on `row` containing x ± tolerance,
        preferring exact containment; -1 when none is that close."""
        if row < 0 or row >= self.n_rows:
            return -1
        idx = self._levels[0].cull(x - tolerance, x + tolerance, (row, row))
        if not len(idx):
            return -1
        x0, x1 = self.rects.x0[idx], self.rects.x1[idx]
        dist = np.maximum(np.maximum(x0 - x, x - x1), 0.0)
        best = np.lexsort((x1 - x0, dist))[0]
        return int(idx[best])

    def position_of(self, node: int) -> int:
        """Position of the rect showing `node` in `self.rects`, -1 if absent."""
        hits = np.flatnonzero(self.rects.node == node)
        return int(hits[0]) if len(hits) else -1


__all__ = ["FlameIndex", "merge", "merged_loaded", "visible"]
