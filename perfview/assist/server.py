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

INSTRUCTIONS = f"""perfview reads Python and PyTorch profiles (cProfile/pstats, torch.profiler
and Chrome traces, memory_profiler, mprof, memray, CUDA memory snapshots, sampled profiles).
Open a file (or a folder of per-rank traces) to get a handle, list its views, then read a
view's rows or query its tables with SQL. Every answer names the view or query and the
`perfview` command that produced it: cite them so the user can check each claim. Times are
int64 nanoseconds (columns ending in _ns), sizes bytes (_bytes). Answers hold at most
{MAX_ROWS} rows; at most {MAX_OPEN} documents are open at once. Nothing is ever written."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

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


def build(assistant: Assistant | None = None) -> MCPServer:
    """The server with its tools over `assistant` (a new one by default)."""
    a = assistant if assistant is not None else Assistant()
    server: MCPServer = MCPServer(
        "perfview", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def tool(fn: Callable[..., dict[str, Any]]) -> None:
        server.add_tool(_one_sentence(fn), name=fn.__name__, annotations=READ_ONLY)

    def open_profile(path: Annotated[str, Field(description="a file or folder")]) -> dict[str, Any]:
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
    ) -> dict[str, Any]:
        """A view's rows, the JSON `perfview summary FILE --view VIEW --format json` prints."""
        return a.rows(handle, view, top, contains, sort_by)

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
    return server


def serve() -> None:
    """Answer on stdin/stdout until the client closes stdin."""
    build().run("stdio")


__all__ = ["INSTRUCTIONS", "build", "serve"]
