"""View ▸ Open in snakeviz: snakeviz's real server starts on 127.0.0.1 for a pstats tab,
serves the profile, and stops when the tab closes."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from PySide6.QtCore import QProcess
from PySide6.QtGui import QDesktopServices

from perfview.qt.file_types import example_path
from perfview.qt.main_window import MainWindow
from perfview.qt.snakeviz_server import SnakevizServer
from perfview.runner import snakeviz
from tests.qt.test_main_window import open_and_wait, settings, window  # noqa: F401

pytestmark = pytest.mark.gui


def test_url_line_is_recognised_and_only_loopback() -> None:
    line = "http://127.0.0.1:8081/snakeviz/%2Ftmp%2Fa.prof\n"
    assert snakeviz.url_in(line) == line.strip()
    assert snakeviz.url_in("snakeviz web server started on 127.0.0.1:8081") is None
    assert snakeviz.url_in("http://0.0.0.0:8081/snakeviz/x") is None
    argv = snakeviz.server_command(Path("a.prof"))
    assert argv[argv.index("-H") + 1] == "127.0.0.1"


def test_open_in_snakeviz_serves_the_profile_and_stops_with_the_tab(
    qtbot: object,
    window: MainWindow,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    tab = open_and_wait(qtbot, window, example_path())
    assert window.menus_controller.actions_by_id["snakeviz"].isEnabled()
    server = window.commands.open_in_snakeviz()
    assert isinstance(server, SnakevizServer)
    with qtbot.waitSignal(server.url_ready, timeout=30000) as blocker:  # type: ignore[attr-defined]
        pass
    url = str(blocker.args[0])
    assert url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(url, timeout=10) as response:
        page = response.read().decode()
    assert response.status == 200
    assert "snakeviz" in page.lower()
    assert opened == [url]
    window.tabs_controller.close_tab(window.tabs.indexOf(tab))
    assert server.process.state() == QProcess.ProcessState.NotRunning
