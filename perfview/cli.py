"""The `perfview` command: headless subcommands, and the GUI for everything else.

Public contract (users' scripts rely on it):

    perfview summary FILE [--view VIEW] [--top N] [--format table|csv|json] [--lanes LANES]
                         [--thread NAME_OR_ID]
    perfview record …   (declared in perfview.runner.cli)
    perfview diff A B … (declared in perfview.compare_cli)
    perfview examples [list] / perfview examples run NAME [--fixed] [-o OUT]
    perfview query FILE SQL [--format table|csv|json]   (declared in perfview.query_cli)
    perfview export FILE --to speedscope|collapsed [-o OUT]   (declared in perfview.export_cli)
    perfview mcp   (an assistants' server on stdio; declared in perfview.mcp_cli)
    perfview [FILE…] / perfview --screenshot OUT.png [--view VIEW] FILE   → the GUI

Exit codes: 0 success; 2 for usage errors and for files that cannot be opened, with exactly one
line `perfview: cannot open PATH: reason` on stderr and never a traceback (set PERFVIEW_DEBUG=1
to get one); 1 for an internal error after a successful load. Qt is imported only in the GUI
branch, so the headless commands work where PySide6 is missing.

Start-up: `perfview FILE` must show its window fast, so this module imports nothing heavy at
the top. Whether the arguments open the window is decided from the first argument alone
(`COMMANDS`, checked against the parser by a test); pandas and the rest of the headless
machinery are imported only for a subcommand.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

from perfview import __version__, startup_stamps

# The first arguments that mean "no window": the subcommands and the top-level options.
COMMANDS = ("summary", "record", "diff", "examples", "query", "export", "mcp")
HEADLESS_FIRST = frozenset(
    ("-h", "--help", "--version", "--install-desktop", "--uninstall-desktop", *COMMANDS)
)
_REEXPORTED = ("CliError", "cannot_open", "load_bundle", "row_count", "write_summary")


def __getattr__(name: str) -> Any:
    """`perfview.cli.CliError` and friends, imported from `cli_common` only when asked for."""
    if name in _REEXPORTED:
        from perfview import cli_common

        return getattr(cli_common, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------------------- commands


def run_summary(args: argparse.Namespace) -> int:
    from perfview import job_cli, readahead  # deferred: jobs only / stdlib
    from perfview.cli_common import (
        CliError,
        internal_failure,
        load_bundle,
        view_table,
        write_summary,
    )
    from perfview.core.model.errors import LoadError
    from perfview.core.pages import summary

    if job_cli.wants_job(args):
        return job_cli.run_job(args)
    startup_stamps.stamp("imported")
    bundle = load_bundle(args.file)
    readahead.discard()  # when the loader did not take it (another format, a cache hit)
    startup_stamps.stamp("loaded")
    view = args.view or summary.default_view(bundle)
    try:
        edits = getattr(args, "edit", None) or ()
        table, total = view_table(
            bundle, view, args.top, getattr(args, "lanes", None), edits,
            thread=getattr(args, "thread", None),
        )  # fmt: skip
    except LoadError as exc:  # ViewError: the view, --lanes or --thread do not fit this file
        raise CliError(str(exc)) from exc
    except Exception as exc:  # an internal error, still one line
        raise internal_failure(f"building view {view!r} for {args.file}", exc) from exc
    startup_stamps.stamp("table_built")
    write_summary(bundle, view, table, 0, args.format, sys.stdout, total_rows=total)
    startup_stamps.stamp("written")
    return 0


def _add_summary(subparsers: Any) -> None:
    from perfview.cli_common import FORMATS, row_count
    from perfview.core.pages import summary

    views = ", ".join(summary.VIEWS)  # a job's views (ranks, collectives, …) among them
    p = subparsers.add_parser(
        "summary",
        help="print a table of a profile without opening a window",
        description=f"Print one view of FILE as a table, CSV or JSON. Views: {views}.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a profile, trace or memory file; a folder, glob or several files of per-rank traces",
    )
    p.add_argument("--view", choices=list(summary.VIEWS), help="default: the format's main view")
    p.add_argument("--top", type=row_count, default=20, help="rows to show; 0 = all")
    p.add_argument(
        "--lanes",
        metavar="LANES",
        help="icicle/tree of a trace: cpu (default), gpu, all, pid:N, a lane number or a "
        "fragment of its label",
    )
    p.add_argument(
        "--thread",
        metavar="NAME_OR_ID",
        help="icicle/tree of a sampled profile with several threads: one thread, by its id in "
        "--view threads, its name or a fragment of it (default: all threads merged)",
    )
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")
    p.add_argument(
        "--edit",
        action="append",
        metavar="EDIT",
        help="--view what-if: one change to replay, repeatable: kernel:GLOB=F, cpu:GLOB=F, "
        "memcpy:GLOB=F, category:NAME=F, comm=F, data=F, launch=F, all=F, sync:remove, "
        "overlap:comm; on a job's folder also rank:N=F and rank:N=median",
    )
    from perfview import job_cli

    job_cli.add_arguments(p)
    p.set_defaults(func=run_summary)


def _add_commands(subparsers: Any) -> None:
    """Register `record`, `diff`, `examples`, `query`, `export` and `mcp`, each declared by
    its own module."""
    from perfview import compare_cli, examples_cli, export_cli, mcp_cli, query_cli
    from perfview.runner import cli as runner_cli

    for module in (runner_cli, compare_cli, examples_cli, query_cli, export_cli, mcp_cli):
        before = set(subparsers.choices)
        module.add_parser(subparsers)
        for added in set(subparsers.choices) - before:
            subparsers.choices[added].set_defaults(func=module.run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perfview",
        description="View cProfile, torch.profiler/Chrome trace and memory_profiler files.",
        epilog="Without a subcommand, `perfview [FILE…]` opens the viewer window; "
        "`perfview --screenshot OUT.png [--view VIEW] FILE` saves a picture of it.",
    )
    parser.add_argument("--version", action="version", version=f"perfview {__version__}")
    desktop = parser.add_mutually_exclusive_group()
    desktop.add_argument(
        "--install-desktop",
        action="store_true",
        help="register perfview for the current user: menu entry, file types, icon",
    )
    desktop.add_argument("--uninstall-desktop", action="store_true", help="undo --install-desktop")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_summary(subparsers)
    _add_commands(subparsers)
    return parser


def opens_window(argv: Sequence[str]) -> bool:
    """True when `argv` opens the window: no subcommand and no top-level help/version option.

    Decided without building the parser (which imports the headless commands' modules)."""
    return not argv or argv[0] not in HEADLESS_FIRST


def run_gui(argv: list[str], *, end_process: bool = False) -> int:
    """Hand over to the Qt application (imported only here: the headless path stays Qt-free).
    `end_process` (the process's own run, `quick_exit`): see `perfview.qt.app.main`."""
    try:
        app = importlib.import_module("perfview.qt.app")
    except ImportError as exc:
        print(
            f"perfview: the viewer window is not available ({exc}); "
            "`perfview summary FILE` works without it",
            file=sys.stderr,
        )
        return 2
    return int(app.main(argv, end_process=end_process))


def main(argv: Sequence[str] | None = None, *, quick_exit: bool = False) -> int:
    """Run perfview with `argv` (default: the command line); returns the exit code.

    `quick_exit`: once a headless command is done, flush the output, run the exit handlers
    (temporary folders, child processes) and end the process at once, skipping the teardown
    of every object: after `perfview summary` of a 1 GB trace that teardown took ~0.4 s of
    CPU and changed nothing the user sees. Tests call `main` in-process and leave it off."""
    startup_stamps.stamp("main")
    args_list = list(sys.argv[1:] if argv is None else argv)
    if opens_window(args_list):
        try:
            return run_gui(args_list, end_process=quick_exit)
        except SystemExit as exc:  # the window's argparse: --help (0) and usage errors (2)
            return exc.code if isinstance(exc.code, int) else 2
        except KeyboardInterrupt:
            return 130
    if quick_exit:
        _collect_less()
        _read_ahead(args_list)
    code = _headless(args_list)
    if quick_exit:
        _end_now(code)
    return code


def _headless(args_list: list[str]) -> int:
    """A subcommand, or top-level help/version/desktop registration."""
    from perfview.cli_common import CliError

    try:
        parser = build_parser()
        args = parser.parse_args(args_list)
        if args.install_desktop or args.uninstall_desktop:
            from perfview import desktop

            return desktop.install() if args.install_desktop else desktop.uninstall()
        if getattr(args, "func", None) is None:
            parser.print_help()
            return 0
        from perfview.cli_common import fetch_urls

        fetch_urls(args)
        return int(args.func(args))
    except CliError as exc:
        print(f"perfview: {exc}", file=sys.stderr)
        return exc.code
    except SystemExit as exc:  # argparse: --help/--version (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `perfview summary … | head`: the reader left; not an error
        _silence_stdout()
        return 0


def _read_ahead(args_list: list[str]) -> None:
    """`perfview summary BIG.json`: read (map) the file and start scanning it on another
    thread before the main thread imports pandas and the rest (`perfview.readahead`,
    `_scan_ahead`: the scan starts ~0.3 s sooner at 1 GB and overlaps those imports), when
    it is one big plain trace the cache surely does not hold; and keep malloc's raised
    thresholds after the build (`trace.heap`). Only for the one-shot command
    (`quick_exit`): tests and scripts that call `main` in-process run as before."""
    from perfview import readahead

    if not args_list or args_list[0] != "summary":
        return
    files = [a for a in args_list[1:] if not a.startswith("-") and readahead.worth_it(a)]
    one = len(files) == 1 and not readahead.maybe_cached(files[0])
    if one and readahead.start(files[0], then=_scan_ahead):
        # the main thread's imports wait until the scan runs: importing on both threads at
        # once halved each one's speed, and the scan started no sooner
        _SCANNING.wait(5.0)
    # after the read-ahead started: this imports the loaders (pandas)
    from perfview.loaders.trace import heap

    heap.keep_after_blocks()  # the summary table reuses the build's freed heap too


def _scan_ahead(text: Any) -> object:
    """What the read-ahead thread does next (`readahead.start`'s `then`): scan the file while
    the main thread still imports pandas and the loaders (~0.4 s at start-up, when one core
    is idle), when the compiled scanner is on disk; the loader takes the result
    (`readahead.followed`). Never compiles here: the loader says that it compiles, and does.
    The scanner's modules import no pandas (`perfview.loaders` imports its names lazily)."""
    try:
        from perfview.loaders.trace.scan import parallel

        if not parallel.compiled():
            raise LookupError("the scanner is not compiled yet")
        parallel.warm(scan_only=True)
    finally:
        _SCANNING.set()
    return parallel.scan(text, lambda fraction, message: None, 0.2, 0.8)


_SCANNING = threading.Event()  # the scan-ahead is scanning (or gave up): imports go on


def _collect_less() -> None:
    """A one-shot command allocates millions of objects while importing numba and pandas and
    building tables, and few of them form cycles: collecting every 700 allocations cost ~0.2 s
    of CPU in a 1 GB `perfview summary`. Collect far less often, never not at all."""
    gc.freeze()  # what the imports so far made is never garbage: stop traversing it
    gc.set_threshold(200_000, 50, 100)


def _end_now(code: int) -> None:
    """What the interpreter does at exit that matters here, in its order: threading's own
    shutdown (its exit callbacks, which stop idle `concurrent.futures` workers, then a wait
    for the threads that are not daemons: the cache writer, a recorded script's), the exit
    handlers, a flush. Joining the non-daemon threads without those callbacks hung `perfview
    record` for ever after a script whose torch.compile left a thread pool's idle worker."""
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx calls first
    atexit._run_exitfuncs()
    startup_stamps.stamp("exit")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said there
            _silence_stdout()
    os._exit(code)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


__all__ = [  # noqa: F822 - the cli_common names come from __getattr__
    "COMMANDS",
    "CliError",
    "build_parser",
    "cannot_open",
    "load_bundle",
    "main",
    "opens_window",
    "row_count",
    "write_summary",
]
