"""Is B different from A, given several runs of each? A rank test and the interval it implies.

Timings of repeated runs are skewed (a run is slowed by a busy neighbour far more often than
sped up) and come in small numbers (3-10 per side), so the statistics make no normality
assumption: the change is the Hodges-Lehmann estimate (the median of every pairwise difference
`b_j - a_i`) and its confidence interval is the one that inverts the two-sided Mann-Whitney
rank test (Bauer 1972): the k-th smallest and k-th largest pairwise differences, k taken from
the exact null distribution of the U statistic. The interval excludes 0 exactly when the test
rejects "no shift" at that level, so a verdict never disagrees with its own interval.

Why not scipy for the rank test: `scipy.stats.mannwhitneyu` gives a p-value but no interval,
and making the interval and the p-value come from one distribution keeps them consistent; the
exact U distribution is a small counting recurrence (numpy, bounded by `EXACT_MAX_CELLS`), with
the normal approximation above that size. Deterministic (no resampling): a CI gate gives the
same answer on the same files every time.

Few runs: a rank test's p-value cannot go below 2 / C(m+n, m) (0.1 at 3 runs a side, 0.008 at
5), so once the rows of a profile are corrected for being tested together (`fdr_level`: the
Benjamini-Hochberg level α·R/rows), it can flag nothing. `choose_method` then takes the Welch
t-test on log values (`LOG_T`): the change is the ratio of the geometric means, its interval
the Welch interval of the mean log difference (`scipy.stats.ttest_ind`), exponentiated. Logs
because times are skewed and multiplicative (a loaded machine scales them); Welch because the
two sides' spreads differ. A row with a zero or negative value (absent from a run) takes the
Welch test on the values themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

RANK = "Hodges-Lehmann shift, Mann-Whitney rank-test interval"
LOG_T = "ratio of geometric means, Welch t-test on log values"
METHOD = RANK  # the method with enough runs (see `choose_method`)
METHODS = (RANK, LOG_T)
CORRECTION = "Benjamini-Hochberg"
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


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p-value the rank test can give with m and n runs (no ties)."""
    return min(1.0, 2.0 / math.comb(m + n, m))


def choose_method(m: int, n: int, alpha: float) -> str:
    """The rank test when it can reach `alpha` (a row's corrected level) with m and n runs,
    else the Welch t-test on log values (see the module docstring)."""
    return RANK if smallest_p(m, n) <= alpha * (1 + 1e-9) else LOG_T


def fdr_level(p_values: np.ndarray, alpha: float) -> tuple[int, float]:
    """Benjamini-Hochberg at false discovery rate `alpha` over the rows' p-values: the number
    of rows it selects (R) and the per-row level α·max(R, 1)/rows.

    A row is selected exactly when its p-value is at most that level, so intervals at
    1 − that level (Benjamini & Yekutieli's false-coverage-rate intervals) exclude 0 exactly
    for the selected rows: the verdict never disagrees with its interval. When no row differs
    at all (an A/A comparison), the chance of any row being flagged is at most `alpha`.
    """
    p = np.sort(np.asarray(p_values, dtype=np.float64))
    m = len(p)
    if not m:
        return 0, alpha
    ok = np.nonzero(p <= alpha * np.arange(1, m + 1) / m)[0]
    selected = int(ok[-1]) + 1 if len(ok) else 0
    return selected, alpha * max(selected, 1) / m


def _exact(a: np.ndarray, b: np.ndarray) -> Shift | None:
    """Every run of each side measured the same value (call counts, bytes of a replayed run):
    the shift is known exactly, whatever the sample size."""
    diffs = b[None, :] - a[:, None]
    if min(len(a), len(b)) > 1 and diffs.min() == diffs.max():
        d = float(diffs.flat[0])
        return Shift(d, d, d, 0.0 if d else 1.0, 1.0)
    return None


