"""`perfview query FILE SQL [--format table|csv|json]`: SQL over a loaded file (DuckDB).

Registered on the `perfview` command by perfview.cli. The tables and their columns are those
of `perfview.core.analysis.query.TABLES` (listed in the README). Exit codes follow the
other subcommands: 2 with one line on stderr for a file that cannot be opened, a query DuckDB
rejects (its message's first line), or DuckDB missing (how to install it); never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

import pandas as pd

from perfview.cli_common import FORMATS, CliError, format_table, load_bundle, records, shown_path
from perfview.core.model.errors import LoadError


def add_parser(subparsers: Any) -> None:
    """Register `query` on the `perfview` command's subparsers (called by perfview.cli)."""
    from perfview.core.analysis.query import TABLES

    p = subparsers.add_parser(
        "query",
        help="run SQL (DuckDB) over a profile's tables without opening a window",
        description="Run one SQL query over FILE's tables and print the result. Tables (those "
        f"the file has): {', '.join(TABLES)}. Times are int64 ns; name a column *_ns to get "
        "units in table output.",
    )
    p.add_argument("file", metavar="FILE", help="a profile, trace or memory file")
    p.add_argument("sql", metavar="SQL", help='the query, e.g. "SELECT count(*) FROM slices"')
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")


def run(args: argparse.Namespace) -> int:
    from perfview.core.analysis import query

    if not query.available():
        raise CliError(query.INSTALL_HINT)
    bundle = load_bundle(args.file)
    try:
        frame = query.run_query(bundle, args.sql)
    except LoadError as exc:  # QueryError: DuckDB's one line
        raise CliError(f"query failed: {exc}") from exc
    write_result(shown_path(bundle.path), args.sql, frame, args.format, sys.stdout)
    return 0


def write_result(path: str, sql: str, frame: pd.DataFrame, fmt: str, out: TextIO) -> None:
    """The result in the summary command's formats (its writers: records, format_table)."""
    frame = frame.rename(columns=lambda c: str(c))
    if fmt == "json":
        doc = {
            "path": path,
            "query": sql,
            "columns": [str(c) for c in frame.columns],
            "total_rows": len(frame),
            "rows": records(frame),
        }
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
    elif fmt == "csv":
        frame.to_csv(out, index=False)
    else:
        if len(frame.columns):
            out.write(format_table(frame) + "\n")
        out.write(f"({len(frame):,} row{'s' if len(frame) != 1 else ''})\n")


__all__ = ["add_parser", "run", "write_result"]
