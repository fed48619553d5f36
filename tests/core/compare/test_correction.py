"""Rows tested together (Benjamini-Hochberg), and the small-sample method (Welch on logs).

Real runs: tests/data/diff/runs (scripts/fixtures/make_runs_fixtures.py): in `b_*` the function
`parse` does 30 % more work, in `c_*` `checksum` (3 % of the run) does; `a_6`..`a_10` are more
runs of the baseline. CPU time, each function's work varied ±3 % a run.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from perfview.core.compare import runs, significance
from perfview.core.model import Bundle
from perfview.documents import OpenOptions, open_document

RUNS = Path(__file__).resolve().parents[2] / "data" / "diff" / "runs"


def _side(variant: str, numbers: range) -> list[Bundle]:
    return [open_document(RUNS / f"{variant}_{i}.prof", options=OpenOptions()).bundle
            for i in numbers]  # fmt: skip


def _flagged(c: runs.RunsComparison) -> list[tuple[str, str]]:
    t = c.table[c.table["verdict"].isin(["slower", "faster"])]
    return list(zip(t["function"], t["verdict"], strict=True))


# ------------------------------------------------------------------ the statistics


def test_benjamini_hochberg_level_and_q_values() -> None:
    # Benjamini & Hochberg 1995: the largest k with p_(k) <= k α / m; all p <= that are in.
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216])
    selected, level = significance.fdr_level(p, 0.05)
    assert selected == 2  # 0.039 > 3·0.005; 0.008 <= 2·0.005
    assert level == pytest.approx(0.01)
    assert significance.fdr_level(np.array([0.2, 0.5]), 0.05) == (0, 0.025)
    assert significance.fdr_level(np.array([]), 0.05) == (0, 0.05)
    q = runs._bh_q(p)
    assert q[0] == pytest.approx(0.01)
    assert q[1] == pytest.approx(0.04)
    assert list(q[2:5]) == pytest.approx([0.084] * 3)  # min over j >= i of p_(j) m / j
    order = np.argsort(p)
    by_hand = p[order] * len(p) / np.arange(1, len(p) + 1)
    assert q[order] == pytest.approx(np.minimum.accumulate(by_hand[::-1])[::-1])


def test_the_method_is_the_rank_test_only_where_it_can_reach_the_level() -> None:
    assert significance.smallest_p(3, 3) == pytest.approx(0.1)
    assert significance.smallest_p(5, 5) == pytest.approx(2 / 252)
    assert significance.choose_method(3, 3, 0.05) == significance.LOG_T
    assert significance.choose_method(4, 4, 0.05) == significance.RANK  # 2/70 = 0.029
    assert significance.choose_method(5, 5, 0.05 / 7) == significance.LOG_T  # 0.0079 > 0.0071
    assert significance.choose_method(10, 5, 0.05 / 18) == significance.RANK  # 2/3003


def test_welch_on_logs_agrees_with_scipy() -> None:
    a = np.array([100.0, 104.0, 98.0])
    b = np.array([131.0, 127.0, 135.0])
    s = significance.shift(a, b, 0.95, significance.LOG_T)
    ref = stats.ttest_ind(np.log(b), np.log(a), equal_var=False)
    ci = ref.confidence_interval(0.95)
    base = float(np.median(a))
    assert s.p_value == pytest.approx(ref.pvalue)
    assert s.estimate == pytest.approx((math.exp(np.log(b).mean() - np.log(a).mean()) - 1) * base)
    assert s.low == pytest.approx((math.exp(ci.low) - 1) * base)
    assert s.high == pytest.approx((math.exp(ci.high) - 1) * base)
    assert s.p_value < 0.01  # what a rank test cannot give at 3 a side (>= 0.1)
    # a zero (a row absent from a run): the test on the values themselves
    z = significance.shift(np.array([0.0, 5.0, 6.0]), np.array([9.0, 10.0, 11.0]), 0.95,
                           significance.LOG_T)  # fmt: skip
    plain = stats.ttest_ind([9.0, 10.0, 11.0], [0.0, 5.0, 6.0], equal_var=False)
    assert z.p_value == pytest.approx(plain.pvalue)
    assert z.estimate == pytest.approx(10.0 - 11.0 / 3)
    # one value a side: no interval
    one = significance.shift(np.array([1.0]), np.array([2.0]), 0.95, significance.LOG_T)
    assert math.isinf(one.low)
    assert math.isinf(one.high)


def test_a_known_shift_is_not_tested() -> None:
    cols, corr = runs.shift_columns(
        [np.array([3.0, 3.0]), np.array([1.0, 2.0, 3.0])],
        [np.array([4.0, 4.0]), np.array([1.5, 2.0, 2.5])], 0.95,
    )  # fmt: skip
    assert corr.tested == 1  # call counts that moved 3 → 4 in every run are known exactly
    assert cols["verdict"][0] == "slower"
    assert math.isnan(cols["q_value"][0])


def test_verdicts_agree_with_their_intervals_and_the_selection() -> None:
    rng = np.random.default_rng(7)
    a = [rng.lognormal(3, 0.05, 5) for _ in range(30)]
    b = [x * rng.lognormal(0, 0.05, 5) for x in a]
    b[3] = a[3] * 1.5
    b[11] = a[11] * 1.2
    cols, corr = runs.shift_columns(a, b, 0.95)
    flagged = set(np.nonzero(np.isin(cols["verdict"], ["slower", "faster"]))[0])
    assert flagged == {3, 11}
    assert corr.selected == 2
    assert corr.level == pytest.approx(1 - 0.05 * 2 / 30)
    assert flagged == set(np.nonzero(cols["q_value"] <= 0.05)[0])


# ------------------------------------------------------------------ recorded runs


@pytest.fixture(scope="module")
def sides() -> dict[str, list[Bundle]]:
    return {"a": _side("a", range(1, 11)), "b": _side("b", range(1, 6)),
            "c": _side("c", range(1, 6))}  # fmt: skip


def test_three_runs_a_side_find_the_slowed_function(sides: dict[str, list[Bundle]]) -> None:
    a = sides["a"][:3]
    c = runs.diff_runs(a, sides["b"][:3])
    assert c.method == significance.LOG_T
    assert _flagged(c) == [("parse", "slower")]
    row = c.table.iloc[0]
    assert 15 < row["change_pct"] < 40  # 30 % more work
    small = runs.diff_runs(a, sides["c"][:3])  # checksum: 3 % of the run
    assert _flagged(small) == [("checksum", "slower")]


def test_three_runs_a_side_a_against_a_flags_nothing(sides: dict[str, list[Bundle]]) -> None:
    a = sides["a"]
    for x, y in ((a[:3], a[5:8]), (a[:3], a[3:6]), (a[3:6], a[6:9])):
        c = runs.diff_runs(x, y)
        assert _flagged(c) == [], [b.path.name for b in y]
        assert c.correction is not None
        assert c.correction.selected == 0


def test_another_confidence_recomputes_from_the_kept_samples(
    sides: dict[str, list[Bundle]],
) -> None:
    c = runs.diff_runs(sides["a"][:5], sides["b"])
    again = runs.with_confidence(c, 0.99)
    fresh = runs.diff_runs(sides["a"][:5], sides["b"], confidence=0.99)
    assert again.confidence == 0.99
    assert list(again.table["function"]) == list(c.table["function"])  # order kept
    merged = again.table.merge(fresh.table, on=["function", "file", "line"])
    assert (merged["verdict_x"] == merged["verdict_y"]).all()
    assert np.allclose(merged["ci_low_x"], merged["ci_low_y"])
    assert again.total.low_pct == pytest.approx(fresh.total.low_pct)
    assert again.correction == fresh.correction
    # 6 rows tested: the rank test reaches 0.05/6 with 5 runs a side, not 0.01/6
    assert c.method == significance.RANK
    assert again.method == significance.LOG_T


def test_welch_over_many_rows_at_once_is_the_row_by_row_test() -> None:
    rng = np.random.default_rng(3)
    a = rng.lognormal(2, 0.2, (50, 4))
    b = a * rng.lognormal(0.1, 0.2, (50, 4))
    b[7] = [0.0, 3.0, 4.0, 5.0]  # a zero: the values themselves
    est, low, high, p = significance.log_t_rows(a, b, 0.99)
    for r in (0, 7, 31):
        s = significance.shift(a[r], b[r], 0.99, significance.LOG_T)
        assert (est[r], low[r], high[r], p[r]) == pytest.approx(
            (s.estimate, s.low, s.high, s.p_value)
        )
