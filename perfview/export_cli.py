"""`perfview export FILE --to speedscope|collapsed -o OUT`: the file's merged call tree in a
format other tools read (speedscope.app, flamegraph.pl, inferno).

    perfview export FILE --to speedscope|collapsed [-o OUT]   (OUT "-" or absent: stdout)

Works for every format with a call tree: pstats (its estimated tree), traces (merged CPU
slices) and sampled profiles. The input is never written: an OUT naming the input file is
refused. Exit codes as for `summary`: 2 with one `perfview: …` line for bad input or usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from perfview.cli_common import CliError, load_bundle
from perfview.core.analysis import tree_export as export
from perfview.core.analysis.bundle_tree import tree_for

TARGETS = ("speedscope", "collapsed")


def add_parser(subparsers: Any) -> None:
    """Register `export` on the `perfview` command's subparsers (called by perfview.cli)."""
    p = subparsers.add_parser(
        "export",
        help="write a file's merged call tree as speedscope JSON or collapsed stacks",
        description="Export the merged call tree (pstats, trace or sampled profile).",
    )
    p.add_argument("file", metavar="FILE", help="the profile to export")
    p.add_argument("--to", choices=TARGETS, required=True, help="output format")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.set_defaults(func=run)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def run(args: argparse.Namespace) -> int:
    """Load, build the tree, write it; returns the exit status."""
    if args.output != "-" and _same_file(args.file, args.output):
        raise CliError(f"refusing to write {args.output}: it is the input file")
    bundle = load_bundle(args.file)
    tree = tree_for(bundle)
    if tree is None or len(tree) <= 1:
        raise CliError(f"cannot export {args.file}: it has no call tree")
    unit = bundle.sampled.unit if bundle.sampled is not None else "ns"
    if args.to == "speedscope":
        text = export.speedscope_json(tree, name=Path(args.file).name, unit=unit)
    else:
        text = export.to_collapsed(tree)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    return 0
