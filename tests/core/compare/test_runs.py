"""Several runs per side: the rank statistics, and the verdicts on recorded cProfile runs.

The fixtures (tests/data/diff/runs, from scripts/fixtures/make_runs_fixtures.py) are 5 runs per
side of one pipeline; each function's work varies ±3 % from run to run. In `b_*` the function
`parse` (a quarter of the run) does 30 % more work, in `c_*` the function `checksum` (3 % of
the run);
`a_6`..`a_10` are more runs of the baseline, recorded interleaved with the others.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from perfview.core.compare import runs, significance
from perfview.core.model import Bundle
from perfview.documents import OpenOptions, open_document

RUNS = Path(__file__).resolve().parents[2] / "data" / "diff" / "runs"
TRACE = Path(__file__).resolve().parents[2] / "data" / "torch_cpu_small.pt.trace.json.gz"
MPROF = Path(__file__).resolve().parents[2] / "data" / "diff"


def _open(path: Path) -> Bundle:
    bundle: Bundle = open_document(path, options=OpenOptions()).bundle
    return bundle


def _side(variant: str, numbers: range) -> list[Bundle]:
    return [_open(RUNS / f"{variant}_{i}.prof") for i in numbers]


@pytest.fixture(scope="module")
def baseline() -> list[Bundle]:
    return _side("a", range(1, 6))


# ------------------------------------------------------------------ the statistics


def test_exact_rank_distribution_of_three_against_three() -> None:
    # 20 equally likely orderings; one has every b below every a.
    cdf = significance._u_cdf(3, 3)
    assert cdf[0] == pytest.approx(1 / 20)
    assert cdf[-1] == pytest.approx(1.0)
    assert significance.min_runs(0.95) == 4  # 3 a side: the best two-sided p is 0.1
    assert significance.min_runs(0.90) == 3


def test_clean_shift_is_estimated_and_significant() -> None:
    a = np.array([10.0, 11.0, 12.0, 13.0, 14.0])
    s = significance.shift(a, a + 5.0)
    assert s.estimate == 5.0
    assert 0 < s.low <= 5.0 <= s.high
    assert s.p_value == pytest.approx(2 / 252)  # 5 against 5, no overlap: exact two-sided p
    assert s.confidence >= 0.95


def test_overlapping_samples_span_zero() -> None:
    s = significance.shift(np.array([1.0, 3.0, 5.0, 7.0]), np.array([2.0, 4.0, 6.0, 8.0]))
    assert s.spans_zero
    assert s.p_value > 0.5


def test_too_few_runs_give_an_unbounded_interval() -> None:
    s = significance.shift(np.array([1.0, 2.0, 3.0]), np.array([10.0, 11.0, 12.0]))
    assert math.isinf(s.low)
    assert math.isinf(s.high)
    assert significance.shift(np.array([1.0, 2.0, 3.0]), np.array([10.0, 11.0, 12.0]), 0.9).low > 0


def test_large_samples_use_the_normal_approximation() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(100.0, 5.0, 80)
    s = significance.shift(a, a + 10.0)
    assert 8.0 < s.low < 10.0 < s.high < 12.0
    assert s.p_value < 1e-6


@pytest.mark.parametrize(
    ("change", "low", "high", "word"),
    [
        (30.0, 20.0, 40.0, "slower"),
        (-30.0, -40.0, -20.0, "faster"),
        (0.5, 0.2, 0.8, "unchanged"),  # real but immaterial
        (0.1, -0.5, 0.9, "unchanged"),  # the interval lies within ±1 %
        (12.0, -3.0, 25.0, "noise"),
    ],
)
def test_verdicts(change: float, low: float, high: float, word: str) -> None:
    assert runs.verdict(change, low, high) == word


# ------------------------------------------------------------------ recorded runs


def _flagged(comparison: runs.RunsComparison) -> dict[str, str]:
    table = comparison.table
    hit = table[table["verdict"].isin(["slower", "faster"])]
    return dict(zip(hit["function"], hit["verdict"], strict=True))


def test_the_slowed_function_is_the_only_significant_row(baseline: list[Bundle]) -> None:
    c = runs.diff_runs(baseline, _side("b", range(1, 6)))
    assert _flagged(c) == {"parse": "slower"}
    parse = c.table.iloc[0]
    assert parse["function"] == "parse"
    assert 20.0 < parse["change_pct"] < 40.0  # 30 % more work, ±3 % noise per run
    assert parse["ci_low_pct"] > 0
    assert parse["runs_a"] == parse["runs_b"] == 5
    assert c.coverage >= 0.95
    assert not runs.regressions(c, 40.0).shape[0]
    assert list(runs.regressions(c, 5.0)["function"]) == ["parse"]


def test_a_small_share_is_found_too(baseline: list[Bundle]) -> None:
    c = runs.diff_runs(baseline, _side("c", range(1, 6)))
    assert _flagged(c) == {"checksum": "slower"}
    share = c.table.set_index("function")["tottime_ns_a"]
    assert share["checksum"] / share.sum() < 0.05
    assert c.total.verdict != "slower" or c.total.change_pct < 5.0


def test_a_against_a_flags_nothing(baseline: list[Bundle]) -> None:
    c = runs.diff_runs(baseline, _side("a", range(6, 11)))
    assert _flagged(c) == {}
    assert set(c.table["verdict"]) <= {"noise", "unchanged", "small"}
    assert runs.regressions(c, 5.0).empty


def test_medians_are_the_runs_medians(baseline: list[Bundle]) -> None:
    from perfview.core.compare import diff_views

    c = runs.diff_runs(baseline, _side("b", range(1, 6)))
    values = []
    for bundle in baseline:
        frame = diff_views.build(bundle, "functions").frame
        values.append(float(frame.loc[frame["function"] == "parse", "tottime_ns"].iloc[0]))
    row = c.table[c.table["function"] == "parse"].iloc[0]
    assert row["tottime_ns_a"] == float(np.median(values))
    assert c.total.median_a == float(np.median([b.profile.total_ns for b in baseline if b.profile]))


def test_traces_compare_in_several_runs_too() -> None:
    trace = _open(TRACE)
    c = runs.diff_runs([trace, trace], [trace, trace], view="ops")
    assert len(c.table) > 5
    assert set(c.table["verdict"]) == {"unchanged"}  # identical runs: the shift is exactly 0
    steps = runs.diff_runs([trace, trace], [trace, trace], view="steps")
    assert steps.view == "steps"


def test_memory_runs_compare_and_a_constant_growth_is_significant() -> None:
    a, b = _open(MPROF / "run_a.dat"), _open(MPROF / "run_b.dat")
    c = runs.diff_runs([a, a], [b, b])
    assert c.view == "memory"
    assert c.total.verdict == "slower"  # peak grew in every run of B
    assert c.total.low_pct == c.total.high_pct > 0


def test_mixed_formats_are_refused() -> None:
    with pytest.raises(ValueError, match="different kinds"):
        runs.diff_runs([_open(RUNS / "a_1.prof")], [_open(TRACE)])
