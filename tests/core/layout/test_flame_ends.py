"""A big level keeps its running end one value in 16 (core/layout/flame_ends.py): culling it,
row by row in numpy or by the compiled step, finds exactly the rects the whole running end
finds, also for windows whose edges fall on slices' ends and for zero-length slices; and a
big layout's frames are the small layout's rect for rect."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.layout import flame, flame_cull, flame_ends, layout_kernels
from perfview.core.layout.flame import Rects


def _rects(seed: int, n: int, n_rows: int) -> Rects:
    """`n` slices on `n_rows` rows, nested and overlapping as a trace's: integer starts and
    ends (ties with a window's edges), some of zero length, a few long ones."""
    rng = np.random.default_rng(seed)
    row = np.sort(rng.integers(0, n_rows, n)).astype(np.int32)
    ts = rng.integers(0, 1_000_000, n)
    dur = np.where(rng.random(n) < 0.05, rng.integers(0, 300_000, n), rng.integers(0, 40, n))
    dur[rng.random(n) < 0.1] = 0
    return flame.layout_events(ts.astype(np.int64), dur.astype(np.int64), row)


def _windows(rects: Rects, seed: int) -> list[tuple[float, float]]:
    rng = np.random.default_rng(seed)
    edges = rng.choice(np.r_[rects.x0, rects.x1], 40)  # on slices' own edges
    out = [(float(a), float(b)) for a, b in zip(edges[:20], edges[20:], strict=True) if a <= b]
    out += [(-5.0, 2e6), (1e7, 2e7), (-10.0, -1.0), (500_000.0, 500_000.0)]
    return out


def _whole(rects: Rects) -> tuple[np.ndarray, np.ndarray]:
    bounds = flame_cull._row_bounds(rects)
    return bounds, flame_cull._end_max(rects, bounds)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("n", "n_rows"), [(5_000, 3), (20_000, 40), (3_000, 2_000)])
def test_a_sampled_level_culls_as_the_whole_running_end(
    compiled: bool, n: int, n_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if compiled:
        layout_kernels.warm()
    monkeypatch.setattr(layout_kernels, "ready", lambda n: compiled)
    rects = _rects(n, n, n_rows)
    bounds, whole = _whole(rects)
    kept = flame_ends.sampled_end_max(rects, bounds)
    assert kept.shape[1] < len(whole) or n_rows > n // 2
    # the kept values: the whole maximum at each block's last rect, x0 at its first
    first = flame_ends.first_values(bounds, flame_ends.STRIDE)
    for r in range(len(bounds) - 1):
        a, b = bounds[r], bounds[r + 1]
        block = np.arange(a, b, flame_ends.STRIDE)
        at = np.minimum(block + flame_ends.STRIDE, b) - 1
        assert np.array_equal(kept[0, first[r] : first[r + 1]], whole[at])
        assert np.array_equal(kept[1, first[r] : first[r + 1]], rects.x0[block])
    level = flame_cull._Level.restored(rects, bounds, kept)
    for x_lo, x_hi in _windows(rects, n):
        for rows in [(0, n_rows - 1), (1, 2), (n_rows // 2, n_rows // 2)]:
            expected = flame_cull._cull_index(rects, bounds, whole, x_lo, x_hi, rows)
            assert np.array_equal(level.cull(x_lo, x_hi, rows), expected), (x_lo, x_hi, rows)


def test_a_big_index_answers_as_a_small_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rects = _rects(7, 30_000, 12)
    monkeypatch.setattr(flame_ends, "SAMPLED_FROM", 10**9)
    small = flame_cull.FlameIndex(rects, raw_budget=2_000, presorted=True)
    monkeypatch.setattr(flame_ends, "SAMPLED_FROM", 1_000)
    big = flame_cull.FlameIndex(rects, raw_budget=2_000, presorted=True)
    assert big._levels[0].end_max.size < len(rects) // 4
    big.build_levels()
    small.build_levels()
    lo, hi = big.x_min, big.x_max
    for width in (1.0, 0.1, 0.01, 0.001, 1e-4):
        for centre in (0.3, 0.5, 0.77):
            c = lo + (hi - lo) * centre
            a, b = c - (hi - lo) * width / 2, c + (hi - lo) * width / 2
            got, want = big.query(a, b, 1400 / (b - a)), small.query(a, b, 1400 / (b - a))
            for name in ("x0", "x1", "row", "node", "bucket", "count"):
                assert np.array_equal(getattr(got, name), getattr(want, name)), name
    for x, row in [(float(rects.x0[100]), int(rects.row[100])), (lo - 1.0, 0), (hi / 2, 5)]:
        assert big.hit(x, row, 3.0) == small.hit(x, row, 3.0)
