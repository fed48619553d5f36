"""Is B different from A, given several runs of each? A rank test and the interval it implies.

Timings of repeated runs are skewed (a run is slowed by a busy neighbour far more often than
sped up) and come in small numbers (3-10 per side), so the statistics make no normality
assumption: the change is the Hodges-Lehmann estimate (the median of every pairwise difference
`b_j - a_i`) and its confidence interval is the one that inverts the two-sided Mann-Whitney
rank test (Bauer 1972): the k-th smallest and k-th largest pairwise differences, k taken from
the exact null distribution of the U statistic. The interval excludes 0 exactly when the test
rejects "no shift" at that level, so a verdict never disagrees with its own interval.

Why not scipy: `scipy.stats.mannwhitneyu` gives a p-value but no interval, and making the
interval and the p-value come from one distribution keeps them consistent; the exact U
distribution is a small counting recurrence (numpy, bounded by `EXACT_MAX_CELLS`), with the
normal approximation above that size. Deterministic (no resampling): a CI gate gives the
same answer on the same files every time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

METHOD = "Hodges-Lehmann shift, Mann-Whitney rank-test interval"
DEFAULT_CONFIDENCE = 0.95
# Above m*n pairs the exact U distribution gives way to its normal approximation.
EXACT_MAX_CELLS = 2500


@dataclass(frozen=True)
class Shift:
    """The change from sample A to sample B: estimate, interval and two-sided p-value.

    `low`/`high` are ±inf when the samples are too small for the asked confidence (3 runs a
    side cannot reach 95 %: see `min_runs`). `confidence` is the interval's exact coverage
    (≥ the asked level; rank intervals move in discrete steps).
    """

    estimate: float
    low: float
    high: float
    p_value: float
    confidence: float

    @property
    def spans_zero(self) -> bool:
        return self.low <= 0.0 <= self.high


@lru_cache(maxsize=64)
def _u_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= u) for u = 0..m*n under "no shift", U = #pairs with b > a (no ties)."""
    # counts[j][u]: orderings of i a's and j b's with U = u, built up one a at a time.
    counts = [np.zeros(m * n + 1) for _ in range(n + 1)]
    for j in range(n + 1):
        counts[j][0] = 1.0  # zero a's: one ordering, U = 0
    for _i in range(1, m + 1):
        new = [np.zeros(m * n + 1) for _ in range(n + 1)]
        new[0][0] = 1.0
        for j in range(1, n + 1):
            # the largest of i a's and j b's is either a b (U unchanged, j-1 b's left)
            # or an a (it beats all j b's: U grows by j).
            new[j] = new[j - 1].copy()
            new[j][j:] += counts[j][: m * n + 1 - j]
        counts = new
    dist = counts[n]
    cdf: np.ndarray = np.cumsum(dist) / dist.sum()
    return cdf


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _normal_ppf(p: float) -> float:
    """Inverse of the standard normal CDF by bisection (only called for a few levels)."""
    lo, hi = -12.0, 12.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if _normal_cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _critical_k(m: int, n: int, alpha: float) -> tuple[int, float]:
    """Largest k with P(U <= k-1) <= alpha/2, and the interval's coverage 1 - 2 P(U <= k-1)."""
    if m * n <= EXACT_MAX_CELLS:
        cdf = _u_cdf(m, n)
        k = int(np.searchsorted(cdf, alpha / 2 + 1e-12, side="right"))  # #u: cdf[u] <= alpha/2
        tail = float(cdf[k - 1]) if k > 0 else 0.0
        return k, 1.0 - 2.0 * tail
    mean, sd = m * n / 2.0, math.sqrt(m * n * (m + n + 1) / 12.0)
    k = max(0, math.floor(mean + _normal_ppf(alpha / 2) * sd))
    return k, 1.0 - alpha


def _p_value(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney p-value; ties count half (exact table, continuity otherwise)."""
    m, n = len(a), len(b)
    u = float((b[None, :] > a[:, None]).sum() + 0.5 * (b[None, :] == a[:, None]).sum())
    if m * n <= EXACT_MAX_CELLS:
        cdf = _u_cdf(m, n)
        lower = float(cdf[min(math.floor(u), m * n)])
        upper = 1.0 - (float(cdf[math.ceil(u) - 1]) if math.ceil(u) >= 1 else 0.0)
        return min(1.0, 2.0 * min(lower, upper))
    mean, sd = m * n / 2.0, math.sqrt(m * n * (m + n + 1) / 12.0)
    z = (abs(u - mean) - 0.5) / sd
    return min(1.0, 2.0 * (1.0 - _normal_cdf(max(z, 0.0))))


def coverage(m: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The coverage an interval from m and n runs actually has when `confidence` is asked."""
    return _critical_k(m, n, 1.0 - confidence)[1]


def min_runs(confidence: float = DEFAULT_CONFIDENCE) -> int:
    """Fewest runs per side (equal sides) for which an interval at `confidence` exists."""
    for n in range(1, 50):
        if _critical_k(n, n, 1.0 - confidence)[0] >= 1:
            return n
    return 50


def shift(a: np.ndarray, b: np.ndarray, confidence: float = DEFAULT_CONFIDENCE) -> Shift:
    """Hodges-Lehmann shift of `b` over `a` with its rank-test interval at `confidence`.

    Both samples need at least one value; with one value a side the interval is unbounded.
    When each side repeats one value (two or more times), the interval is that difference.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if not len(a) or not len(b):
        raise ValueError("each side needs at least one run")
    diffs = np.sort((b[None, :] - a[:, None]).ravel())
    estimate = float(np.median(diffs))
    if min(len(a), len(b)) > 1 and diffs[0] == diffs[-1]:
        # Every run of each side measured the same value (call counts, bytes of a replayed
        # run): the shift is known exactly, whatever the sample size.
        return Shift(estimate, estimate, estimate, _p_value(a, b), 1.0)
    k, coverage = _critical_k(len(a), len(b), 1.0 - confidence)
    if k < 1:
        return Shift(estimate, -math.inf, math.inf, _p_value(a, b), coverage)
    low, high = float(diffs[k - 1]), float(diffs[len(diffs) - k])
    return Shift(estimate, low, high, _p_value(a, b), coverage)


__all__ = ["DEFAULT_CONFIDENCE", "METHOD", "Shift", "coverage", "min_runs", "shift"]
