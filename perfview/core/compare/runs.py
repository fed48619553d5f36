"""Several runs per side: per row the median of each side, the change with its interval, a verdict.

One run of a benchmark says little: the same program run twice differs by a few percent, more
on a busy machine. With N runs of the baseline (A) and M of the candidate (B) each row (a
function, op, kernel, step, allocation site …) becomes two small samples, and
`perfview.core.compare.significance` says whether B shifted: the Hodges-Lehmann change with the
Mann-Whitney interval. Rows are built by the same views as the two-run diff
(`compare.diff_views`), so every format that compares two runs compares several; a row missing
from one run counts as 0 there (a function that was not called took no time).

Verdicts (`verdict` column), for metrics where more is worse (time, bytes, calls):
- `slower` / `faster`: the interval excludes 0 and the change is at least `NEGLIGIBLE_PCT` %.
- `unchanged`: the interval lies within ±`NEGLIGIBLE_PCT` % of A's median, or the change is
  significant but smaller than that (real but immaterial).
- `noise`: the interval spans 0 and is wider than that band: the runs cannot tell.
- `small`: the row's median over both sides together is under `MIN_SHARE_PCT` % of the sum of
  those medians: not tested (see `shift_columns`), and not gated.
- `new` / `gone`: the row is absent from every run of A / of B.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from perfview.core.compare import diff_views, significance
from perfview.core.compare.diff import MIN_SHARE_PCT, prepare_table, unit_of
from perfview.core.model import Bundle
from perfview.core.model.units import Unit

VERDICT_SLOWER = "slower"
VERDICT_FASTER = "faster"
VERDICT_UNCHANGED = "unchanged"
VERDICT_NOISE = "noise"
VERDICT_NEW = "new"
VERDICT_GONE = "gone"
# Under the share floor (`shift_columns`): not tested, so it cannot cost the others power.
VERDICT_SMALL = "small"
VERDICTS = (VERDICT_SLOWER, VERDICT_FASTER, VERDICT_UNCHANGED, VERDICT_NOISE, VERDICT_SMALL,
            VERDICT_NEW, VERDICT_GONE)  # fmt: skip
# A change under this share of A's median is called unchanged even when it is significant.
NEGLIGIBLE_PCT = 1.0


@dataclass
class TotalShift:
    """The run totals (`ViewSpec.total_label`) of both sides, their medians and their shift."""

    values_a: np.ndarray
    values_b: np.ndarray
    median_a: float
    median_b: float
    shift: significance.Shift
    change_pct: float
    low_pct: float
    high_pct: float
    verdict: str


@dataclass
class RowSamples:
    """Each table row's samples on side A and side B (the metric's values per run), in the
    table's order: kept so that another confidence needs no file read again."""

    a: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)


@dataclass
class RunsComparison:
    """N runs of A against M runs of B in one view.

    `table`: key and info columns, then per metric `<m>_a`, `<m>_b` (medians over the runs)
    and `<m>_delta` (difference of medians); then for the chosen metric `change` (the
    Hodges-Lehmann shift, or with few runs the ratio of geometric means as a shift: `method`),
    `ci_low`, `ci_high`, the same three relative to A's median (`change_pct`, `ci_low_pct`,
    `ci_high_pct`), `p_value`, `q_value` (Benjamini-Hochberg), `runs_a`/`runs_b` (runs holding
    the row) and `verdict`. Sorted by `change`, largest growth first, unless the view keeps
    order. `correction` says how the rows were tested together; `rows` keeps their samples.
    """

    view: str
    metric: str
    table: pd.DataFrame
    key: list[str]
    info: list[str]
    metrics: list[str]
    paths_a: list[Path]
    paths_b: list[Path]
    format: str
    total: TotalShift
    total_label: str
    confidence: float
    coverage: float
    match: str = "basename"
    method: str = field(default=significance.METHOD)
    total_unit: Unit = Unit.NS
    # What one sample of a row is ("runs"; over a job's ranks: "ranks", or a rank's "steps"),
    # and the fewest samples a side of a row has (0: one per path), for the method line.
    samples: str = "runs"
    fewest: int = 0
    correction: Correction | None = None
    rows: RowSamples = field(default_factory=RowSamples)
    min_share_pct: float = MIN_SHARE_PCT  # rows under it are `small`, not tested


