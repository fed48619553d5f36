"""The `perfview` command: headless subcommands, and the GUI for everything else.

Public contract (users' scripts rely on it):

    perfview summary FILE [--view VIEW] [--top N] [--format table|csv|json]
    perfview record …   (from perfview.runner.cli, when present)
    perfview diff A B … (from perfview.diff_cli, when present)
    perfview export FILE --to speedscope|collapsed [-o OUT] (perfview.export_cli)
    perfview [FILE…] / perfview --screenshot OUT.png [--view VIEW] FILE   → the GUI

Exit codes: 0 success; 2 for usage errors and for files that cannot be opened, with exactly one
line `perfview: cannot open PATH: reason` on stderr and never a traceback (set PERFVIEW_DEBUG=1
to get one); 1 for an internal error after a successful load. Qt is imported only in the GUI
branch, so the headless commands work where PySide6 is missing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import pandas as pd

from perfview import __version__
from perfview.core import summary
from perfview.core.errors import LoadError
from perfview.core.units import format_ns, format_value

# Subcommands other modules provide: name → module with add_parser(subparsers) and run(args).
OPTIONAL_COMMANDS: dict[str, str] = {
    "record": "perfview.runner.cli",
    "diff": "perfview.diff_cli",
    "export": "perfview.export_cli",
}
FORMATS = ("table", "csv", "json")
TEXT_WIDTH = 60  # widest text cell in table output; longer text is elided
TIMESTAMP_COLUMNS = frozenset({"ts_ns", "start_ns"})  # absolute unix ns in mprof tables
DEBUG_ENV = "PERFVIEW_DEBUG"
# Text columns whose end matters most (a path's file name, `file:line(function)`).
LEFT_ELIDED = frozenset({"file", "caller", "callee"})


class CliError(Exception):
    """A failure to report as one line on stderr; `code` is the exit status."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def cannot_open(path: str, reason: str) -> CliError:
    """The one message shape for unreadable input, shared with other subcommands (diff)."""
    return CliError(f"cannot open {path}: {reason}")


def load_bundle(path: str) -> Any:
    """Load a file for a headless command, turning every failure into a CliError (exit 2).

    Loaders raise LoadError for what they recognise as bad input; anything else on a user's
    file is still bad input from the user's point of view, so it gets the same one-line shape.
    """
    from perfview.loaders import internal_error, load  # deferred: --version skips pandas

    try:
        return load(path)
    except LoadError as exc:
        raise cannot_open(path, str(exc)) from exc
    except Exception as exc:  # no traceback for bad input, see module doc
        if os.environ.get(DEBUG_ENV):
            raise
        raise cannot_open(path, f"{internal_error(exc)} (set {DEBUG_ENV}=1 for details)") from exc


# ---------------------------------------------------------------------------------- output


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: Python ints/floats/str, NaN and ±inf → None."""
    columns: dict[str, list[Any]] = {}
    for col in frame.columns:
        series = frame[col]
        if pd.api.types.is_bool_dtype(series):
            columns[str(col)] = [bool(v) for v in series.tolist()]
        elif pd.api.types.is_integer_dtype(series):
            columns[str(col)] = [int(v) for v in series.tolist()]
        elif pd.api.types.is_float_dtype(series):
            columns[str(col)] = [None if not math.isfinite(v) else v for v in series.tolist()]
        else:
            columns[str(col)] = [_json_scalar(v) for v in series.astype(object).tolist()]
    names = list(columns)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _json_scalar(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def format_cell(column: str, value: Any) -> str:
    """Human text for one cell: units from the column name (perfview.core.units), text elided."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if column in TIMESTAMP_COLUMNS and isinstance(value, int | float) and value > 1e17:
        stamp = pd.Timestamp(int(value), unit="ns", tz="UTC")
        return stamp.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
    unit = summary.column_unit(column)
    if unit is not None:
        return format_value(value, unit)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if column not in ("line", "first_line", "max_line") else str(value)
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() else f"{value:,.3g}"
    return _elide(str(value).replace("\n", " "), left=column in LEFT_ELIDED)


def _elide(text: str, left: bool) -> str:
    """Cut text to TEXT_WIDTH: paths keep their end, names (kernels, ops) their start."""
    if len(text) <= TEXT_WIDTH:
        return text
    return "…" + text[-(TEXT_WIDTH - 1) :] if left else text[: TEXT_WIDTH - 1] + "…"


def format_table(frame: pd.DataFrame) -> str:
    """Aligned plain-text table: numbers right-aligned, text left-aligned, units applied."""
    cols = [str(c) for c in frame.columns]
    cells = [[format_cell(c, v) for v in frame[c].tolist()] for c in cols]
    numeric = [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in cols
    ]
    widths = [max([len(c), *map(len, col)]) for c, col in zip(cols, cells, strict=True)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(cols), line(["-" * w for w in widths])]
    out.extend(line(row) for row in zip(*cells, strict=True))
    return "\n".join(out)


def _header(bundle: Any, view: str, shown: int, total: int) -> list[str]:
    phrase = summary.FORMAT_PHRASES.get(bundle.format, bundle.format)
    # Zero counts (no flows, no counters…) are noise in a header line; JSON keeps them all.
    counts = ", ".join(f"{k} {v:,}" for k, v in bundle.counts.items() if v)
    parts = [str(bundle.path), f"{bundle.format} ({phrase})"]
    if counts:
        parts.append(counts)
    if bundle.duration_ns:
        parts.append(f"duration {format_ns(bundle.duration_ns)}")
    lines = [" · ".join(parts)]
    lines.extend(f"warning: {w}" for w in bundle.warnings)
    rows = (
        f"{total:,} rows" if shown == total else f"top {shown:,} of {total:,} rows (--top 0: all)"
    )
    lines.append(f"view {view}: {rows}")
    return lines


