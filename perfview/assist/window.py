"""The assistant's side of `perfview mcp --window`: requests to the running perfview window
over its single-instance channel (`perfview.instance_channel`), on a plain Unix socket.

Each request is one connection and one JSON line each way, answered by the window on its GUI
thread (`perfview.qt.assistant_link`). The session token lets the user's "Disconnect" in the
window refuse this server's requests from then on. Not on Windows (Qt's channel there is a
named pipe): the tools say so in one sentence.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import uuid
from typing import Any

from perfview.assist.handles import AssistError
from perfview.instance_channel import MAX_REPLY_BYTES, encode_assist, socket_path

TIMEOUT_S = 10.0  # the window answers on its GUI thread: a busy one still answers in this
NO_WINDOW = "no perfview window is running: start `perfview` (or `perfview FILE`) first"


class WindowLink:
    """Requests to the window named `name` (default: this user's, `server_name`)."""

    def __init__(self, name: str | None = None, timeout_s: float = TIMEOUT_S) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self.session = uuid.uuid4().hex

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """The window's reply to `op`; AssistError (one sentence) when it cannot be had."""
        if sys.platform == "win32":
            raise AssistError("perfview mcp --window works on Linux and macOS only")
        data = encode_assist({"op": op, "session": self.session, **fields})
        reply = b""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(self.timeout_s)
                conn.connect(socket_path(self.name))
                conn.sendall(data)
                while not reply.endswith(b"\n") and len(reply) < MAX_REPLY_BYTES:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise AssistError(NO_WINDOW) from exc
        except TimeoutError as exc:
            raise AssistError(
                f"the perfview window did not answer in {self.timeout_s:g} s"
            ) from exc
        except OSError as exc:
            raise AssistError(f"cannot reach the perfview window: {exc.strerror or exc}") from exc
        try:
            answer: Any = json.loads(reply.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise AssistError(
                "the perfview window gave no answer (is it an older version?)"
            ) from exc
        if not isinstance(answer, dict):
            raise AssistError("the perfview window gave no answer (is it an older version?)")
        if "error" in answer:
            raise AssistError(str(answer["error"]))
        return answer

    def hello(self) -> None:
        """Show the window's "Assistant connected" (quietly nothing when none runs yet)."""
        with contextlib.suppress(AssistError):
            self.request("hello")

    def bye(self) -> None:
        with contextlib.suppress(AssistError):
            self.request("bye")

    def tabs(self) -> dict[str, Any]:
        answer = self.request("tabs")
        answer["produced_by"] = {"window": "the open tabs of the running perfview window"}
        return answer

    def select(self, tab: int, slices: list[int]) -> dict[str, Any]:
        return self.request("select", tab=tab, slices=[int(i) for i in slices])


__all__ = ["NO_WINDOW", "TIMEOUT_S", "WindowLink"]