def _relative(value: float, base: float) -> float:
    if base == 0:
        return 0.0 if value == 0 else math.copysign(math.inf, value)
    return value * 100.0 / abs(base)


def verdict(change_pct: float, low_pct: float, high_pct: float) -> str:
    """One word for a shift given relative to A's median (see the module docstring)."""
    if low_pct > 0 or high_pct < 0:  # significant
        if abs(change_pct) < NEGLIGIBLE_PCT:
            return VERDICT_UNCHANGED
        return VERDICT_SLOWER if change_pct > 0 else VERDICT_FASTER
    if low_pct >= -NEGLIGIBLE_PCT and high_pct <= NEGLIGIBLE_PCT:
        return VERDICT_UNCHANGED
    return VERDICT_NOISE


def total_shift(a: np.ndarray, b: np.ndarray, confidence: float) -> TotalShift:
    """The run totals' shift: one test, so no correction; the rank test when it can reach
    1 − confidence with these runs, else the Welch t-test on logs."""
    method = significance.choose_method(len(a), len(b), 1.0 - confidence)
    s = significance.shift(a, b, confidence, method)
    med_a = float(np.median(a))
    pct, low, high = (_relative(v, med_a) for v in (s.estimate, s.low, s.high))
    return TotalShift(a, b, med_a, float(np.median(b)), s, pct, low, high,
                      verdict(pct, low, high))  # fmt: skip


def row_matrix(
    frames: list[pd.DataFrame], key: list[str], metrics: list[str], info: list[str]
) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """Rows (keys + info) in first-seen order, metric values [row, run] (0 if absent), presence."""
    stacked = pd.concat([f.assign(_run=i) for i, f in enumerate(frames)], ignore_index=True)
    row = stacked.groupby(key, sort=False, dropna=False).ngroup().to_numpy()
    n_rows, n_runs = int(row.max()) + 1 if len(row) else 0, len(frames)
    run = stacked["_run"].to_numpy()
    present = np.zeros((n_rows, n_runs), dtype=bool)
    present[row, run] = True
    values: dict[str, np.ndarray] = {}
    for m in metrics:
        grid = np.zeros((n_rows, n_runs))
        grid[row, run] = stacked[m].to_numpy(dtype=np.float64)
        values[m] = grid
    # keys from the first run holding the row, info from the last (B's text wins, as in diff)
    stacked["_row"] = row
    first = stacked.drop_duplicates("_row", keep="first").sort_values("_row")
    last = stacked.drop_duplicates("_row", keep="last").sort_values("_row")
    rows = first[key].reset_index(drop=True)
    for col in info:
        rows[col] = last[col].to_numpy()
    return rows, values, present


def diff_runs(
    runs_a: list[Bundle],
    runs_b: list[Bundle],
    *,
    view: str | None = None,
    metric: str | None = None,
    match: str = "basename",
    confidence: float = significance.DEFAULT_CONFIDENCE,
    progress: Callable[[float, str], None] | None = None,
    min_share_pct: float = MIN_SHARE_PCT,
) -> RunsComparison:
    """Compare the runs of B against the runs of A in one view (default: the format's first).

    Raises ValueError with a user-readable sentence for mixed formats, views or metrics.
    """
    if not runs_a or not runs_b:
        raise ValueError("each side needs at least one run")
    formats = {r.format for r in [*runs_a, *runs_b]}
    if len(formats) > 1:
        raise ValueError(f"cannot compare runs of different kinds ({', '.join(sorted(formats))})")
    first = runs_a[0]
    view = view or diff_views.default_view_for(first)
    spec = diff_views.spec_for(first.format, view)
    metric = metric or spec.default_metric
    if metric not in spec.metrics:
        raise ValueError(
            f"view {view!r} has no metric {metric!r}; choose one of {', '.join(spec.metrics)}"
        )
    metrics = list(spec.metrics)
    sides = []
    everyone = [*runs_a, *runs_b]
    for i, bundle in enumerate(everyone):
        if progress is not None:
            progress(i / len(everyone), f"building {view} of {bundle.title}")
        sides.append(diff_views.build(bundle, view, match))
    key, info = sides[0].key, sides[0].info
    frames = [prepare_table(s.frame, key, metrics, info) for s in sides]
    table, correction, rows = compare_frames(
        frames, len(runs_a), key, info, metrics, metric, confidence, spec.sort, min_share_pct
    )
    totals = np.array([s.total for s in sides])
    if progress is not None:
        progress(1.0, "compared")
    na = len(runs_a)
    return RunsComparison(
        view=view, metric=metric, table=table, key=key, info=info,
        metrics=metrics, paths_a=[r.path for r in runs_a], paths_b=[r.path for r in runs_b],
        format=first.format, total=total_shift(totals[:na], totals[na:], confidence),
        total_label=spec.total_label, confidence=confidence, match=match,
        coverage=correction.coverage, total_unit=spec.total_unit, method=correction.method,
        correction=correction, rows=rows, min_share_pct=min_share_pct,
    )  # fmt: skip


