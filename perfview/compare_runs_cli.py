"""`perfview diff --baseline A1 A2 … --candidate B1 B2 …`: several runs per side, with significance.

Each side is files, folders (their files) or glob patterns. Per row: the median of each side,
the change (Hodges-Lehmann shift) with its interval from the Mann-Whitney rank test, and a
verdict (`perfview.core.compare.runs`). `--fail-above PCT` fails only on rows and a total that
got *significantly* slower by more than PCT percent: a 40 % jump whose interval spans 0 is noise.
With one run per side this is exactly `perfview diff A B`.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from perfview.cli_common import (
    CliError,
    aligned_columns,
    format_cell,
    internal_failure,
    load_bundle,
    records,
)
from perfview.core.compare import significance
from perfview.core.compare.diff import MIN_SHARE_PCT, unit_of
from perfview.core.compare.runs import (
    VERDICT_SLOWER,
    VERDICTS,
    RunsComparison,
    diff_runs,
    regressions,
)
from perfview.core.model.units import format_value
from perfview.core.pages.summary import FORMAT_PHRASES

MAX_GATE_LINES = 10


def expand(sources: list[str], side: str) -> list[str]:
    """Files named by a side's arguments: files as given, a folder's files, a glob's matches."""
    out: list[str] = []
    for source in sources:
        if os.path.isdir(source):
            found = sorted(
                str(p) for p in Path(source).iterdir() if p.is_file() and p.name[0] != "."
            )
        elif not os.path.exists(source) and glob.has_magic(source):
            found = sorted(p for p in glob.glob(source) if os.path.isfile(p))
        else:
            found = [source]
        if not found:
            raise CliError(f"no {side} runs in {source}")
        out.extend(found)
    return out


def confidence_arg(text: str) -> float:
    """--confidence as a percentage strictly between 50 and 100."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 50 < value < 100:
        raise argparse.ArgumentTypeError("must be a percentage above 50 and below 100")
    return value


def _pct(value: float) -> str:
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return "+inf %" if value > 0 else "-inf %"
    if value >= 900:  # ten times A's or more: a factor reads where +7,409,863 % does not
        return f"×{1 + value / 100:,.0f}"
    return f"{value:+.1f} %"


def _interval(low: float, high: float) -> str:
    if math.isnan(low) or math.isnan(high):
        return ""
    if math.isinf(low) and math.isinf(high):
        return "unbounded"
    return f"[{_pct(low)}, {_pct(high)}]"


def interval_text(low: float, high: float) -> str:
    """An interval relative to A's median as printed: `[+2.5 %, +14.1 %]`, or `unbounded`."""
    return _interval(low, high)


def row_labels(comparison: RunsComparison, frame: pd.DataFrame) -> list[str]:
    """Readable name of each row: its key and info cells joined by spaces."""
    cols = [c for c in [*comparison.key, *comparison.info] if c != "nth"]
    parts = [frame[c].astype(object).astype(str).tolist() for c in cols]
    return [" ".join(p for p in row if p and p != "nan") for row in zip(*parts, strict=True)]


def gate_failures(comparison: RunsComparison, fail_above: float, min_share: float) -> list[str]:
    """One sentence per significant slowdown above `fail_above` %: the total, then rows."""
    out: list[str] = []
    t = comparison.total
    if t.verdict == VERDICT_SLOWER and t.change_pct > fail_above:
        unit = comparison.total_unit
        out.append(
            f"{comparison.total_label} slower {_pct(t.change_pct)} "
            f"{_interval(t.low_pct, t.high_pct)} (> {fail_above:g} %): median "
            f"{format_value(t.median_a, unit)} → {format_value(t.median_b, unit)}"
        )
    rows = regressions(comparison, fail_above, min_share)
    m = comparison.metric
    unit = unit_of(m)
    for label, (_, row) in zip(row_labels(comparison, rows), rows.iterrows(), strict=True):
        out.append(
            f"{label}: {m} slower {_pct(row['change_pct'])} "
            f"{_interval(row['ci_low_pct'], row['ci_high_pct'])} (> {fail_above:g} %): median "
            f"{format_value(row[f'{m}_a'], unit)} → {format_value(row[f'{m}_b'], unit)}"
        )
    return out


