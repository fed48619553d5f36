"""`perfview mcp`: serve perfview's analyses to an AI assistant (Model Context Protocol, stdio).

    perfview mcp [--window]

The assistant's client starts this command and talks JSON-RPC on its stdin/stdout
(`perfview.assist.server`; docs/mcp.md says how to configure an assistant). The server needs
the `mcp` SDK, an optional extra: without it the command says in one sentence how to get it
and exits 2, like the other subcommands' missing extras.
"""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any

from perfview.cli_common import CliError

INSTALL_HINT = (
    "perfview mcp needs the Model Context Protocol SDK, which is not installed: "
    "pip install 'perfview[mcp]'"
)


def add_parser(subparsers: Any) -> None:
    """Register `mcp` on the `perfview` command's subparsers (called by perfview.cli)."""
    p = subparsers.add_parser(
        "mcp",
        help="serve profiles to an AI assistant (Model Context Protocol over stdio)",
        description="Answer an assistant's requests on stdin/stdout: open a file or folder, "
        "list its views, get a view's rows (as `perfview summary --format json`), run a "
        "read-only SQL query, the recommendations with their evidence, a diff of two files. "
        "Nothing is written. See docs/mcp.md.",
    )
    p.add_argument(
        "--window",
        action="store_true",
        help="also link the running perfview window: the assistant sees its tabs and selects "
        "slices there (its status bar shows the assistant, with a Disconnect button)",
    )


def available() -> bool:
    """True when the SDK can be imported (looked up, not imported: the check is free)."""
    return importlib.util.find_spec("mcp") is not None


def run(args: argparse.Namespace) -> int:
    if not available():
        raise CliError(INSTALL_HINT)
    from perfview.assist import server  # deferred: imports the SDK

    server.serve(window=args.window)
    return 0


__all__ = ["INSTALL_HINT", "add_parser", "available", "run"]
