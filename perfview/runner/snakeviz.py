"""snakeviz, started for a pstats file: for people who share snakeviz links or want its sunburst.

perfview does not reimplement snakeviz; it runs snakeviz's own server (a dependency) in a child
process bound to the loopback address and opens the browser on the URL snakeviz prints. The
GUI side (`perfview.qt.snakeviz_server`) owns the process and stops it with the tab.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HOST = "127.0.0.1"  # never another address: the server serves the user's files
FIRST_PORT = 8080  # snakeviz moves to a free port by itself when this one is taken
_URL = re.compile(r"^(http://127\.0\.0\.1:\d+/snakeviz/\S+)\s*$")


def server_command(profile: Path) -> list[str]:
    """argv for snakeviz's server on `profile`, loopback only, never opening a browser itself."""
    return [
        sys.executable, "-m", "snakeviz", "--server",
        "-H", HOST, "-p", str(FIRST_PORT), str(Path(profile).resolve()),
    ]  # fmt: skip


def url_in(line: str) -> str | None:
    """The page URL when `line` is the one snakeviz prints once it listens, else None."""
    match = _URL.match(line.strip())
    return match.group(1) if match else None


__all__ = ["FIRST_PORT", "HOST", "server_command", "url_in"]