def _cells(comparison: RunsComparison, frame: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    m = comparison.metric
    unit = unit_of(m)
    short = m.removesuffix("_ns").removesuffix("_bytes")
    text_cols = [c for c in [*comparison.key, *comparison.info] if c != "nth"]
    header = ["verdict", *text_cols, f"{short} A", f"{short} B", "change", "interval"]
    cells = [frame["verdict"].astype(str).tolist()]
    cells += [[format_cell(c, v) for v in frame[c].tolist()] for c in text_cols]
    for col in (f"{m}_a", f"{m}_b"):
        cells.append([format_value(v, unit) for v in frame[col]])
    cells.append([_pct(v) for v in frame["change_pct"]])
    cells.append(
        [
            _interval(lo, hi)
            for lo, hi in zip(frame["ci_low_pct"], frame["ci_high_pct"], strict=True)
        ]
    )
    return header, cells


def format_table(comparison: RunsComparison, frame: pd.DataFrame) -> str:
    header, cells = _cells(comparison, frame)
    n_text = len(header) - 4  # the key columns; the four figures right-aligned
    return aligned_columns(header, cells, [i >= n_text for i in range(len(header))])


def _runs_text(paths: list[Path]) -> str:
    if len(paths) <= 3:
        return ", ".join(map(str, paths))
    return f"{paths[0]} … {paths[-1]}"


def method_line(c: RunsComparison) -> str:
    """Which statistics made the intervals, how the rows were corrected for being tested
    together, and a hint when too few samples leave every interval unbounded."""
    fewest = c.fewest or min(len(c.paths_a), len(c.paths_b))
    over = "" if c.samples == "runs" else f" over the {c.samples} of each side"
    corr = c.correction
    if fewest < 2 or (c.method == significance.RANK and c.coverage < c.confidence):
        need = max(2, significance.min_runs(c.confidence))
        return (
            f"change{over}: {c.method}; no interval: {fewest} {c.samples} per side cannot "
            f"reach {c.confidence * 100:g} % confidence, record {need} or more or lower "
            "--confidence"
        )
    if corr is None or corr.tested < 2:
        return (
            f"change{over}: {c.method}, {c.coverage * 100:.1f} % interval "
            f"(asked {c.confidence * 100:g} %)"
        )
    return (
        f"change{over}: {c.method}; {significance.CORRECTION} over {corr.tested} rows "
        f"(false discovery rate {(1 - c.confidence) * 100:g} %, asked {c.confidence * 100:g} %): "
        f"{corr.selected} selected, {c.coverage * 100:.2f} % interval per row"
    )


def _header(c: RunsComparison, shown: int) -> list[str]:
    phrase = FORMAT_PHRASES.get(c.format, c.format)
    unit = c.total_unit
    t = c.total
    what = "ranks" if c.format == "job" and c.samples != "runs" else "runs"
    lines = [
        f"A: {len(c.paths_a)} {what} ({_runs_text(c.paths_a)}) · {c.format} ({phrase}) · "
        f"{c.total_label} median {format_value(t.median_a, unit)}",
        f"B: {len(c.paths_b)} {what} ({_runs_text(c.paths_b)}) · {c.format} ({phrase}) · "
        f"{c.total_label} median {format_value(t.median_b, unit)}",
        f"total: {_pct(t.change_pct)} {_interval(t.low_pct, t.high_pct)} {t.verdict}",
    ]
    counts = c.table["verdict"].value_counts()
    tally = ", ".join(f"{int(counts.get(v, 0))} {v}" for v in VERDICTS)
    total = len(c.table)
    rows = (
        f"{total:,} rows" if shown == total else f"top {shown:,} of {total:,} rows (--top 0: all)"
    )
    match = f", match {c.match}" if c.format in ("pstats", "memprof_text") else ""
    lines.append(f"view {c.view}, metric {c.metric}{match}: {rows} · {tally}")
    lines.append(method_line(c))
    return lines


def write_runs(
    comparison: RunsComparison,
    top: int,
    fmt: str,
    out: TextIO,
    failures: list[str] | None = None,
    fail_above: float | None = None,
) -> None:
    """Write the comparison as a table, CSV (every column) or one JSON object."""
    c = comparison
    shown = c.table.head(top) if top > 0 else c.table
    if fmt == "json":
        t = c.total

        def finite(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        def side(paths: list[Path], values: Any, median: float) -> dict[str, Any]:
            return {"paths": [str(p) for p in paths], "format": c.format,
                    "totals": [float(v) for v in values], "median": float(median)}  # fmt: skip

        doc = {
            "view": c.view, "metric": c.metric, "match": c.match, "method": c.method,
            "confidence": c.confidence, "coverage": c.coverage,
            "a": side(c.paths_a, t.values_a, t.median_a),
            "b": side(c.paths_b, t.values_b, t.median_b),
            "total_label": c.total_label, "total_unit": c.total_unit.value,
            "total": {"change_pct": finite(t.change_pct), "ci_low_pct": finite(t.low_pct),
                      "ci_high_pct": finite(t.high_pct), "p_value": t.shift.p_value,
                      "verdict": t.verdict},
            "correction": None if c.correction is None else {
                "method": significance.CORRECTION, "rows_tested": c.correction.tested,
                "rows_selected": c.correction.selected, "row_level": c.correction.level},
            "total_rows": len(c.table), "fail_above": fail_above, "regressions": failures,
            "rows": records(shown),
        }  # fmt: skip
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
    elif fmt == "csv":
        shown.to_csv(out, index=False)
    else:
        out.write("\n".join(_header(c, len(shown))) + "\n\n")
        out.write(format_table(c, shown) + "\n")


def run(args: argparse.Namespace, two_runs: Any) -> int:
    """Several runs per side; `two_runs(args)` handles the one-run-per-side case as before."""
    if not args.baseline or not args.candidate:
        raise CliError("--baseline and --candidate go together: give runs for both sides")
    if args.a is not None or args.b is not None:
        raise CliError("give either two runs (A B) or --baseline … --candidate …, not both")
    if _job_sets(args):
        return run_job_sets(args)
    files_a = expand(args.baseline, "baseline")
    files_b = expand(args.candidate, "candidate")
    if len(files_a) == 1 and len(files_b) == 1:
        args.a, args.b = files_a[0], files_b[0]
        result: int = two_runs(args)
        return result
    bundles_a = [load_bundle(p) for p in files_a]
    bundles_b = [load_bundle(p) for p in files_b]
    confidence = args.confidence / 100.0
    return _reported(
        lambda: diff_runs(
            bundles_a, bundles_b, view=args.view, metric=args.metric, match=args.match,
            confidence=confidence, min_share_pct=args.min_share,
        ),
        args,
    )  # fmt: skip


# Views whose rows only jobs have: folders on both sides are runs of a job there.
JOB_ONLY_VIEWS = ("ranks", "collectives")


def _job_sets(args: argparse.Namespace) -> bool:
    """Each side's arguments are folders, each one run of a multi-rank job: with `--jobs`, or
    a view only jobs have (ranks, collectives)."""
    from perfview.core.compare import job_runs

    sources = [*args.baseline, *args.candidate]
    wanted = getattr(args, "jobs", False) or args.view in JOB_ONLY_VIEWS
    if not wanted:
        return False
    if args.view not in job_runs.VIEWS:
        raise CliError(
            f"runs of a job compare in the views {', '.join(job_runs.VIEWS)}: give --view"
        )
    missing = [s for s in sources if not os.path.isdir(s)]
    if missing:
        raise CliError(f"a run of a job is a folder of rank traces, not {missing[0]}")
    return True


def run_job_sets(args: argparse.Namespace) -> int:
    """Several runs of a job per side (`core.compare.job_sets`): one sample per run."""
    from perfview import job_cli
    from perfview.core.compare.job_sets import diff_job_sets

    jobs_a = [job_cli.open_side(s) for s in args.baseline]
    jobs_b = [job_cli.open_side(s) for s in args.candidate]
    paths = ([Path(s) for s in args.baseline], [Path(s) for s in args.candidate])
    return _reported(
        lambda: diff_job_sets(
            jobs_a, jobs_b, args.view, args.metric, args.confidence / 100.0, args.min_share,
            paths,
        ),
        args,
    )  # fmt: skip


def report(comparison: RunsComparison, args: argparse.Namespace) -> int:
    """Print the comparison and apply `--fail-above`; the exit status (1: a regression)."""
    failures: list[str] | None = None
    if args.fail_above is not None:
        failures = gate_failures(comparison, args.fail_above, args.min_share)
    write_runs(comparison, args.top, args.format, sys.stdout, failures, args.fail_above)
    for line in (failures or [])[:MAX_GATE_LINES]:
        print(f"perfview: regression: {line}", file=sys.stderr)
    if failures and len(failures) > MAX_GATE_LINES:
        print(f"perfview: … and {len(failures) - MAX_GATE_LINES} more", file=sys.stderr)
    return 1 if failures else 0


def _reported(compare: Callable[[], RunsComparison], args: argparse.Namespace) -> int:
    """Run a comparison of runs (profiles or jobs) and report it: a comparison the inputs
    cannot make is one sentence, anything else an internal failure named as such."""
    try:
        comparison = compare()
    except ValueError as exc:
        raise CliError(f"cannot compare the baseline with the candidate runs: {exc}") from exc
    except Exception as exc:
        raise internal_failure("comparing the baseline with the candidate runs", exc) from exc
    return report(comparison, args)


__all__ = [
    "MIN_SHARE_PCT",
    "confidence_arg",
    "expand",
    "gate_failures",
    "interval_text",
    "report",
    "run",
    "run_job_sets",
    "write_runs",
]