@dataclass(frozen=True)
class Correction:
    """How a table's rows were tested together (`shift_columns`).

    `method`: the rows' test (`significance.RANK` or `significance.LOG_T`, by
    `significance.choose_method`); `tested`: rows tested together (present on both sides, and
    not known exactly); `selected`: rows Benjamini-Hochberg selects at the false discovery rate
    1 − confidence; `level`: the per-row interval confidence, 1 − α·max(selected, 1)/tested;
    `coverage`: what the rows' intervals reach at that level (rank intervals move in steps).
    """

    method: str
    tested: int
    selected: int
    level: float
    coverage: float
    fewest: int  # the fewest samples a side of a tested row has


def _bh_q(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), in the order given."""
    if not len(p):
        return p
    from scipy import stats  # a compare-only import, as in `significance`

    q: np.ndarray = stats.false_discovery_control(p, method="bh")
    return q


def shift_columns(
    a: list[np.ndarray],
    b: list[np.ndarray],
    confidence: float,
    tested: np.ndarray | None = None,
    min_share_pct: float = MIN_SHARE_PCT,
) -> tuple[dict[str, np.ndarray], Correction]:
    """Per row, the shift of the samples `b[r]` over `a[r]`: `change`, `ci_low`, `ci_high`, the
    same relative to A's median (`*_pct`), `p_value`, `q_value` (Benjamini-Hochberg) and
    `verdict` (before new/gone), with the rows corrected for being tested together.

    `tested`: the rows that take part (default all; new and gone rows do not); rows whose
    shift is known exactly (`significance.is_exact`) never do, nor rows whose median over
    both sides together is under `min_share_pct` % of the sum of those medians (verdict
    `small`). Leaving those out is "independent filtering" (Bourgon, Gentleman & Huber 2010):
    the pooled median does not depend on which side a value came from, so under "no change" it
    tells nothing about the test, and the false discovery rate holds over the rows tested; the
    hundreds of tiny rows of a profile (which the gate ignores anyway) stop diluting the
    correction of the rows that matter. The rows' test is the rank test
    when it can reach the smallest corrected level α/rows with the fewest samples, else the
    Welch t-test on logs; the intervals are at the Benjamini-Hochberg level, so a row's verdict
    (its interval excludes 0) is exactly "Benjamini-Hochberg selects it".
    """
    n = len(a)
    mask = np.ones(n, dtype=bool) if tested is None else np.asarray(tested, dtype=bool).copy()
    exact = np.zeros(n, dtype=bool)
    for i in np.nonzero(mask)[0]:
        exact[i] = significance.is_exact(a[i], b[i])
    pooled = np.array([float(np.median(np.concatenate([x, y]))) for x, y in zip(a, b, strict=True)])
    small = mask & ~exact & (pooled < np.nansum(np.abs(pooled)) * min_share_pct / 100.0)
    mask &= ~exact & ~small
    rows = np.nonzero(mask)[0]
    alpha = 1.0 - confidence
    fa = min((len(a[r]) for r in rows), default=0)
    fb = min((len(b[r]) for r in rows), default=0)
    method = significance.choose_method(max(fa, 1), max(fb, 1), alpha / max(len(rows), 1))
    # Welch on logs over every tested row at once when they all have the same sample sizes
    # (one sample per run: always, except the ranks view's steps per rank)
    together = (
        method == significance.LOG_T and len(rows) > 0 and min(fa, fb) >= 2
        and all(len(a[r]) == fa and len(b[r]) == fb for r in rows)
    )  # fmt: skip
    grid_a = np.array([a[r] for r in rows]) if together else np.zeros((0, 0))
    grid_b = np.array([b[r] for r in rows]) if together else np.zeros((0, 0))
    if together:
        p = significance.log_t_rows(grid_a, grid_b, confidence)[3]
    else:
        p = np.array([significance.p_value(a[r], b[r], method) for r in rows])
    selected, row_alpha = significance.fdr_level(p, alpha)
    level = 1.0 - row_alpha
    if method == significance.RANK:
        coverage = significance.coverage(max(fa, 1), max(fb, 1), level)
    else:
        coverage = level
    stats = np.full((n, 8), np.nan)
    verdicts = np.empty(n, dtype=object)
    for r, (sa, sb) in enumerate(zip(a, b, strict=True)):
        if together and mask[r]:
            continue
        s = significance.shift(sa, sb, level, method)
        stats[r, :7] = [s.estimate, s.low, s.high, 0, 0, 0, s.p_value]
    if together:
        est, low, high, pv = significance.log_t_rows(grid_a, grid_b, level)
        stats[rows, 0], stats[rows, 1], stats[rows, 2], stats[rows, 6] = est, low, high, pv
    for r, sa in enumerate(a):
        base = float(np.median(sa))
        rel = [_relative(float(v), base) for v in stats[r, :3]]
        stats[r, 3:6] = rel
        verdicts[r] = VERDICT_SMALL if small[r] else verdict(*rel)
    stats[rows, 7] = _bh_q(p)
    names = ["change", "ci_low", "ci_high", "change_pct", "ci_low_pct", "ci_high_pct", "p_value",
             "q_value"]  # fmt: skip
    cols = {name: stats[:, i] for i, name in enumerate(names)}
    cols["verdict"] = verdicts
    return cols, Correction(method, len(rows), selected, level, coverage, min(fa, fb))


def compare_frames(
    frames: list[pd.DataFrame],
    n_a: int,
    key: list[str],
    info: list[str],
    metrics: list[str],
    metric: str,
    confidence: float,
    sort: bool = True,
    min_share_pct: float = MIN_SHARE_PCT,
) -> tuple[pd.DataFrame, Correction, RowSamples]:
    """The table of a `RunsComparison` from one frame per sample (the first `n_a` are A's):
    rows matched on `key`, a row absent from a sample counting 0 there; with how its rows
    were tested and each row's samples (in the table's order)."""
    rows, values, present = row_matrix(frames, key, metrics, info)
    na = n_a
    cols: dict[str, object] = {c: rows[c].to_numpy() for c in rows.columns}
    for m in metrics:
        med_a = np.median(values[m][:, :na], axis=1)
        med_b = np.median(values[m][:, na:], axis=1)
        cols |= {f"{m}_a": med_a, f"{m}_b": med_b, f"{m}_delta": med_b - med_a}
    grid = values[metric]
    in_a, in_b = present[:, :na].any(axis=1), present[:, na:].any(axis=1)
    samples = RowSamples(list(grid[:, :na]), list(grid[:, na:]))
    both = np.asarray(in_a & in_b, dtype=bool)
    shifts, correction = shift_columns(samples.a, samples.b, confidence, both, min_share_pct)
    verdicts = shifts.pop("verdict")
    verdicts[~in_a] = VERDICT_NEW
    verdicts[~in_b] = VERDICT_GONE
    cols |= shifts
    cols["runs_a"] = present[:, :na].sum(axis=1)
    cols["runs_b"] = present[:, na:].sum(axis=1)
    cols["verdict"] = verdicts
    table = pd.DataFrame(cols)
    if sort:
        table = table.sort_values(
            ["change", *key], ascending=[False] + [True] * len(key), kind="stable"
        )
        order = table.index.to_numpy()
        samples = RowSamples([samples.a[i] for i in order], [samples.b[i] for i in order])
    return table.reset_index(drop=True), correction, samples


def with_confidence(c: RunsComparison, confidence: float) -> RunsComparison:
    """The same comparison at another confidence: intervals, verdicts, the correction and the
    total recomputed from the samples it kept (no file is read again; the rows keep their
    order). What the window's confidence control calls in a worker."""
    table = c.table.copy()
    shifts, correction = shift_columns(
        c.rows.a, c.rows.b, confidence,
        (table["runs_a"] > 0).to_numpy() & (table["runs_b"] > 0).to_numpy(), c.min_share_pct,
    )  # fmt: skip
    verdicts = shifts.pop("verdict")
    verdicts[(table["runs_a"] == 0).to_numpy()] = VERDICT_NEW
    verdicts[(table["runs_b"] == 0).to_numpy()] = VERDICT_GONE
    for name, col in shifts.items():
        table[name] = col
    table["verdict"] = verdicts
    total = total_shift(c.total.values_a, c.total.values_b, confidence)
    return replace(c, table=table, total=total, confidence=confidence, correction=correction,
                   coverage=correction.coverage, method=correction.method)  # fmt: skip


