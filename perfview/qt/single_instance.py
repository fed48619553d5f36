"""One perfview window per user session: later launches hand their files to the running one.

Protocol (one request per connection, UTF-8 JSON, newline-terminated):
``{"open": ["/abs/path", ...]}\\n`` from the client, ``{"ok": true}\\n`` back from the server. The
ack matters: a socket file left by a crashed instance may still accept ``connect`` on some
platforms, so only an answer proves that a live window took the files.

Paths are made absolute on the client side because the two processes have different working
directories. The server uses ``UserAccessOption`` so other users cannot talk to it, and the name
includes the user id because ``/tmp`` (where Qt puts the socket on Unix) is shared.

macOS does not pass files in ``argv`` when a document is opened from Finder; it sends a
``QFileOpenEvent`` to the application instead, hence :class:`FileOpenHandler`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

from perfview.instance_channel import NAME_ENV as NAME_ENV  # re-exported: tests, callers
from perfview.instance_channel import decode_assist, server_name

MAX_REQUEST_BYTES = 1 << 20  # a path list never gets near this; bounds memory on garbage input
_ACK = b'{"ok": true}\n'


def encode_request(paths: Iterable[str | os.PathLike[str]]) -> bytes:
    """Request bytes for ``paths`` (made absolute against this process's working directory)."""
    absolute = [os.path.abspath(os.fspath(p)) for p in paths]
    return json.dumps({"open": absolute}).encode("utf-8") + b"\n"


def decode_request(line: bytes) -> list[str] | None:
    """Paths from one request line, or None when it is not a valid request."""
    try:
        message: Any = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    paths = message.get("open") if isinstance(message, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    return paths


def forward_to_running(
    paths: Iterable[str | os.PathLike[str]], timeout_ms: int = 1000, name: str | None = None
) -> bool:
    """Send ``paths`` to a running instance; True only if it acknowledged within ``timeout_ms``.

    Blocking waits are fine here: this runs before any window exists. An empty ``paths`` still
    asks the running window to come to the front.
    """
    deadline = time.monotonic() + timeout_ms / 1000

    def left_ms() -> int:
        return max(1, int((deadline - time.monotonic()) * 1000))

    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(left_ms()):
        return False
    socket.write(QByteArray(encode_request(paths)))
    if not socket.waitForBytesWritten(left_ms()):
        socket.abort()
        return False
    reply = b""
    while not reply.endswith(b"\n") and time.monotonic() < deadline:
        if not socket.waitForReadyRead(left_ms()):
            break
        reply += bytes(socket.readAll().data())
    socket.abort()
    return reply.strip() == _ACK.strip()


class InstanceServer(QObject):
    """Listens for later launches; emits what they ask for.

    Connect ``files_received`` to the window's open method and ``raise_requested`` to
    :func:`raise_window`.
    """

    files_received = Signal(list)
    raise_requested = Signal()

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}
        self._responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def set_responder(self, responder: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Answer an assistant's requests (`{"assist": …}`, `perfview.instance_channel`) with
        `responder`'s JSON object, on the GUI thread (`perfview.qt.assistant_link`)."""
        self._responder = responder

    def start(self) -> bool:
        """Listen; False if another live instance owns the name.

        The liveness probe comes first because, with ``UserAccessOption``, Qt on Unix binds in
        a private folder and renames the socket over the target path, silently stealing the name
        from a running instance instead of failing. A failed ``listen`` then means a socket file
        left by a process that died, which Qt does not remove: remove it and try once more.
        """
        if _is_alive(self.name):
            return False
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def is_listening(self) -> bool:
        return self._server.isListening()

    def close(self) -> None:
        """Stop listening (also removes the socket file)."""
        self._server.close()

    def _on_new_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._on_ready_read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _on_ready_read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        if b"\n" not in data:
            if len(data) > MAX_REQUEST_BYTES:
                socket.abort()
            else:
                self._buffers[socket] = data
            return
        line = data.split(b"\n", 1)[0]
        request = decode_assist(line)
        if request is not None and self._responder is not None:
            reply = json.dumps(self._responder(request)).encode("utf-8") + b"\n"
            socket.write(QByteArray(reply))
            socket.flush()
            socket.disconnectFromServer()
            return
        paths = decode_request(line)
        if paths is None:
            socket.disconnectFromServer()
            return
        socket.write(QByteArray(_ACK))
        socket.flush()
        socket.disconnectFromServer()
        if paths:
            self.files_received.emit(paths)
        self.raise_requested.emit()

    def _forget(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()


def _is_alive(name: str) -> bool:
    """Whether a server answers ``connect`` on ``name`` (a stale socket file refuses it)."""
    probe = QLocalSocket()
    probe.connectToServer(name)
    alive = probe.waitForConnected(200)
    probe.abort()
    return alive


def raise_window(window: QWidget) -> None:
    """Un-minimise and bring ``window`` to the front (window managers may only flash it)."""
    state = window.windowState() & ~Qt.WindowState.WindowMinimized
    window.setWindowState(state | Qt.WindowState.WindowActive)
    window.show()
    window.raise_()
    window.activateWindow()


class FileOpenHandler(QObject):
    """Event filter for macOS ``QFileOpenEvent`` (Finder "Open With", dock drops).

    macOS may deliver the event before the main window exists, so paths are queued until a
    callback is set.
    """

    def __init__(
        self, callback: Callable[[list[str]], None] | None = None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._callback = callback
        self._pending: list[str] = []

    def set_callback(self, callback: Callable[[list[str]], None]) -> None:
        """Set the receiver and hand it anything that arrived earlier."""
        self._callback = callback
        pending, self._pending = self._pending, []
        if pending:
            callback(pending)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt override, hence camelCase
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            path = event.file() or event.url().toLocalFile()
            if path:
                if self._callback is None:
                    self._pending.append(path)
                else:
                    self._callback([path])
                return True
        return super().eventFilter(watched, event)


def install_file_open_handler(
    app: QObject, callback: Callable[[list[str]], None] | None = None
) -> FileOpenHandler:
    """Install a :class:`FileOpenHandler` on ``app`` (parented to it, so it lives as long)."""
    handler = FileOpenHandler(callback, parent=app)
    app.installEventFilter(handler)
    return handler
