"""`perfview mcp`: the Model Context Protocol server over stdio (the official `mcp` SDK).

One tool per answer of `perfview.assist.answers.Assistant`; this module only declares them
and turns a failure into the tool error an assistant reads (one sentence, `is_error`). It is
the only module importing the SDK, an optional extra (`pip install 'perfview[mcp]'`).

stdout is the protocol's channel: nothing else may print there (the load's one notice goes
to stderr, `cli_common.compile_notice`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from perfview import __version__
from perfview.assist.answers import DEFAULT_TOP, MAX_ROWS, Assistant
from perfview.assist.handles import MAX_OPEN, AssistError
from perfview.assist.window import WindowLink

INSTRUCTIONS = f"""perfview reads Python and PyTorch profiles (cProfile/pstats, torch.profiler
and Chrome traces, memory_profiler, mprof, memray, CUDA memory snapshots, sampled profiles).
Open a file (or a folder of per-rank traces) to get a handle, list its views, then read a
view's rows or query its tables with SQL. Every answer names the view or query and the
`perfview` command that produced it: cite them so the user can check each claim. Times are
int64 nanoseconds (columns ending in _ns), sizes bytes (_bytes). Answers hold at most
{MAX_ROWS} rows; at most {MAX_OPEN} documents are open at once. Nothing is ever written."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
# Selecting changes what the window shows, never a file.
WINDOW = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

Handle = Annotated[str, Field(description="a handle from open_profile, e.g. 'd1'")]
Top = Annotated[int, Field(description=f"rows to return; 0: as many as allowed ({MAX_ROWS})")]


def _one_sentence(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Failures as the tool error the assistant reads: an AssistError's sentence, or one line
    naming an unforeseen error (never a traceback)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except AssistError as exc:
            raise ToolError(str(exc)) from exc
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]
            raise ToolError(f"internal error: {type(exc).__name__}: {first}") from exc

    return call


WINDOW_INSTRUCTIONS = """
The user's perfview window is linked: window_tabs lists its open tabs (open_profile a tab's
path to read its views and query it), and window_select shows slices there (ids from a
query's slices.id, or a recommendation's evidence_slices), zoomed to the first: show the user
the slices you talk about."""


def build(assistant: Assistant | None = None, window: WindowLink | None = None) -> MCPServer:
    """The server with its tools over `assistant` (a new one by default), and the window's
    tools when `window` links a running perfview window (`perfview mcp --window`)."""
    a = assistant if assistant is not None else Assistant()
    server: MCPServer = MCPServer(
        "perfview",
        instructions=INSTRUCTIONS + (WINDOW_INSTRUCTIONS if window is not None else ""),
        version=__version__,
        log_level="WARNING",
    )

    def tool(fn: Callable[..., dict[str, Any]]) -> None:
        server.add_tool(_one_sentence(fn), name=fn.__name__, annotations=READ_ONLY)

    def open_profile(
        path: Annotated[str, Field(description="a file or folder, or a URL (s3://, gs://, …)")],
    ) -> dict[str, Any]:
        """Open a profile, trace or memory file, or a folder of per-rank traces; returns its
        handle, format, counts and the views it has."""
        return a.open(path)

    def close_profile(handle: Handle) -> dict[str, Any]:
        """Close an open document (frees its memory)."""
        return a.close(handle)

    def list_views(handle: Handle) -> dict[str, Any]:
        """The views this document has (name, title, what each shows)."""
        return a.views(handle)

    def get_rows(
        handle: Handle,
        view: Annotated[str | None, Field(description="a view name; default: the main one")] = None,
        top: Top = DEFAULT_TOP,
        contains: Annotated[
            str | None, Field(description="keep rows with this text in a text column")
        ] = None,
        sort_by: Annotated[
            str | None, Field(description="sort by this column, largest first")
        ] = None,
        edits: Annotated[
            list[str] | None,
            Field(
                description="what-if view: changes to replay, e.g. 'kernel:*gemm*=0.5', 'data=0'"
            ),
        ] = None,
    ) -> dict[str, Any]:
        """A view's rows, the JSON `perfview summary FILE --view VIEW --format json` prints
        (`edits`: its `--edit` changes, for the what-if view)."""
        return a.rows(handle, view, top, contains, sort_by, edits)

    def run_query(
        handle: Handle,
        sql: Annotated[str, Field(description="one SELECT over the document's tables (DuckDB)")],
        limit: Top = DEFAULT_TOP * 5,
    ) -> dict[str, Any]:
        """Run one read-only SQL SELECT (DuckDB) over the document's tables (open_profile lists
        them: slices, ops, kernels, functions, …); writing or reading other files is refused,
        and a query is stopped after a time limit."""
        return a.query(handle, sql, limit)

    def get_recommendations(handle: Handle) -> dict[str, Any]:
        """A PyTorch trace's recommendations, each with its evidence text, the metric and
        threshold, and the ids of the slices that prove it (with the SQL listing them)."""
        return a.recommendations(handle)

    def diff_profiles(
        baseline: Handle,
        new: Handle,
        view: Annotated[str | None, Field(description="default: the format's first")] = None,
        metric: Annotated[str | None, Field(description="default: the view's own")] = None,
        top: Top = DEFAULT_TOP,
    ) -> dict[str, Any]:
        """Compare two open documents of the same kind, largest growth first, as `perfview
        diff A B --format json` prints it."""
        return a.diff(baseline, new, view, metric, top)

    for fn in (
        open_profile,
        close_profile,
        list_views,
        get_rows,
        run_query,
        get_recommendations,
        diff_profiles,
    ):
        tool(fn)
    if window is not None:
        _window_tools(server, window)
    return server


def _window_tools(server: MCPServer, window: WindowLink) -> None:
    def window_tabs() -> dict[str, Any]:
        """The tabs open in the user's perfview window: path, format, the page shown, and
        which one is in front."""
        return window.tabs()

    def window_select(
        tab: Annotated[int, Field(description="a tab number from window_tabs")],
        slices: Annotated[
            list[int], Field(description="slice ids (slices.id, a finding's evidence_slices)")
        ],
    ) -> dict[str, Any]:
        """Show these slices selected in the tab's Timeline, zoomed to the first, so the user
        sees the evidence of what you say."""
        return window.select(tab, slices)

    for fn in (window_tabs, window_select):
        server.add_tool(_one_sentence(fn), name=fn.__name__, annotations=WINDOW)


def serve(window: bool = False) -> None:
    """Answer on stdin/stdout until the client closes stdin; with `window`, linked to the
    running perfview window (its status bar shows the assistant from hello to bye)."""
    link = WindowLink() if window else None
    if link is not None:
        link.hello()
    try:
        build(window=link).run("stdio")
    finally:
        if link is not None:
            link.bye()


__all__ = ["INSTRUCTIONS", "build", "serve"]