def regressions(
    comparison: RunsComparison, fail_above_pct: float, min_share_pct: float = MIN_SHARE_PCT
) -> pd.DataFrame:
    """Rows that got significantly worse by more than `fail_above_pct` % (the CI gate).

    Only `slower` rows count: a large change whose interval spans 0 is noise, not a regression.
    Rows whose A median is under `min_share_pct` % of the A medians' sum are ignored.
    """
    table, m = comparison.table, comparison.metric
    a = table[f"{m}_a"].to_numpy(dtype=np.float64)
    pct = table["change_pct"].to_numpy(dtype=np.float64)
    floor = float(np.nansum(a)) * min_share_pct / 100.0
    slower = (table["verdict"] == VERDICT_SLOWER).to_numpy()
    with np.errstate(invalid="ignore"):
        hit = slower & (a > 0) & (a >= floor) & (pct > fail_above_pct)
    return table[hit].reset_index(drop=True)


__all__ = [
    "NEGLIGIBLE_PCT",
    "VERDICTS",
    "VERDICT_SMALL",
    "Correction",
    "RowSamples",
    "RunsComparison",
    "TotalShift",
    "compare_frames",
    "diff_runs",
    "diff_runs_all",
    "regressions",
    "row_matrix",
    "shift_columns",
    "total_shift",
    "unit_of",
    "verdict",
    "with_confidence",
]


