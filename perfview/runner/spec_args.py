"""The `perfview record` command line: its argparse options and Namespace -> RunSpec.

Kept apart from `spec.py` because only the two command-line entry points (`perfview record` and
`python -m perfview.runner.record`, plus the examples runner) parse arguments; the GUI and the
mode modules need only the RunSpec/RunOptions data. Stdlib only, like `spec.py`: the recorder
child imports it in whatever interpreter the user picked.
"""

from __future__ import annotations

import argparse

from perfview.runner.spec import MODES, RunOptions, RunSpec, parse_schedule


def _schedule_arg(text: str) -> tuple[int, ...]:
    try:
        return parse_schedule(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `record` options, shared by `perfview record` and `python -m perfview.runner.record`."""
    parser.add_argument("--mode", "-m", required=True, choices=MODES, help="what to record")
    parser.add_argument("-o", "--output", help="output file (default: a new runs folder)")
    parser.add_argument("--cwd", help="working directory for the script (default: current)")
    torch = parser.add_argument_group("torch mode")
    torch.add_argument("--record-shapes", action="store_true", help="record input shapes")
    torch.add_argument("--profile-memory", action="store_true", help="record tensor memory")
    torch.add_argument("--with-stack", action="store_true", help="record Python stacks")
    torch.add_argument(
        "--schedule",
        type=_schedule_arg,
        metavar="W,U,A[,R]",
        help="torch.profiler schedule wait,warmup,active[,repeat]; the script steps it by "
        "calling perfview_step() (or see --step-every / --step-on-optimizer)",
    )
    torch.add_argument("--step-every", type=float, metavar="SECONDS", help="step by time")
    torch.add_argument(
        "--step-on-optimizer", action="store_true", help="step after each optimizer.step()"
    )
    mem = parser.add_argument_group("memory modes")
    mem.add_argument("--interval", type=float, default=0.1, help="sampling period (memory)")
    mem.add_argument(
        "--no-children", action="store_true", help="do not add child processes' memory"
    )
    mem.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME",
        help="memory-lines: profile this function (name or Class.method) of the script's "
        "folder; repeatable; @profile-decorated functions are always profiled",
    )
    mem.add_argument("--precision", type=int, default=1, help="memory-lines decimals")
    alloc = parser.add_argument_group("allocation modes (memray, cuda-memory)")
    alloc.add_argument(
        "--max-entries",
        type=int,
        default=100_000,
        help="cuda-memory: allocator events kept in the history (ring buffer)",
    )
    samp = parser.add_argument_group("sample mode (py-spy)")
    samp.add_argument("--rate", type=_positive_int, default=100, metavar="HZ", help="samples/s")
    samp.add_argument(
        "--native", action="store_true", help="memray, sample: include native (C/C++) frames"
    )
    samp.add_argument("--subprocesses", action="store_true", help="also sample child processes")
    samp.add_argument("--gil", action="store_true", help="only samples holding the GIL")
    samp.add_argument("--pid", type=_positive_int, help="attach to this running process")
    samp.add_argument("--duration", type=float, metavar="S", help="seconds to sample --pid")
    parser.add_argument("script", nargs="?", default="", help="the Python script to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def spec_from_args(ns: argparse.Namespace, base: str | None = None) -> RunSpec:
    """A resolved RunSpec from parsed `add_arguments` options."""
    args = list(ns.script_args or [])
    if args[:1] == ["--"]:
        args = args[1:]
    pid = getattr(ns, "pid", None)
    if pid is not None and ns.mode != "sample":
        raise ValueError("--pid works with --mode sample only")
    if pid is not None and (ns.script or args):
        raise ValueError("give either --pid or a script to run, not both")
    if pid is None and not ns.script:
        raise ValueError("a script to run is needed (or --mode sample --pid PID)")
    options = RunOptions(
        record_shapes=bool(ns.record_shapes),
        profile_memory=bool(ns.profile_memory),
        with_stack=bool(ns.with_stack),
        schedule=ns.schedule,
        step_every=ns.step_every,
        step_on_optimizer=bool(ns.step_on_optimizer),
        interval=float(ns.interval),
        include_children=not ns.no_children,
        functions=tuple(ns.function or ()),
        precision=int(ns.precision),
        native=bool(getattr(ns, "native", False)),
        max_entries=int(getattr(ns, "max_entries", 100_000)),
        rate=int(getattr(ns, "rate", 100)),
        subprocesses=bool(getattr(ns, "subprocesses", False)),
        gil=bool(getattr(ns, "gil", False)),
        pid=pid,
        duration=getattr(ns, "duration", None),
    )
    spec = RunSpec(
        mode=ns.mode,
        script=ns.script,
        args=tuple(args),
        cwd=ns.cwd,
        output=ns.output,
        options=options,
    )
    return spec.resolved(base)
