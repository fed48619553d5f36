"""`perfview examples`: the bundled demos of classic PyTorch slow-downs, listed or recorded.

    perfview examples [list]                      name, what it shows, the advice it triggers
    perfview examples run NAME [--fixed] [-o OUT] record it under torch.profiler

`run` records the demo's slow form (or `--fixed`) with the options it needs (perfview/runner/
examples.py: a schedule, with_stack / record_shapes) through the same recorder as `perfview
record`, then prints the trace's path as the last line of stdout (after what the demo printed;
stderr has the recorder's messages), so
`perfview summary "$(perfview examples run pairwise-loop | tail -1)" --view recommendations`.
Without -o the trace goes to a new folder of the runs directory. Exit code: the script's
(2 for an unknown demo).
"""

from __future__ import annotations

import argparse
from typing import Any

from perfview.runner.examples import DEMOS


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `examples` sub-command to an argparse `add_subparsers()` object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "examples",
        help="list or record the bundled PyTorch demos (slow and fixed forms)",
        description="List or record the bundled demos of classic PyTorch slow-downs.",
    )
    sub = parser.add_subparsers(dest="examples_command", metavar="ACTION")
    sub.add_parser("list", help="list the demos (the default)")
    run = sub.add_parser("run", help="record one demo under torch.profiler")
    run.add_argument("name", metavar="NAME", help=f"one of: {', '.join(DEMOS)}")
    run.add_argument("--fixed", action="store_true", help="record the fixed form")
    run.add_argument("-o", "--output", help="trace file (default: a new runs folder)")
    return parser


def list_demos() -> str:
    """The demos as aligned text: name, what it shows, the recommendation its slow form gets."""
    width = max(len(n) for n in DEMOS)
    lines = [f"{'name'.ljust(width)}  what it shows / the advice its slow form gets"]
    for demo in DEMOS.values():
        lines.append(f"{demo.name.ljust(width)}  {demo.summary}")
        lines.append(f"{''.ljust(width)}  → {demo.finding}")
    lines.append("")
    lines.append("record one: perfview examples run NAME [--fixed]; compare the two with "
                 "perfview diff SLOW FIXED")  # fmt: skip
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from perfview.cli_common import CliError

    if getattr(args, "examples_command", None) in (None, "list"):
        print(list_demos())
        return 0
    demo = DEMOS.get(args.name)
    if demo is None:
        raise CliError(f"there is no demo {args.name!r} (demos: {', '.join(DEMOS)})")
    return record_demo(demo.name, args.fixed, args.output)


def record_demo(name: str, fixed: bool, output: str | None) -> int:
    """Record demo `name` to `output` (None: a new runs folder, listed in the GUI's Runs like
    any `perfview record` run); prints the path on success."""
    from pathlib import Path

    from perfview.runner import record
    from perfview.runner.examples import demo_spec
    from perfview.runner.spec import STATUS_FAILED, STATUS_OK, RunRecord, prepare_output

    base = demo_spec(name, fixed, output)
    if record.missing_module(base.mode):  # no torch here: say so, leave no empty run behind
        return record.execute(base)
    spec, folder = prepare_output(base)
    run = RunRecord.start(spec, folder) if folder else None
    code = record.execute(spec)
    written = Path(str(spec.output)).is_file()
    if run is not None:
        run.finish(STATUS_OK if code == 0 and written else STATUS_FAILED, code)
    if code == 0 and written:
        print(spec.output)
    return code


__all__ = ["add_parser", "list_demos", "record_demo", "run"]