def diff_runs_all(
    runs_a: list[Bundle],
    runs_b: list[Bundle],
    *,
    match: str = "basename",
    confidence: float = significance.DEFAULT_CONFIDENCE,
    progress: Callable[[float, str], None] | None = None,
) -> tuple[dict[str, RunsComparison], dict[str, str]]:
    """Every view that applies to the runs' format: (comparisons by view, errors by view).

    What the GUI's compare tab shows for several runs per side, like `diff.diff_all` for two:
    a view that cannot be built is reported in `errors`; mixed formats still raise ValueError.
    """
    if not runs_a or not runs_b:
        raise ValueError("each side needs at least one run")
    formats = {r.format for r in [*runs_a, *runs_b]}
    if len(formats) > 1:
        raise ValueError(f"cannot compare runs of different kinds ({', '.join(sorted(formats))})")
    views = diff_views.views_for_bundle(runs_a[0])
    if not views:
        raise ValueError(f"perfview cannot compare {runs_a[0].format} files")
    out: dict[str, RunsComparison] = {}
    errors: dict[str, str] = {}
    for i, view in enumerate(views):
        if progress is not None:
            progress(i / len(views), f"comparing {view}")
        try:
            out[view] = diff_runs(runs_a, runs_b, view=view, match=match, confidence=confidence)
        except (ValueError, KeyError) as exc:
            errors[view] = str(exc)
    if progress is not None:
        progress(1.0, "compared")
    return out, errors
