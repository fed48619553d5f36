"""An AI assistant's link to this window (`perfview mcp --window`): it sees the open tabs and
selects the slices it talks about, zoomed to the first; the status bar says that an assistant
is connected, with a button that disconnects it.

Requests come through the single-instance channel (`single_instance.InstanceServer`, one JSON
line each way, `perfview.instance_channel`) and are answered here on the GUI thread: listing
tabs and asking a tab to select rows are quick, and the Timeline builds itself as it does
for a click on a recommendation (`Document.show_slices`).

An assistant's server says `hello` with a session token first; "Disconnect" refuses that
token from then on (a new `perfview mcp --window` says hello with a new one), and `bye`
clears the status bar when the assistant's client stops the server.

The one hook in the application: `attach(window, server)` where the window starts listening
(`qt/app.py`, `_serve_instance`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStatusBar, QWidget

from perfview.qt.main_window import MainWindow
from perfview.qt.single_instance import InstanceServer
from perfview.qt.window_tabs import TabsController

MAX_SELECT = 10_000  # slice ids in one select: a selection, not a dump of the trace


class AssistantLink(QObject):
    """Answers an assistant's requests about the window's tabs (`tabs`); its badge sits in
    `status_bar`; `connected` while an assistant is."""

    connected_changed = Signal(bool)
    answered = Signal(str)  # the request's op, once answered (tests wait on it)

    def __init__(
        self, tabs: TabsController, status_bar: QStatusBar, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.tabs_controller = tabs
        self.session: str | None = None
        self.refused: set[str] = set()
        self.badge = _Badge(self.drop_assistant)
        status_bar.addPermanentWidget(self.badge)
        self.badge.hide()

    @property
    def connected(self) -> bool:
        return self.session is not None

    # ------------------------------------------------------------------------- requests

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request; an `error` sentence for anything it cannot do."""
        op = str(request.get("op", ""))
        try:
            reply = self._answer(op, request)
        except (KeyError, TypeError, ValueError) as exc:
            reply = {"error": f"bad {op or 'assistant'} request: {exc}"}
        self.answered.emit(op)
        return reply

    def _answer(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        session = str(request["session"])
        if session in self.refused:
            return {"error": "the user disconnected the assistant in the perfview window"}
        if op == "hello":
            self._set(session)
            return {"ok": True}
        if op == "bye":
            if session == self.session:
                self._set(None)
            return {"ok": True}
        if session != self.session:
            self._set(session)  # a window started after the assistant's server
        if op == "tabs":
            return {"tabs": self.tabs()}
        if op == "select":
            return self.select(int(request["tab"]), [int(i) for i in request["slices"]])
        return {"error": f"unknown request {op!r} (hello, tabs, select, bye)"}

    def tabs(self) -> list[dict[str, Any]]:
        """The open documents, in tab order, with the page each shows."""
        current = self.tabs_controller.current_tab()
        rows = []
        for i, tab in enumerate(self.tabs_controller.document_tabs()):
            bundle = tab.document.bundle
            rows.append(
                {
                    "tab": i,
                    "path": str(tab.document.path),
                    "format": bundle.format,
                    "page": tab.current_view(),
                    "current": tab is current,
                    "slices": len(bundle.timeline.events) if bundle.timeline is not None else 0,
                }
            )
        return rows

    def select(self, index: int, ids: list[int]) -> dict[str, Any]:
        """Show tab `index` with slices `ids` selected in its Timeline, zoomed to the first."""
        tabs = self.tabs_controller.document_tabs()
        if not 0 <= index < len(tabs):
            return {"error": f"there is no tab {index} ({len(tabs)} documents are open)"}
        tab = tabs[index]
        timeline = tab.document.bundle.timeline
        if timeline is None:
            return {"error": f"tab {index} ({tab.document.path.name}) has no Timeline"}
        n = len(timeline.events)
        bad = [i for i in ids if not 0 <= i < n]
        if not ids or bad or len(ids) > MAX_SELECT:
            return {
                "error": f"select 1 to {MAX_SELECT:,} slice ids between 0 and {n - 1:,}"
                + (f"; {bad[0]} is not one" if bad else "")
            }
        self.tabs_controller.show(tab)
        tab.document.show_slices(ids)
        events = timeline.events
        first = ids[0]
        return {
            "tab": index,
            "path": str(tab.document.path),
            "selected": len(ids),
            "first": {
                "id": first,
                "name": str(events["name"].iat[first]),
                "ts": int(events["ts"].to_numpy()[first]),
                "dur": int(events["dur"].to_numpy()[first]),
            },
        }

    # ----------------------------------------------------------------------- connection

    def drop_assistant(self) -> None:
        """The user's "Disconnect": this assistant's requests are refused from now on."""
        if self.session is not None:
            self.refused.add(self.session)
        self._set(None)

    def _set(self, session: str | None) -> None:
        was = self.connected
        self.session = session
        self.badge.setVisible(session is not None)
        if was != self.connected:
            self.connected_changed.emit(self.connected)


class _Badge(QWidget):
    """ "Assistant connected" and a Disconnect button, in the status bar while one is."""

    def __init__(self, on_disconnect: Any) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel("Assistant connected", self)
        self.label.setToolTip("An AI assistant reads this window's tabs (perfview mcp --window)")
        self.button = QPushButton("Disconnect", self)
        self.button.setFlat(True)
        self.button.clicked.connect(on_disconnect)
        layout.addWidget(self.label)
        layout.addWidget(self.button)


def attach(window: MainWindow, server: InstanceServer) -> AssistantLink:
    """Let assistants reach `window`'s tabs through `server` (the link is the server's)."""
    link = AssistantLink(window.tabs_controller, window.statusBar(), parent=server)
    server.set_responder(link.answer)
    return link


__all__ = ["MAX_SELECT", "AssistantLink", "attach"]