def is_exact(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the shift of `b` over `a` is known without sampling error (see `_exact`)."""
    return _exact(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)) is not None


def p_value(a: np.ndarray, b: np.ndarray, method: str = RANK) -> float:
    """The two-sided p-value of "no shift" by `method` (1 when a side has too few values)."""
    return shift(a, b, DEFAULT_CONFIDENCE, method).p_value


def shift(
    a: np.ndarray, b: np.ndarray, confidence: float = DEFAULT_CONFIDENCE, method: str = RANK
) -> Shift:
    """The shift of `b` over `a` with its interval at `confidence`, by `method` (RANK: the
    Hodges-Lehmann shift and its rank-test interval; LOG_T: see `_log_t`).

    Both samples need at least one value; with one value a side the interval is unbounded.
    When each side repeats one value (two or more times), the interval is that difference.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if not len(a) or not len(b):
        raise ValueError("each side needs at least one run")
    exact = _exact(a, b)
    if exact is not None:
        return exact
    if method == LOG_T:
        return _log_t(a, b, confidence)
    diffs = np.sort((b[None, :] - a[:, None]).ravel())
    estimate = float(np.median(diffs))
    k, coverage = _critical_k(len(a), len(b), 1.0 - confidence)
    if k < 1:
        return Shift(estimate, -math.inf, math.inf, _p_value(a, b), coverage)
    low, high = float(diffs[k - 1]), float(diffs[len(diffs) - k])
    return Shift(estimate, low, high, _p_value(a, b), coverage)


def log_t_rows(
    a: np.ndarray, b: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_log_t` over the rows of two 2-D arrays at once (rows × runs, two runs or more a
    side): estimate, low, high and p-value per row. One scipy call for a profile's thousands
    of rows (5,000 rows: 5 s one by one)."""
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    logs = np.asarray((a > 0).all(axis=1) & (b > 0).all(axis=1), dtype=bool)
    xa = np.where(logs[:, None], np.log(np.where(a > 0, a, 1.0)), a)
    xb = np.where(logs[:, None], np.log(np.where(b > 0, b, 1.0)), b)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = stats.ttest_ind(xb, xa, axis=1, equal_var=False)
        ci = result.confidence_interval(confidence)
    mean = xb.mean(axis=1) - xa.mean(axis=1)
    p = np.asarray(result.pvalue, dtype=np.float64)
    low = np.asarray(ci.low, dtype=np.float64)
    high = np.asarray(ci.high, dtype=np.float64)
    still = ~np.isfinite(p)  # neither side varies
    p[still], low[still], high[still] = 1.0, mean[still], mean[still]
    base = np.median(a, axis=1)
    with np.errstate(over="ignore"):  # a ratio beyond e^709: an unbounded interval
        est = np.where(logs, np.expm1(mean) * base, mean)
        low = np.where(logs, np.expm1(low) * base, low)
        high = np.where(logs, np.expm1(high) * base, high)
    return est, low, high, p


def _log_t(a: np.ndarray, b: np.ndarray, confidence: float) -> Shift:
    """Welch's t-test on log values: the ratio of B's geometric mean to A's, and its interval,
    as a shift relative to A's median (a ratio r is (r − 1) · median A). Values that are not
    all positive take the test on the values (difference of the means)."""
    from scipy import stats  # a compare-only import (0.3 s): not on the viewer's start path

    if min(len(a), len(b)) < 2:
        return Shift(float(np.median(b) - np.median(a)), -math.inf, math.inf, 1.0, confidence)
    logs = bool((a > 0).all() and (b > 0).all())
    xa, xb = (np.log(a), np.log(b)) if logs else (a, b)
    result = stats.ttest_ind(xb, xa, equal_var=False)
    ci = result.confidence_interval(confidence)
    mean = float(xb.mean() - xa.mean())
    p = float(result.pvalue)
    low, high = float(ci.low), float(ci.high)
    if not math.isfinite(p):  # neither side varies (equal means: `_exact` took unequal ones)
        p, low, high = 1.0, mean, mean
    if logs:
        base = float(np.median(a))
        with np.errstate(over="ignore"):  # a ratio beyond e^709: an unbounded interval
            mean, low, high = (float(np.expm1(v)) * base for v in (mean, low, high))
    return Shift(mean, low, high, p, confidence)


__all__ = [
    "CORRECTION",
    "DEFAULT_CONFIDENCE",
    "LOG_T",
    "METHOD",
    "METHODS",
    "RANK",
    "Shift",
    "choose_method",
    "coverage",
    "fdr_level",
    "is_exact",
    "log_t_rows",
    "min_runs",
    "p_value",
    "shift",
    "smallest_p",
]
