"""`perfview mcp --window`: an assistant sees the window's tabs and selects slices there.

The window runs here under pytest-qt with its single-instance server on a name of its own;
the assistant is the real `perfview mcp --window` subprocess driven by the SDK's stdio client
on a thread (the GUI thread keeps answering meanwhile), or the Qt-free `WindowLink`."""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from perfview.assist import AssistError
from perfview.assist.window import NO_WINDOW, WindowLink
from perfview.instance_channel import NAME_ENV
from perfview.qt import assistant_link
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import Settings
from perfview.qt.single_instance import InstanceServer
from tests.conftest import DATA, ROOT

pytestmark = pytest.mark.gui

TRACE = DATA / "demos" / "pairwise-loop-slow.pt.trace.json.gz"


@pytest.fixture
def linked(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MainWindow, Any]]:
    """A window showing TRACE, listening on a name of its own, with the assistant link."""
    name = f"perfview-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(NAME_ENV, name)
    window = MainWindow(Settings.ephemeral())
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.document_opened, timeout=60_000):
        window.open_path(TRACE)
    server = InstanceServer(name, parent=window)
    assert server.start()
    link = assistant_link.attach(window, server)
    yield window, link
    server.close()


def in_thread(qtbot: Any, fn: Callable[[], Any], timeout_ms: int = 60_000) -> Any:
    """`fn()` on a thread while the GUI thread answers the window's requests; its result."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised on the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=timeout_ms)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_an_assistant_selects_the_evidence_in_the_window(qtbot: Any, linked: Any) -> None:
    pytest.importorskip("mcp", reason="perfview mcp needs the 'mcp' extra")
    pytest.importorskip("duckdb", reason="queries need the 'query' extra (duckdb)")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    window, link = linked

    async def conversation() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "perfview", "mcp", "--window"],
            cwd=str(ROOT),
            env=dict(os.environ),
        )
        seen: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = {t.name for t in (await session.list_tools()).tools}
            tabs = (await session.call_tool("window_tabs", {})).structured_content
            seen["tabs"] = tabs
            opened = await session.call_tool("open_profile", {"path": tabs["tabs"][0]["path"]})
            handle = opened.structured_content["handle"]
            found = await session.call_tool("get_recommendations", {"handle": handle})
            seen["finding"] = next(
                r for r in found.structured_content["rows"] if r["evidence_slices"]
            )
            ids = seen["finding"]["evidence_slices"]
            select = {"tab": 0, "slices": ids}
            seen["select"] = (await session.call_tool("window_select", select)).structured_content
            seen["bad"] = await session.call_tool("window_select", {"tab": 5, "slices": ids})
        return seen

    seen = in_thread(qtbot, lambda: anyio.run(conversation))

    assert {"window_tabs", "window_select", "open_profile"} <= seen["tools"]
    assert seen["tabs"]["tabs"][0]["path"] == str(TRACE)
    assert seen["tabs"]["tabs"][0]["format"] == "trace"
    ids = seen["finding"]["evidence_slices"]
    assert seen["select"]["selected"] == len(ids)
    assert seen["select"]["first"]["id"] == ids[0]
    tab = window.tabs_controller.document_tabs()[0]
    assert tab.current_view() == "timeline"
    timeline = tab.view_widget("timeline")
    assert timeline.selected_row == ids[0]
    assert list(timeline._matches)[: len(ids)] == ids
    events = tab.document.bundle.timeline.events
    assert seen["select"]["first"]["name"] == str(events["name"].iat[ids[0]])
    assert seen["bad"].is_error
    assert "there is no tab 5 (1 documents are open)" in seen["bad"].content[0].text
    assert not link.connected  # the server said bye when its client closed it


def test_the_user_sees_and_can_disconnect_the_assistant(qtbot: Any, linked: Any) -> None:
    _, link = linked
    assistant = WindowLink()
    with qtbot.waitSignal(link.connected_changed) as blocker:
        in_thread(qtbot, assistant.hello)
    assert blocker.args == [True]
    assert link.badge.isVisible()
    assert link.badge.label.text() == "Assistant connected"
    tabs = in_thread(qtbot, assistant.tabs)
    assert [t["path"] for t in tabs["tabs"]] == [str(TRACE)]
    with qtbot.waitSignal(link.connected_changed) as blocker:
        qtbot.mouseClick(link.badge.button, Qt.MouseButton.LeftButton)
    assert blocker.args == [False]
    assert not link.badge.isVisible()
    with pytest.raises(AssistError, match="the user disconnected the assistant"):
        in_thread(qtbot, assistant.tabs)
    with pytest.raises(AssistError, match="select 1 to 10,000 slice ids"):
        in_thread(qtbot, lambda: WindowLink().select(0, [-1]))


def test_without_a_window_the_tools_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME_ENV, f"perfview-test-absent-{uuid.uuid4().hex[:8]}")
    with pytest.raises(AssistError) as info:
        WindowLink().tabs()
    assert str(info.value) == NO_WINDOW
