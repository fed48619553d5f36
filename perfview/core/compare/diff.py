"""Compare two runs: align their tables on string keys and report A, B, delta and Δ% per row.

Rows are matched on *text* keys (function name, file basename and line; operator name; step
ordinal), never on per-file ids: ids are assigned per file and mean nothing across runs (the
lesson of HTA's `compare_traces`). Each view (see `compare.diff_views`) turns a Bundle into
one table plus a run total; `compare_tables` joins two such tables; `diff_profiles` does both and
returns a `Comparison` that the CLI prints and the compare view shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from perfview.core.compare import diff_views
from perfview.core.compare.diff_tree import diff_tree
from perfview.core.model import Bundle, CallTree
from perfview.core.model.units import Unit, column_unit

STATUS_UP = "+"
STATUS_DOWN = "-"
STATUS_SAME = "="
STATUS_NEW = "new"
STATUS_GONE = "gone"

# Rows whose A value is below this share (in %) of the metric's A column sum are ignored by the
# regression gate: a function that took 3 µs out of 10 s can double from timer noise alone.
MIN_SHARE_PCT = 0.1


def unit_of(column: str) -> Unit:
    """Unit of a metric from its suffix (`_ns`, `_bytes`); plain numbers are counts."""
    return column_unit(column) or Unit.COUNT


def pct_change(a: float, b: float) -> float:
    """Δ% of b relative to a: 0 when both are 0, ±inf when only a is 0."""
    if a == 0:
        return 0.0 if b == 0 else float(np.copysign(np.inf, b))
    return (b - a) * 100.0 / abs(a)


@dataclass
class Comparison:
    """Two runs aligned: the delta table plus the run totals, and optionally a merged call tree.

    `table` has the key columns, info columns (text taken from B, else A), then for each metric
    `<m>_a`, `<m>_b`, `<m>_delta`, `<m>_pct`, then `status`. `total_a`/`total_b` are the run totals
    in `total_unit`; what they mean per view is `total_label` (see `diff_views`).
    """

    view: str
    metric: str
    table: pd.DataFrame
    key: list[str]
    info: list[str]
    metrics: list[str]
    total_a: float
    total_b: float
    total_label: str
    path_a: Path
    path_b: Path
    format: str
    match: str = "basename"
    tree: CallTree | None = None
    inputs: tuple[pd.DataFrame, pd.DataFrame] | None = field(default=None, repr=False)
    trees: tuple[CallTree, CallTree] | None = field(default=None, repr=False)

    @property
    def total_delta_pct(self) -> float:
        return pct_change(self.total_a, self.total_b)

    @property
    def total_unit(self) -> Unit:
        return diff_views.VIEWS[self.view].total_unit

    def swapped(self) -> Comparison:
        """The same comparison with A and B exchanged (recomputed, so statuses and order flip)."""
        if self.inputs is None:
            raise ValueError("this comparison keeps no inputs to swap")
        spec = diff_views.VIEWS[self.view]
        side_a, side_b = self.inputs
        table = compare_tables(
            side_b, side_a, self.key, self.metrics, sort_by=self.metric, info=self.info,
            sort=spec.sort,
        )  # fmt: skip
        tree = None
        if self.trees is not None:
            tree = diff_tree(self.trees[1], self.trees[0], match=self.match)
        return Comparison(
            view=self.view, metric=self.metric, table=table, key=self.key, info=self.info,
            metrics=self.metrics,
            total_a=self.total_b, total_b=self.total_a, total_label=self.total_label,
            path_a=self.path_b, path_b=self.path_a, format=self.format, match=self.match,
            tree=tree, inputs=(side_b, side_a),
            trees=None if self.trees is None else (self.trees[1], self.trees[0]),
        )  # fmt: skip


def prepare_table(
    df: pd.DataFrame, key: list[str], metrics: list[str], info: list[str]
) -> pd.DataFrame:
    """Keys as plain text (or ints), metrics as float64 with 0 for missing, one row per key.

    Categorical keys would make the join compare category codes of two different files, so they
    become text. Repeated keys (e.g. name-only matching) are summed: metrics must be additive.
    """
    frame = df[[*key, *metrics, *info]].copy()
    for col in key:
        if not pd.api.types.is_integer_dtype(frame[col].dtype):
            frame[col] = frame[col].astype(object).astype(str)
    for col in metrics:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(np.float64).fillna(0.0)
    if frame.duplicated(key).any():
        how = {m: "sum" for m in metrics} | {i: "first" for i in info}
        frame = frame.groupby(key, sort=False, dropna=False).agg(how).reset_index()
    return frame


def _pct(a: np.ndarray, delta: np.ndarray, in_a: np.ndarray) -> np.ndarray:
    """Δ% relative to A; ±inf when A is 0 and B is not; NaN for rows absent from A."""
    with np.errstate(divide="ignore", invalid="ignore"):
        pct: np.ndarray = delta * 100.0 / np.abs(a)
    zero = a == 0
    pct[zero] = np.where(delta[zero] == 0, 0.0, np.copysign(np.inf, delta[zero]))
    pct[~in_a] = np.nan
    return pct


def compare_tables(
    a: pd.DataFrame,
    b: pd.DataFrame,
    key: list[str],
    metrics: list[str],
    *,
    sort_by: str | None = None,
    info: tuple[str, ...] | list[str] = (),
    sort: bool = True,
    tolerance_pct: float = 0.0,
) -> pd.DataFrame:
    """Outer-join two runs' tables on `key` and add `<m>_a/_b/_delta/_pct` per metric + `status`.

    `status` follows `sort_by` (default: the first metric): `+` grew, `-` shrank, `=` within
    `tolerance_pct` of A, `new` only in B, `gone` only in A. Missing sides count as 0 in deltas
    (a new function costing 5 s is 5 s of growth) but keep NaN in `<m>_a`/`<m>_b`, and Δ% of a
    new row is NaN. Rows are sorted by `sort_by`'s delta, largest growth first, keys breaking
    ties; `sort=False` keeps A's row order followed by new rows (for ordered views like steps).
    """
    sort_by = sort_by or metrics[0]
    if sort_by not in metrics:
        raise ValueError(f"unknown metric {sort_by!r}; choose one of {', '.join(metrics)}")
    info = list(info)
    left = prepare_table(a, key, metrics, info).assign(_order=lambda f: np.arange(len(f)))
    right = prepare_table(b, key, metrics, info).assign(_order=lambda f: np.arange(len(f)))
    out = left.merge(right, on=key, how="outer", suffixes=("_a", "_b"), indicator=True)
    if not sort:  # an outer merge sorts keys; restore A's order, then B's new rows in B's order
        rank = out["_order_a"].fillna(len(left) + out["_order_b"]).to_numpy()
        out = out.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)
    side = out.pop("_merge").astype(str).to_numpy()
    in_a, in_b = side != "right_only", side != "left_only"
    cols: dict[str, object] = {k: out[k].to_numpy() for k in key}
    for col in info:
        cols[col] = out[f"{col}_b"].where(pd.Series(in_b), out[f"{col}_a"]).to_numpy()
    for m in metrics:
        va = out[f"{m}_a"].to_numpy(dtype=np.float64)
        vb = out[f"{m}_b"].to_numpy(dtype=np.float64)
        delta = np.where(in_b, vb, 0.0) - np.where(in_a, va, 0.0)
        cols |= {f"{m}_a": va, f"{m}_b": vb, f"{m}_delta": delta, f"{m}_pct": _pct(va, delta, in_a)}
    table = pd.DataFrame(cols)
    table["status"] = _status(table, sort_by, in_a, in_b, tolerance_pct)
    if sort:
        order = [f"{sort_by}_delta", *key]
        table = table.sort_values(order, ascending=[False] + [True] * len(key), kind="stable")
    return table.reset_index(drop=True)


def _status(
    table: pd.DataFrame, metric: str, in_a: np.ndarray, in_b: np.ndarray, tolerance_pct: float
) -> np.ndarray:
    delta = table[f"{metric}_delta"].to_numpy()
    limit = np.abs(np.nan_to_num(table[f"{metric}_a"].to_numpy())) * tolerance_pct / 100.0
    status = np.full(len(table), STATUS_SAME, dtype=object)
    status[delta > limit] = STATUS_UP
    status[delta < -limit] = STATUS_DOWN
    status[~in_a] = STATUS_NEW
    status[~in_b] = STATUS_GONE
    return status


def regressions(
    comparison: Comparison, fail_above_pct: float, min_share_pct: float = MIN_SHARE_PCT
) -> pd.DataFrame:
    """Matched rows whose metric grew by more than `fail_above_pct` percent (the CI gate).

    Rows present in only one run are left to the total (their Δ% is undefined), and rows whose
    A value is under `min_share_pct` % of the A column's sum are ignored as noise.
    """
    table, m = comparison.table, comparison.metric
    a = table[f"{m}_a"].to_numpy(dtype=np.float64)
    pct = table[f"{m}_pct"].to_numpy(dtype=np.float64)
    matched = table["status"].isin([STATUS_UP, STATUS_DOWN, STATUS_SAME]).to_numpy()
    floor = float(np.nansum(a)) * min_share_pct / 100.0
    with np.errstate(invalid="ignore"):
        hit = matched & (a > 0) & (a >= floor) & (pct > fail_above_pct)
    return table[hit].reset_index(drop=True)


def diff_profiles(
    a: Bundle,
    b: Bundle,
    *,
    view: str | None = None,
    metric: str | None = None,
    match: str = "basename",
    with_tree: bool = True,
    tolerance_pct: float = 0.0,
) -> Comparison:
    """Compare two loaded runs of the same format in one view (default: the format's first).

    Raises ValueError with a user-readable sentence for mismatched formats, views or metrics.
    """
    if a.format != b.format:
        raise ValueError(f"cannot compare a {a.format} file with a {b.format} file")
    view = view or diff_views.default_view_for(a)
    spec = diff_views.spec_for(a.format, view)
    metric = metric or spec.default_metric
    if metric not in spec.metrics:
        raise ValueError(
            f"view {view!r} has no metric {metric!r}; choose one of {', '.join(spec.metrics)}"
        )
    side_a = diff_views.build(a, view, match)
    side_b = diff_views.build(b, view, match)
    table = compare_tables(
        side_a.frame, side_b.frame, side_a.key, list(spec.metrics), sort_by=metric,
        info=side_a.info, sort=spec.sort, tolerance_pct=tolerance_pct,
    )  # fmt: skip
    tree, trees = None, None
    if with_tree and spec.tree and a.tree is not None and b.tree is not None:
        trees = (a.tree, b.tree)
        tree = diff_tree(a.tree, b.tree, match=match)
    return Comparison(
        view=view, metric=metric, table=table, key=side_a.key, info=side_a.info,
        metrics=list(spec.metrics), total_a=side_a.total, total_b=side_b.total,
        total_label=spec.total_label, path_a=a.path, path_b=b.path, format=a.format,
        match=match, tree=tree, inputs=(side_a.frame, side_b.frame), trees=trees,
    )  # fmt: skip


def diff_all(
    a: Bundle,
    b: Bundle,
    *,
    match: str = "basename",
    progress: Callable[[float, str], None] | None = None,
) -> tuple[dict[str, Comparison], dict[str, str]]:
    """Every view that applies to the pair's format: (comparisons by view, errors by view).

    What the GUI's compare tab shows. A view that cannot be built (a CPU-only trace has no
    kernels to speak of, a trace without steps) is reported in `errors` instead of failing the
    whole comparison; mismatched formats still raise ValueError. The merged call tree is built
    once, for the first view that wants one (the others would repeat the same tree).
    """
    if a.format != b.format:
        raise ValueError(f"cannot compare a {a.format} file with a {b.format} file")
    views = diff_views.views_for_bundle(a)
    if not views:
        raise ValueError(f"perfview cannot compare {a.format} files")
    out: dict[str, Comparison] = {}
    errors: dict[str, str] = {}
    tree_done = False
    for i, view in enumerate(views):
        if progress is not None:
            progress(i / len(views), f"comparing {view}")
        wants_tree = diff_views.VIEWS[view].tree and not tree_done
        try:
            out[view] = diff_profiles(a, b, view=view, match=match, with_tree=wants_tree)
        except (ValueError, KeyError) as exc:
            errors[view] = str(exc)
            continue
        tree_done = tree_done or out[view].tree is not None
    if progress is not None:
        progress(1.0, "compared")
    return out, errors


__all__ = [
    "MIN_SHARE_PCT",
    "Comparison",
    "compare_tables",
    "diff_all",
    "diff_profiles",
    "diff_tree",
    "pct_change",
    "prepare_table",
    "regressions",
    "unit_of",
]
