"""`perfview diff A B --view structure`: two traces aligned by structure, first divergence first.

Rows (`perfview.core.compare.structure`): path, status (same|changed|inserted|removed), a_ns,
b_ns, delta_ns, in execution order. By default only the rows that differ are listed (up to
`--top`); `--top 0` lists every aligned node, the same ones too.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TextIO

import pandas as pd

from perfview.cli_common import CliError, aligned_columns, internal_failure, load_bundle, records
from perfview.core.compare.structure import SAME, STATUSES, StructureDiff, diff_structure
from perfview.core.model.units import Unit, format_value

VIEW = "structure"
COLUMNS = ["path", "status", "a_ns", "b_ns", "delta_ns"]


def _ns(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return ""
    text = format_value(abs(value) if signed else value, Unit.NS)
    if not signed:
        return text
    return ("+" if value > 0 else "-" if value < 0 else "±") + text


def shown_rows(diff: StructureDiff, top: int) -> pd.DataFrame:
    """Every row with `--top 0`, else the rows that differ, at most `top`."""
    table = diff.table[COLUMNS]
    if top <= 0:
        return table
    return table[table["status"] != SAME].head(top)


def _text_table(rows: pd.DataFrame) -> str:
    header = ["status", "path", "A", "B", "Δ"]
    cells = [
        rows["status"].tolist(),
        rows["path"].tolist(),
        [_ns(v) for v in rows["a_ns"]],
        [_ns(v) for v in rows["b_ns"]],
        [_ns(v, signed=True) for v in rows["delta_ns"]],
    ]
    return aligned_columns(header, cells, [i >= 2 for i in range(len(header))])  # status, path


def write_structure(diff: StructureDiff, path_a: str, path_b: str, top: int, fmt: str,
                    out: TextIO) -> None:  # fmt: skip
    rows = shown_rows(diff, top)
    counts = diff.table["status"].value_counts()
    tally = {s: int(counts.get(s, 0)) for s in STATUSES}
    first = diff.first_divergence
    if fmt == "json":
        first_row = records(diff.table[COLUMNS].iloc[[first]])[0] if first is not None else None
        doc = {"view": VIEW, "a": {"path": path_a}, "b": {"path": path_b}, "counts": tally,
               "first_divergence": first_row, "total_rows": len(diff.table),
               "rows": records(rows)}  # fmt: skip
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
        return
    if fmt == "csv":
        rows.to_csv(out, index=False)
        return
    where = "none: the two traces have the same structure"
    if first is not None:
        row = diff.table.iloc[first]
        where = f"{row['path']} ({row['status']})"
    which = "every row" if top <= 0 else f"rows that differ (up to {top}; --top 0: every row)"
    out.write(
        f"A: {path_a}\nB: {path_b}\n"
        f"structure: {', '.join(f'{n} {s}' for s, n in tally.items())}\n"
        f"first divergence: {where}\n"
        f"view structure: {which}\n\n"
    )
    out.write(_text_table(rows) + "\n")


def run(args: argparse.Namespace) -> int:
    """Align B against A; exit 0 (a structure view has no gate), 2 for unusable input."""
    if args.fail_above is not None:
        raise CliError("--fail-above does not apply to --view structure")
    bundle_a, bundle_b = load_bundle(args.a), load_bundle(args.b)
    for path, bundle in ((args.a, bundle_a), (args.b, bundle_b)):
        if bundle.timeline is None:
            raise CliError(
                f"--view structure compares two traces; {path} is a {bundle.format} file"
            )
    try:
        diff = diff_structure(bundle_a.timeline, bundle_b.timeline)
    except Exception as exc:
        raise internal_failure(f"aligning {args.a} with {args.b}", exc) from exc
    write_structure(diff, args.a, args.b, args.top, args.format, sys.stdout)
    return 0


__all__ = ["VIEW", "run", "shown_rows", "write_structure"]
