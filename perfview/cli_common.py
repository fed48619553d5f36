"""What every `perfview` subcommand shares: loading a file for a headless command, the one
error shape (`CliError`: one sentence, an exit code, never a traceback), and the table / CSV /
JSON writers. Kept apart from `perfview.cli` so subcommand modules (`compare_cli`,
`runner.cli`) import it without importing the command line that registers them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from perfview.core.model.errors import LoadError
from perfview.core.model.units import format_ns, format_value
from perfview.core.pages import PAGES, summary

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


def internal_failure(what: str, exc: Exception) -> CliError:
    """The one line for an error no check foresaw (a bug, exit 1); with PERFVIEW_DEBUG set the
    original exception is raised instead, traceback and all."""
    if os.environ.get(DEBUG_ENV):
        raise exc
    msg = f"internal error {what}: {type(exc).__name__}: {exc}"
    return CliError(f"{msg}; set {DEBUG_ENV}=1 for a traceback", code=1)


def cannot_open(path: str, reason: str) -> CliError:
    """The one message shape for unreadable input, shared with other subcommands (diff)."""
    return CliError(f"cannot open {path}: {reason}")


def compile_notice() -> Any:
    """A load's progress callback that prints the one message a user must see: a compiled
    reader's compile after an install (`CompiledReader.message`: the trace scanner's, ~15 s,
    once) on stderr, so a first `perfview summary BIG.json` does not wait silently."""
    from perfview.loaders.service import compile_messages

    messages = compile_messages()
    printed = False

    def progress(_fraction: float, message: str) -> None:
        nonlocal printed
        if message in messages and not printed:
            printed = True
            print(f"perfview: {message}", file=sys.stderr, flush=True)

    return progress


# The arguments of the commands that name input files or folders (summary, diff, query, export).
PATH_ARGUMENTS = ("file", "more", "a", "b")


def fetch_urls(args: Any) -> None:
    """Replace every URL among a command's input arguments (`s3://…`, `gs://…`, …) by its
    local mirror (`perfview.store.remote`), so each command reads local paths as before; one
    sentence when a URL cannot be read. With `--cluster` the URLs stay: the Dask workers
    read them themselves."""
    from perfview.store import remote

    if getattr(args, "cluster", None):
        return
    named = [getattr(args, name, None) for name in PATH_ARGUMENTS]
    inputs = [s for v in named for s in (v if isinstance(v, list) else [v]) if s is not None]
    stream = len(inputs) == 1  # one file is parsed while it downloads (`remote_download.fetching`)
    for name in PATH_ARGUMENTS:
        value = getattr(args, name, None)
        sources = value if isinstance(value, list) else [value]
        if not any(remote.is_url(s) for s in sources):
            continue
        local = [_fetched(remote, str(s), stream) if remote.is_url(s) else s for s in sources]
        setattr(args, name, local if isinstance(value, list) else local[0])


def _fetched(remote: Any, url: str, stream: bool) -> str:
    try:
        return str(remote.resolve(url, stream=stream))
    except LoadError as exc:
        raise cannot_open(url, str(exc)) from exc


def shown_path(path: str | Path) -> str:
    """How a command's output names its input: the URL the user typed for a remote mirror
    (`perfview summary s3://…`), else the path."""
    from perfview.store import remote

    return remote.url_for(path) or str(path)


def load_bundle(path: str) -> Any:
    """Load a file for a headless command, turning every failure into a CliError (exit 2).

    Loaders raise LoadError for what they recognise as bad input; anything else on a user's
    file is still bad input from the user's point of view, so it gets the same one-line shape.
    """
    from perfview.documents import open_document  # deferred: --version skips pandas
    from perfview.loaders import internal_error

    try:
        return open_document(path, progress=compile_notice()).bundle
    except LoadError as exc:
        raise cannot_open(path, str(exc)) from exc
    except Exception as exc:  # no traceback for bad input, see module doc
        if os.environ.get(DEBUG_ENV):
            raise
        raise cannot_open(path, f"{internal_error(exc)} (set {DEBUG_ENV}=1 for details)") from exc


# ---------------------------------------------------------------------------------- views


TREE_VIEWS = ("icicle", "tree")


def view_table(
    bundle: Any,
    view: str,
    top: int,
    lanes: str | None = None,
    edits: Sequence[str] = (),
    *,
    thread: str | None = None,
) -> tuple[pd.DataFrame, int]:
    """(the view's first `top` rows, 0 = all; how many rows the whole view has): what
    `perfview summary --view VIEW --top N [--edit E…]` prints, for the CLI and the
    assistants' server (`perfview.assist`) alike; `edits` for a page that takes them
    (what-if). `--view icicle|tree` is the merged call tree in pre-order with
    the `top` heaviest nodes and `lanes` (its notes join the bundle's warnings). ViewError
    (one sentence) when the view or `lanes` do not fit the file. `thread`: a sampled
    profile's one thread, for the pages that honour it (`Page.per_thread`)."""
    from perfview.core.analysis import tree_table
    from perfview.core.pages import ViewError

    if thread is not None:
        bundle = _one_thread(bundle, view, thread)

    if lanes is not None and view not in TREE_VIEWS:
        raise ViewError("--lanes applies to --view icicle (or tree) only")
    if view in TREE_VIEWS and bundle.format in summary.VIEWS[view].tables:
        try:
            tree = tree_table.bundle_tree(bundle, lanes)
        except ValueError as exc:
            raise ViewError(f"{bundle.path}: {exc}") from exc
        table, total = tree_table.tree_rows(tree, top)
        for note in tree.notes if tree is not None else []:
            if note not in bundle.warnings:
                bundle.warnings.append(note)
        return table, total
    table = _summarize(bundle, view, edits)
    return (table.head(top) if top > 0 else table), len(table)


def _one_thread(bundle: Any, view: str, thread: str) -> Any:
    """The bundle with one thread's tree, for `--thread` (ViewError: one sentence)."""
    from perfview.core.analysis import sampled_threads
    from perfview.core.pages import ViewError

    page = PAGES.get(view)
    if page is None or not page.per_thread or bundle.format not in page.tables:
        honour = [n for n, p in PAGES.items() if p.per_thread and "sampled" in p.tables]
        raise ViewError(f"--thread applies to --view {' or '.join(honour)} of a sampled profile")
    try:
        choice = sampled_threads.resolve(bundle, thread)
        return sampled_threads.with_thread(bundle, choice)
    except ValueError as exc:
        raise ViewError(f"{bundle.path}: {exc}") from exc


def _summarize(bundle: Any, view: str, edits: Sequence[str] = ()) -> pd.DataFrame:
    """The view's table; a big trace's temporaries reuse freed heap (`trace.heap`): its
    5M-row steps otherwise first-touch fresh pages for every array. (A no-op after a
    one-shot load, which left the heap so: `cli._read_ahead`.)"""
    from perfview.loaders.trace import heap

    with heap.reuse_freed(bundle.counts.get("events", 0) if bundle.format == "trace" else 0):
        return summary.summarize(bundle, view, edits)


# ---------------------------------------------------------------------------------- output


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: Python ints/floats/str, NaN and ±inf → None."""
    columns: dict[str, list[Any]] = {}
    for col in frame.columns:
        series = frame[col]
        if pd.api.types.is_bool_dtype(series):
            columns[str(col)] = [bool(v) for v in series.tolist()]
        elif pd.api.types.is_integer_dtype(series):
            columns[str(col)] = [None if v is pd.NA else int(v) for v in series.tolist()]
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
    """Human text for one cell: units from the column name (`core.model.units`), text elided."""
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
    return aligned_columns(cols, cells, numeric)


def aligned_columns(
    header: Sequence[str], cells: Sequence[Sequence[str]], right: Sequence[bool]
) -> str:
    """Columns of text cells under their header and a rule, each as wide as its widest cell;
    `right[i]`: column i is right-aligned (numbers). Every plain-text table of the CLI."""
    widths = [max([len(h), *map(len, col)]) for h, col in zip(header, cells, strict=True)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(row) for row in zip(*cells, strict=True))
    return "\n".join(out)


def _header(bundle: Any, view: str, shown: int, total: int) -> list[str]:
    phrase = summary.FORMAT_PHRASES.get(bundle.format, bundle.format)
    # Zero counts (no flows, no counters…) are noise in a header line; JSON keeps them all.
    counts = ", ".join(
        f"{k} {v:,}" + (f" ({note})" if note else "")
        for k, v, note in summary.shown_counts(bundle.counts)
    )
    parts = [shown_path(bundle.path), f"{bundle.format} ({phrase})"]
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
    if definition := _definition(view):
        lines.append(f"definition: {definition}")
    return lines


def _definition(view: str) -> str:
    """The view's one-sentence definition of its figures ("" for most views)."""
    page = summary.VIEWS.get(view)
    return page.definition if page is not None else ""


def write_summary(
    bundle: Any,
    view: str,
    table: pd.DataFrame,
    top: int,
    fmt: str,
    out: TextIO,
    total_rows: int | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Write one view of one bundle in the chosen format (see the module docstring).

    `total_rows`: how many rows the whole view has when `table` is already cut (icicle).
    `extra` adds keys to the JSON document (a job's `clock` and `failed` files).
    """
    total = len(table) if total_rows is None else total_rows
    shown = table.head(top) if top > 0 else table
    if fmt == "json":
        doc = {
            "path": shown_path(bundle.path),
            "format": bundle.format,
            "counts": {str(k): int(v) for k, v in bundle.counts.items()},
            "duration_ns": int(bundle.duration_ns),
            "warnings": [str(w) for w in bundle.warnings],
            "view": view,
            **({"definition": d} if (d := _definition(view)) else {}),
            "total_rows": total,
            "rows": records(shown),
            **(extra or {}),
        }
        json.dump(doc, out, ensure_ascii=False, allow_nan=False)
        out.write("\n")
    elif fmt == "csv":
        shown.to_csv(out, index=False)
    else:
        out.write("\n".join(_header(bundle, view, len(shown), total)) + "\n\n")
        out.write(format_table(shown) + "\n")
        out.write(_definitions(view))


def _definitions(view: str) -> str:
    """The page's definitions of its figures (`Page.definitions`), under its table."""
    page = PAGES.get(view)
    if page is None or not page.definitions:
        return ""
    lines = [f"  {name}: {text}." for name, text in page.definitions.items()]
    return "\n" + "\n".join(lines) + "\n"


def row_count(text: str) -> int:
    """argparse type for `--top`: a whole number, 0 meaning all rows (summary and diff)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (all rows) or more")
    return value


__all__ = [
    "DEBUG_ENV",
    "FORMATS",
    "CliError",
    "cannot_open",
    "format_cell",
    "format_table",
    "internal_failure",
    "load_bundle",
    "records",
    "row_count",
    "view_table",
    "write_summary",
]
