"""`perfview diff A B`: compare two runs headlessly, optionally as a CI regression gate.

    perfview diff A B [--view VIEW] [--metric M] [--top N] [--format table|csv|json]
                      [--fail-above PCT] [--min-share PCT] [--match basename|name|full]
    perfview diff --baseline A1 A2 … --candidate B1 B2 … [--confidence PCT] [same options]
    perfview diff A B --view structure     (two traces aligned by structure: compare_structure_cli)

Several runs per side (files, folders, globs) are compared by `perfview.compare_runs_cli`:
medians, the change with a rank-test interval and a verdict per row; the gate then fails only
on significant slowdowns.

Rows are sorted by the change of the chosen metric, largest growth (slowdown) first. Exit codes:
0 no regression (or no gate asked for); 1 with `--fail-above PCT` when the run total or any row
present in both runs grew by more than PCT percent, one `perfview: regression: …` line each on
stderr; 2 when a file cannot be opened (`perfview: cannot open PATH: reason`) or the two files
cannot be compared. Rows whose A value is below `--min-share` percent (default 0.1) of the A
column's sum are not gated: a 3 µs function doubling is timer noise, not a regression.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from perfview import compare_runs_cli, compare_structure_cli
from perfview.cli_common import (
    FORMATS,
    CliError,
    aligned_columns,
    format_cell,
    internal_failure,
    load_bundle,
    records,
    row_count,
)
from perfview.core.compare import diff_views
from perfview.core.compare.diff import (
    MIN_SHARE_PCT,
    STATUS_DOWN,
    STATUS_GONE,
    STATUS_NEW,
    STATUS_SAME,
    STATUS_UP,
    Comparison,
    diff_profiles,
    regressions,
    unit_of,
)
from perfview.core.model.units import Unit, format_value
from perfview.core.pages.summary import FORMAT_PHRASES

MAX_GATE_LINES = 10
# `perfview diff JOB_A JOB_B --view …` over the ranks of each side (core.compare.job_runs;
# ops and kernels are also trace views, named here once)
JOB_RUN_VIEWS = ("ranks", "collectives")


def _percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a percentage of 0 or more")
    return value


def add_parser(subparsers: Any) -> None:
    """Register `diff` on the `perfview` command's subparsers (called by perfview.cli)."""
    views = ", ".join(f"{name} ({spec.format})" for name, spec in diff_views.VIEWS.items())
    p = subparsers.add_parser(
        "diff",
        help="compare two runs of the same kind (A = baseline, B = new)",
        description=f"Compare run B against baseline A. Views: {views}.",
    )
    p.add_argument("a", metavar="A", nargs="?", help="baseline run")
    p.add_argument("b", metavar="B", nargs="?", help="new run")
    p.add_argument(
        "--spans",
        action="store_true",
        help="with one log directory A: each worker's step time over its spans (no B)",
    )
    p.add_argument(
        "--baseline", nargs="+", metavar="RUN", help="several baseline runs (files, folders, globs)"
    )
    p.add_argument(
        "--candidate", nargs="+", metavar="RUN", help="several candidate runs, compared as a group"
    )
    p.add_argument(
        "--jobs",
        action="store_true",
        help="with --baseline/--candidate: each folder is one run of a multi-rank job (implied "
        "by --view ranks|collectives); compared with one sample per run",
    )
    p.add_argument(
        "--confidence",
        type=compare_runs_cli.confidence_arg,
        default=95.0,
        metavar="PCT",
        help="with several runs (or ranks, steps) per side: the intervals' confidence (default "
        "95); a table's rows are tested together at false discovery rate 100 - PCT "
        "(Benjamini-Hochberg)",
    )
    p.add_argument(
        "--view",
        choices=[*diff_views.VIEWS, *JOB_RUN_VIEWS, compare_structure_cli.VIEW],
        help="default: the format's first; structure: two traces aligned by their call trees; "
        "two jobs: ranks, collectives, ops, kernels compare over the ranks of each side",
    )
    p.add_argument("--metric", help="metric to sort and gate on (default: the view's own)")
    p.add_argument("--top", type=row_count, default=20, help="rows to show; 0 = all")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")
    p.add_argument(
        "--fail-above",
        type=_percent,
        metavar="PCT",
        help="exit 1 if the total or any matched row grew by more than PCT percent",
    )
    p.add_argument(
        "--min-share",
        type=_percent,
        default=MIN_SHARE_PCT,
        metavar="PCT",
        help=f"rows below PCT %% of A's column sum are not gated (default {MIN_SHARE_PCT}); "
        "with several runs, rows below PCT %% of both sides' medians are not tested (small)",
    )
    p.add_argument(
        "--match",
        choices=diff_views.MATCHES,
        default="basename",
        help="match functions by file basename+line+name (default), name only, or full path",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load both files, compare, print, and apply the gate; returns the exit status."""
    if args.baseline or args.candidate:
        return compare_runs_cli.run(args, run_two)
    if args.spans and args.a is not None:  # one log directory: its spans' trend
        from perfview import logdir_cli

        return logdir_cli.run_span_diff(args)
    if args.a is None or args.b is None:
        raise CliError("diff needs two runs (A B) or several: --baseline A1 A2 … --candidate B1 …")
    return run_two(args)


def run_two(args: argparse.Namespace) -> int:
    """`perfview diff A B`: one run per side."""
    from perfview import job_cli  # two folders of rank traces compare as jobs

    if args.view == compare_structure_cli.VIEW:
        return compare_structure_cli.run(args)
    if job_cli.is_job_source(args.a) or job_cli.is_job_source(args.b):
        return run_job_diff(args)
    bundle_a = load_bundle(args.a)
    bundle_b = load_bundle(args.b)
    try:
        comparison = diff_profiles(
            bundle_a, bundle_b, view=args.view, metric=args.metric, match=args.match,
            with_tree=False,
        )  # fmt: skip
    except ValueError as exc:
        raise CliError(f"cannot compare {args.a} with {args.b}: {exc}") from exc
    except Exception as exc:
        raise internal_failure(f"comparing {args.a} with {args.b}", exc) from exc
    failures: list[str] | None = None
    if args.fail_above is not None:
        failures = gate_failures(comparison, args.fail_above, args.min_share)
    write_comparison(comparison, args.top, args.format, sys.stdout, failures, args.fail_above)
    for line in (failures or [])[:MAX_GATE_LINES]:
        print(f"perfview: regression: {line}", file=sys.stderr)
    if failures and len(failures) > MAX_GATE_LINES:
        print(f"perfview: … and {len(failures) - MAX_GATE_LINES} more", file=sys.stderr)
    return 1 if failures else 0


# ------------------------------------------------------------------------------- the gate


def _signed(value: float, unit: Unit) -> str:
    if isinstance(value, float) and math.isnan(value):
        return ""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    text = format_value(abs(value), unit)
    return ("+" if value > 0 else "-" if value < 0 else "±") + text


def _pct_text(value: float) -> str:
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "+inf %" if value > 0 else "-inf %"
    return f"{value:+.1f} %"


def row_labels(comparison: Comparison, frame: pd.DataFrame) -> list[str]:
    """Readable name of each row: its key (and info) cells joined by spaces."""
    cols = [*comparison.key, *comparison.info]
    parts = [frame[c].astype(object).astype(str).tolist() for c in cols if c != "nth"]
    return [" ".join(p for p in row if p and p != "nan") for row in zip(*parts, strict=True)]


def gate_failures(comparison: Comparison, fail_above: float, min_share: float) -> list[str]:
    """One sentence per regression: the total first, then rows in table order."""
    out: list[str] = []
    total_pct = comparison.total_delta_pct
    if total_pct > fail_above:
        unit = comparison.total_unit
        out.append(
            f"{comparison.total_label} grew {_pct_text(total_pct)} (> {fail_above:g} %): "
            f"{format_value(comparison.total_a, unit)} → {format_value(comparison.total_b, unit)}"
        )
    rows = regressions(comparison, fail_above, min_share)
    m = comparison.metric
    unit = unit_of(m)
    for label, a, b, pct in zip(
        row_labels(comparison, rows), rows[f"{m}_a"], rows[f"{m}_b"], rows[f"{m}_pct"], strict=True
    ):
        values = f"{format_value(a, unit)} → {format_value(b, unit)}"
        out.append(f"{label}: {m} grew {_pct_text(pct)} (> {fail_above:g} %): {values}")
    return out


# ------------------------------------------------------------------------------- output


def display_frame(comparison: Comparison, frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Header and text cells for the table format: status, keys, info, then A/B/Δ/Δ% of the metric.

    Only the chosen metric is shown to keep lines short; CSV and JSON carry every metric.
    """
    m = comparison.metric
    unit = unit_of(m)
    short = m.removesuffix("_ns").removesuffix("_bytes")
    text_cols = [c for c in [*comparison.key, *comparison.info] if c != "nth"]
    header = ["status", *text_cols, f"{short} A", f"{short} B", f"Δ {short}", "Δ%"]
    cells = [frame["status"].astype(str).tolist()]
    cells += [[format_cell(c, v) for v in frame[c].tolist()] for c in text_cols]
    for col in (f"{m}_a", f"{m}_b"):
        cells.append(["" if math.isnan(v) else format_value(v, unit) for v in frame[col]])
    cells.append([_signed(v, unit) for v in frame[f"{m}_delta"].tolist()])
    cells.append([_pct_text(v) for v in frame[f"{m}_pct"].tolist()])
    return header, [list(col) for col in cells]


def format_comparison_table(comparison: Comparison, frame: pd.DataFrame) -> str:
    header, cells = display_frame(comparison, frame)
    n_text = len(header) - 4  # the key columns; the four figures right-aligned
    return aligned_columns(header, cells, [i >= n_text for i in range(len(header))])


def _side(comparison: Comparison, which: str) -> dict[str, Any]:
    path = comparison.path_a if which == "a" else comparison.path_b
    total = comparison.total_a if which == "a" else comparison.total_b
    return {"path": str(path), "format": comparison.format, "total": float(total)}


def _header(comparison: Comparison, shown: int) -> list[str]:
    c = comparison
    phrase = FORMAT_PHRASES.get(c.format, c.format)
    unit = c.total_unit
    lines = [
        f"A: {c.path_a} · {c.format} ({phrase}) · {c.total_label} {format_value(c.total_a, unit)}",
        f"B: {c.path_b} · {c.format} ({phrase}) · {c.total_label} {format_value(c.total_b, unit)}",
        f"total: {_pct_text(c.total_delta_pct)} ({_signed(c.total_b - c.total_a, unit)})",
    ]
    counts = c.table["status"].value_counts()
    tally = ", ".join(
        f"{int(counts.get(s, 0))} {s}"
        for s in (STATUS_UP, STATUS_DOWN, STATUS_SAME, STATUS_NEW, STATUS_GONE)
    )
    total = len(c.table)
    rows = (
        f"{total:,} rows" if shown == total else f"top {shown:,} of {total:,} rows (--top 0: all)"
    )
    match = f", match {c.match}" if c.format in ("pstats", "memprof_text") else ""
    lines.append(f"view {c.view}, metric {c.metric}{match}: {rows} · {tally}")
    return lines


def write_comparison(
    comparison: Comparison,
    top: int,
    fmt: str,
    out: TextIO,
    failures: list[str] | None = None,
    fail_above: float | None = None,
) -> None:
    """Write the comparison as a table, CSV (every metric column) or one JSON object."""
    table = comparison.table
    shown = table.head(top) if top > 0 else table
    if fmt == "json":
        pct = comparison.total_delta_pct
        doc = {
            "view": comparison.view,
            "metric": comparison.metric,
            "match": comparison.match,
            "a": _side(comparison, "a"),
            "b": _side(comparison, "b"),
            "total_label": comparison.total_label,
            "total_unit": comparison.total_unit.value,
            "total_delta_pct": pct if math.isfinite(pct) else None,
            "total_rows": len(table),
            "fail_above": fail_above,
            "regressions": failures,
            "rows": records(shown),
        }
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
    elif fmt == "csv":
        shown.to_csv(out, index=False)
    else:
        out.write("\n".join(_header(comparison, len(shown))) + "\n\n")
        out.write(format_comparison_table(comparison, shown) + "\n")


def run_job_diff(args: argparse.Namespace) -> int:
    """`perfview diff JOB_A JOB_B`: per rank or per collective kind, with the same gate; with
    `--view ranks|collectives|ops|kernels`, over the ranks of each side with significance."""
    from perfview import job_cli
    from perfview.core.compare import job_runs
    from perfview.core.compare.job_diff import diff_jobs

    job_a, job_b = job_cli.open_side(args.a), job_cli.open_side(args.b)
    if args.view in job_runs.VIEWS:
        try:
            over = job_runs.diff_job_runs(
                job_a, job_b, args.view, args.metric, args.confidence / 100.0, args.min_share
            )
        except ValueError as exc:
            raise CliError(f"cannot compare {args.a} with {args.b}: {exc}") from exc
        except Exception as exc:
            raise internal_failure(f"comparing {args.a} with {args.b}", exc) from exc
        return compare_runs_cli.report(over, args)
    try:
        comparison = diff_jobs(job_a, job_b, Path(args.a), Path(args.b), args.view, args.metric)
    except ValueError as exc:
        raise CliError(f"cannot compare {args.a} with {args.b}: {exc}") from exc
    failures = None
    if args.fail_above is not None:
        failures = gate_failures(comparison, args.fail_above, args.min_share)
    write_comparison(comparison, args.top, args.format, sys.stdout, failures, args.fail_above)
    for line in (failures or [])[:MAX_GATE_LINES]:
        print(f"perfview: regression: {line}", file=sys.stderr)
    return 1 if failures else 0


__all__ = ["add_parser", "display_frame", "gate_failures", "run", "write_comparison"]