def write_summary(
    bundle: Any, view: str, table: pd.DataFrame, top: int, fmt: str, out: TextIO
) -> None:
    """Write one view of one bundle in the chosen format (see the module docstring)."""
    total = len(table)
    shown = table.head(top) if top > 0 else table
    if fmt == "json":
        doc = {
            "path": str(bundle.path),
            "format": bundle.format,
            "counts": {str(k): int(v) for k, v in bundle.counts.items()},
            "duration_ns": int(bundle.duration_ns),
            "warnings": [str(w) for w in bundle.warnings],
            "view": view,
            "total_rows": total,
            "rows": records(shown),
        }
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
    elif fmt == "csv":
        shown.to_csv(out, index=False)
    else:
        out.write("\n".join(_header(bundle, view, len(shown), total)) + "\n\n")
        out.write(format_table(shown) + "\n")


# ------------------------------------------------------------------------------- commands


def run_ranks_folder(args: argparse.Namespace) -> int:
    """`perfview summary FOLDER [--view ranks]`: one row per rank trace in the folder."""
    from pathlib import Path

    from perfview.core.model import Bundle
    from perfview.core.torch import ranks

    if args.view not in (None, "ranks"):
        raise CliError(f"{args.file} is a folder: only --view ranks reads a folder of rank traces")
    folder = Path(args.file)
    traces = ranks.load_ranks(folder, lambda path: load_bundle(str(path)))
    if not traces:
        raise cannot_open(args.file, "the folder holds no .json / .json.gz trace files")
    table = ranks.ranks_table(traces)
    run = Bundle(format="trace", path=folder, counts={"ranks": len(traces)})
    write_summary(run, "ranks", table, args.top, args.format, sys.stdout)
    return 0


def run_summary(args: argparse.Namespace) -> int:
    if os.path.isdir(args.file):
        return run_ranks_folder(args)
    bundle = load_bundle(args.file)
    view = args.view or summary.default_view(bundle)
    try:
        table = summary.summarize(bundle, view)
    except LoadError as exc:  # ViewError: the view does not fit this file
        raise CliError(str(exc)) from exc
    except Exception as exc:  # an internal error, still one line
        if os.environ.get(DEBUG_ENV):
            raise
        msg = f"internal error building view {view!r} for {args.file}: {type(exc).__name__}: {exc}"
        raise CliError(f"{msg}; set {DEBUG_ENV}=1 for a traceback", code=1) from exc
    write_summary(bundle, view, table, args.top, args.format, sys.stdout)
    return 0


def row_count(text: str) -> int:
    """argparse type for `--top`: a whole number, 0 meaning all rows (summary and diff)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (all rows) or more")
    return value


def _add_summary(subparsers: Any) -> None:
    views = ", ".join(summary.VIEWS)
    p = subparsers.add_parser(
        "summary",
        help="print a table of a profile without opening a window",
        description=f"Print one view of FILE as a table, CSV or JSON. Views: {views}.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a profile, trace or memory file (a folder of per-rank traces for --view ranks)",
    )
    p.add_argument("--view", choices=list(summary.VIEWS), help="default: the format's main view")
    p.add_argument("--top", type=row_count, default=20, help="rows to show; 0 = all")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format")
    p.set_defaults(func=run_summary)


def _add_optional(subparsers: Any) -> None:
    """Register `record`/`diff` from their modules; a placeholder explains when one is missing."""
    for name, module_name in OPTIONAL_COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
            before = set(subparsers.choices)
            module.add_parser(subparsers)
            for added in set(subparsers.choices) - before:
                subparsers.choices[added].set_defaults(func=module.run)
        except Exception as exc:  # a broken extra must not break `summary`
            if name in subparsers.choices:
                continue
            reason = f"{type(exc).__name__}: {exc}"
            p = subparsers.add_parser(name, help=f"(unavailable: {reason})", add_help=False)
            p.add_argument("rest", nargs=argparse.REMAINDER)
            p.set_defaults(func=_unavailable(name, reason))


def _unavailable(name: str, reason: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        raise CliError(f"'{name}' is not available in this installation ({reason})")

    return run


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
    _add_optional(subparsers)
    return parser


def _is_headless(argv: Sequence[str], parser: argparse.ArgumentParser) -> bool:
    """Subcommands and top-level help/version go to argparse; anything else opens the GUI."""
    if not argv:
        return False
    first = argv[0]
    if first in ("-h", "--help", "--version", "--install-desktop", "--uninstall-desktop"):
        return True
    commands: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
    return first in commands


def run_gui(argv: list[str]) -> int:
    """Hand over to the Qt application (imported only here: the headless path stays Qt-free)."""
    try:
        app = importlib.import_module("perfview.qt.app")
    except ImportError as exc:
        raise CliError(
            f"the viewer window is not available ({exc}); `perfview summary FILE` works without it"
        ) from exc
    return int(app.main(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `perfview` command and `python -m perfview`; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not _is_headless(args_list, parser):
            return run_gui(args_list)
        args = parser.parse_args(args_list)
        if args.install_desktop or args.uninstall_desktop:
            from perfview import desktop

            return desktop.install() if args.install_desktop else desktop.uninstall()
        if getattr(args, "func", None) is None:
            parser.print_help()
            return 0
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


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


__all__ = [
    "CliError",
    "build_parser",
    "cannot_open",
    "format_cell",
    "format_table",
    "load_bundle",
    "main",
    "records",
    "row_count",
    "write_summary",
]
