"""Single-instance hand-off over QLocalSocket, with a real second process as the client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QDir, QUrl
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtNetwork import QLocalSocket
from PySide6.QtWidgets import QApplication

from perfview.qt.single_instance import (
    NAME_ENV,
    InstanceServer,
    decode_request,
    encode_request,
    forward_to_running,
    install_file_open_handler,
    server_name,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.gui

CLIENT = (
    "import sys\n"
    "from perfview.qt.single_instance import forward_to_running\n"
    "sys.exit(0 if forward_to_running(sys.argv[1:], timeout_ms=5000) else 3)\n"
)


@pytest.fixture
def name(monkeypatch: pytest.MonkeyPatch) -> str:
    """A unique server name, also exported so a child process uses the same one."""
    value = f"perfview-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(NAME_ENV, value)
    return value


@pytest.fixture
def server(qapp: QApplication, name: str) -> Iterator[InstanceServer]:
    srv = InstanceServer()
    assert srv.start()
    yield srv
    srv.close()


def _start_client(*paths: str, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", CLIENT, *paths], cwd=cwd, env=env)


def test_server_name_is_per_user_and_overridable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NAME_ENV, raising=False)
    default = server_name()
    assert default.startswith("perfview-")
    if hasattr(os, "getuid"):
        assert default.endswith(f"-{os.getuid()}")
    monkeypatch.setenv(NAME_ENV, "custom-name")
    assert server_name() == "custom-name"


def test_request_round_trip_makes_paths_absolute(tmp_path: Path) -> None:
    line = encode_request(["a.prof", tmp_path / "b.json"])
    assert line.endswith(b"\n")
    assert decode_request(line.strip()) == [os.path.abspath("a.prof"), str(tmp_path / "b.json")]
    assert decode_request(b"not json") is None
    assert decode_request(b'{"open": [1, 2]}') is None
    assert decode_request(b'["a"]') is None


def test_second_process_forwards_files(qtbot, server: InstanceServer, tmp_path: Path) -> None:
    raised: list[bool] = []
    server.raise_requested.connect(lambda: raised.append(True))
    with qtbot.waitSignal(server.files_received, timeout=20000) as blocker:
        proc = _start_client("run.prof", "sub/trace.json", cwd=tmp_path)
    assert proc.wait(timeout=20) == 0
    assert blocker.args == [[str(tmp_path / "run.prof"), str(tmp_path / "sub" / "trace.json")]]
    assert raised == [True]


def test_forward_without_files_only_raises(qtbot, server: InstanceServer, tmp_path: Path) -> None:
    got: list[list[str]] = []
    server.files_received.connect(got.append)
    with qtbot.waitSignal(server.raise_requested, timeout=20000):
        proc = _start_client(cwd=tmp_path)
    assert proc.wait(timeout=20) == 0
    assert got == []


def test_no_instance_returns_false(qapp: QApplication, name: str) -> None:
    assert forward_to_running(["x.prof"], timeout_ms=300) is False


def test_second_server_with_same_name_does_not_start(server: InstanceServer) -> None:
    other = InstanceServer(server.name)
    assert other.start() is False
    assert server.is_listening()


@pytest.mark.skipif(sys.platform == "win32", reason="Unix socket files only")
def test_stale_socket_file_is_replaced(qapp: QApplication, name: str) -> None:
    # A process that died leaves its socket file behind: bound, closed, never unlinked.
    path = os.path.join(QDir.tempPath(), name)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)
    dead.close()
    assert os.path.exists(path)
    srv = InstanceServer(name)
    try:
        assert srv.start()
    finally:
        srv.close()


def test_garbage_request_is_dropped(qtbot, server: InstanceServer) -> None:
    got: list[list[str]] = []
    server.files_received.connect(got.append)
    client = QLocalSocket()
    with qtbot.waitSignal(client.connected, timeout=5000):
        client.connectToServer(server.name)
    with qtbot.waitSignal(client.disconnected, timeout=5000):
        client.write(b"{not json}\n")
    assert got == []
    assert server.is_listening()


def test_file_open_events_are_queued_until_callback(qapp: QApplication, tmp_path: Path) -> None:
    handler = install_file_open_handler(qapp)
    try:
        first, second = str(tmp_path / "a.prof"), str(tmp_path / "b.prof")
        QCoreApplication.sendEvent(qapp, QFileOpenEvent(first))
        got: list[list[str]] = []
        handler.set_callback(got.append)
        assert got == [[first]]
        QCoreApplication.sendEvent(qapp, QFileOpenEvent(QUrl.fromLocalFile(second)))
        assert got == [[first], [second]]
    finally:
        qapp.removeEventFilter(handler)
        handler.deleteLater()
