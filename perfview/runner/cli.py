"""`perfview record`: the command-line face of the recorder.

`perfview record --mode MODE [-o OUT] [options] -- script.py [args…]` runs the recorder in this
very process (the CLI *is* the child the GUI would start), so it shares `record.execute()` and the
option set of `spec_args.add_arguments()` with `python -m perfview.runner.record`.
"""

from __future__ import annotations

import argparse
from typing import Any

from perfview.runner import record
from perfview.runner.spec import MODES
from perfview.runner.spec_args import add_arguments, spec_from_args

EPILOG = f"""modes: {", ".join(MODES)}
  cprofile      cProfile .prof of the whole script
  torch         torch.profiler Chrome trace (.json, or .json.gz by the -o suffix)
  memory        mprof-style .dat: memory sampled every --interval s, child processes included
  memory-lines  memory_profiler line report of @profile / --function functions
  sample        py-spy sampling profile as speedscope JSON (--rate, --native, --subprocesses,
                --gil); --pid PID [--duration S] attaches to a running process instead

Without -o the profile goes to a new folder in the runs directory ($PERFVIEW_RUNS_DIR or
$XDG_DATA_HOME/perfview/runs). The exit code is the script's.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `record` sub-command to an argparse `add_subparsers()` object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "record",
        help="run a Python script under a profiler and save the profile",
        description="Run a Python script under a profiler and save the profile.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Execute a parsed `record` command; returns the script's exit code (2 for usage errors)."""
    try:
        spec = spec_from_args(args)
    except ValueError as exc:
        print(f"perfview: {exc}")
        return record.EXIT_USAGE
    return record.execute(spec)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m perfview.runner.cli record …`), handy before wiring."""
    parser = argparse.ArgumentParser(prog="perfview")
    add_parser(parser.add_subparsers(dest="command", required=True))
    ns = parser.parse_args(argv)
    return int(ns.func(ns))


if __name__ == "__main__":
    raise SystemExit(main())
