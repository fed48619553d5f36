"""The running window's channel, as a process without Qt sees it: its name, its socket's path,
and the assistant's requests on it (`perfview mcp --window`).

The window listens with `QLocalServer` (`perfview.qt.single_instance`), one request per
connection, one JSON line each way. Later launches send `{"open": [...]}`; an assistant's
server sends `{"assist": {"op": ..., "session": ...}}` and reads one JSON object back
(`perfview.qt.assistant_link` answers it). Kept free of Qt so the assistants' server, which
never imports Qt, reaches the window over a plain Unix socket at the path Qt uses.
"""

from __future__ import annotations

import getpass
import json
import os
import re
from typing import Any

NAME_ENV = "PERFVIEW_INSTANCE_NAME"
MAX_REPLY_BYTES = 1 << 22  # a reply lists tabs and one selection: far below this


def server_name() -> str:
    """Per-user socket name; ``$PERFVIEW_INSTANCE_NAME`` overrides it (tests, several sessions)."""
    override = os.environ.get(NAME_ENV)
    if override:
        return override
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers) and no LOGNAME/USER
        user = "user"
    uid = str(os.getuid()) if hasattr(os, "getuid") else ""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", user)
    return f"perfview-{safe}-{uid}" if uid else f"perfview-{safe}"


def socket_path(name: str | None = None) -> str:
    """Where Qt puts the server's socket on Unix: the name itself when absolute, else in
    `QDir::tempPath()` ($TMPDIR, or /tmp)."""
    value = name or server_name()
    if os.path.isabs(value):
        return value
    temp = os.environ.get("TMPDIR", "").rstrip("/") or "/tmp"
    return os.path.join(temp, value)


def encode_assist(request: dict[str, Any]) -> bytes:
    return json.dumps({"assist": request}).encode("utf-8") + b"\n"


def decode_assist(line: bytes) -> dict[str, Any] | None:
    """The assistant's request in one line, or None when the line is something else."""
    try:
        message: Any = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    request = message.get("assist") if isinstance(message, dict) else None
    return request if isinstance(request, dict) else None


__all__ = [
    "MAX_REPLY_BYTES",
    "NAME_ENV",
    "decode_assist",
    "encode_assist",
    "server_name",
    "socket_path",
]
