"""File ▸ Save Workspace… / Open Workspace…: the window's tabs to and from a `.perfview` file.

The file format and its checks are `core.workspace`; this captures each document tab's state
(page, the timeline's zoom, track arrangement, selected slice and time range) and restores it:
every file is opened as usual (in the background), and its tab's state is applied when its
document arrives. Files that are gone are reported in one line; the others still open.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from perfview.core.layout.track_arrange import FLOW_MODES, TrackState
from perfview.core.model.errors import LoadError
from perfview.documents import workspace as ws
from perfview.qt.document_tab import DocumentTab

# The window is typed loosely (`Window`): main_window imports this module, and an import back,
# even under TYPE_CHECKING, is a cycle the architecture test refuses.
Window = Any

FILTER = f"perfview workspace (*{ws.SUFFIX})"


def _timeline_view(tab: DocumentTab, build: bool = False) -> Any:
    """The tab's TimelineView when it has one (built only when `build`)."""
    if "timeline" not in tab.view_names():
        return None
    widget = tab.view_widget("timeline") if build else getattr(tab, "_views", {}).get("timeline")
    return widget if hasattr(widget, "tracks_panel") else None


def capture(window: Window) -> ws.Workspace:
    """The state of every document tab of `window`."""
    tabs: list[ws.TabState] = []
    current = 0
    for i in range(window.tabs.count()):
        tab = window.tabs.widget(i)
        if not isinstance(tab, DocumentTab):
            continue
        if tab is window.tabs.currentWidget():
            current = len(tabs)
        state = ws.TabState(path=Path(tab.document.path), view=tab.current_view())
        state.time_range = getattr(tab.document, "range", None)
        state.bookmarks = list(getattr(tab, "workspace_bookmarks", []))
        view = _timeline_view(tab)
        if view is not None:
            lo, hi = view.x_range()
            state.x_range = (round(lo), round(hi))
            state.tracks = view.tracks_panel.state
            state.selection = view.selected_row
            state.bookmarks = list(view.bookmarks.items)
        tabs.append(state)
    return ws.Workspace(tabs, current)


def apply(tab: DocumentTab, state: ws.TabState) -> None:
    """Bring `tab` to `state` (what of it fits: a page that no longer exists is skipped)."""
    tab.workspace_bookmarks = list(state.bookmarks)  # type: ignore[attr-defined]
    wants_timeline = state.view == "timeline" or state.x_range or state.tracks != TrackState()
    view = _timeline_view(tab, build=bool(wants_timeline))
    if view is not None:
        panel = view.tracks_panel
        layout = dataclasses.replace(state.tracks, flows=panel.state.flows)
        if layout != panel.state:
            panel.apply(**{f.name: getattr(layout, f.name) for f in dataclasses.fields(layout)})
        panel.flows.setCurrentIndex(FLOW_MODES.index(state.tracks.flows))
        events = len(view.timeline.events)
        if state.selection is not None and state.selection < events:
            view.select_event(state.selection)
        if state.time_range is not None:
            view.select_range(*state.time_range)
        if state.x_range is not None:
            view.viewbox.setXRange(*state.x_range, padding=0)
        view.bookmarks.set(list(state.bookmarks))
    elif state.time_range is not None:
        tab.document.set_range(*state.time_range)
    if state.view in tab.view_names():
        tab.show_view(state.view)


def save_workspace(window: Window, path: str | Path | None = None) -> Path | None:
    if path is None:
        start = str(Path(window.settings.last_folder()) / f"workspace{ws.SUFFIX}")
        path, _ = QFileDialog.getSaveFileName(window, "Save workspace", start, FILTER)
        if not path:
            return None
    try:
        target = ws.save(capture(window), path)
    except OSError as exc:
        message = f"perfview: cannot write {path}: {exc.strerror or exc}"
        window.error_bar.show_message(message, "error")
        return None
    window.statusBar().showMessage(f"Workspace saved to {target}", 5000)
    return target


def open_workspace(window: Window, path: str | Path | None = None) -> ws.Workspace | None:
    """Open every file of the workspace and restore its tab when it has loaded."""
    if path is None:
        start = window.settings.last_folder()
        path, _ = QFileDialog.getOpenFileName(window, "Open workspace", start, FILTER)
        if not path:
            return None
    try:
        workspace = ws.read(path)
    except LoadError as exc:
        window.error_bar.show_message(f"perfview: cannot open workspace {path}: {exc}", "error")
        return None
    gone = ws.missing(workspace)
    if gone:
        names = ", ".join(str(p) for p in gone)
        files = "file is" if len(gone) == 1 else "files are"
        window.error_bar.show_message(
            f"{len(gone)} {files} missing from workspace {Path(path).name}: {names}", "warning"
        )
    pending = {str(Path(t.path).resolve()): t for t in workspace.tabs if t.path not in gone}
    focus = workspace.tabs[workspace.current].path if workspace.tabs else None

    def on_opened(tab: DocumentTab) -> None:
        state = pending.pop(str(Path(tab.document.path).resolve()), None)
        if state is None:
            return
        apply(tab, state)
        if focus is not None and Path(state.path) == Path(focus):
            window.tabs.setCurrentWidget(tab)
        if not pending:
            window.document_opened.disconnect(on_opened)
            window.workspace_restored.emit(workspace)

    window.document_opened.connect(on_opened)
    for key in list(pending):
        window.open_path(pending[key].path)
    if not pending:
        window.workspace_restored.emit(workspace)
    return workspace


__all__ = ["apply", "capture", "open_workspace", "save_workspace"]
