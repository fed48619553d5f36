"""The pstats tree's walk runs on Python lists (issue 20: 0.19 -> 0.07 s at 10k functions)
and must add up exactly as numpy did: `np_sum` equals `np.sum` to the bit for every length
(numpy adds short arrays in order and longer ones pairwise, which gives other last bits)."""

from __future__ import annotations

import numpy as np

from perfview.core.analysis.pstats_walk import np_sum


def testnp_sum_equals_numpy_to_the_bit() -> None:
    rng = np.random.default_rng(20)
    for n in [*range(0, 40), 127, 128, 129, 300, 1000]:
        for _ in range(30):
            values = (rng.random(n) * 10.0 ** rng.integers(0, 12, n)).tolist()
            assert np_sum(values) == float(np.sum(np.asarray(values)))


def test_in_order_sums_differ_from_numpy_beyond_seven_values() -> None:
    """Why `np_sum` hands long lists to numpy: a plain left-to-right sum is not it."""
    rng = np.random.default_rng(7)
    differ = 0
    for _ in range(200):
        values = (rng.random(40) * 10.0 ** rng.integers(0, 12, 40)).tolist()
        plain = 0.0
        for v in values:
            plain += v
        differ += plain != float(np.sum(np.asarray(values)))
    assert differ > 0
