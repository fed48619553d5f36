"""Every menu command in one table: id, text, its menu, shortcut and tip.

Keeping the table separate from the window makes shortcuts easy to audit (no duplicates, one
place to change a key) and lets tests trigger commands by id. What each command calls is a
callable the window hands to `build_actions` (`MainWindow._handlers`: one line per id, each a
method of the controller that does the work), so the type checker sees every target and a
command without one (or one without a command) fails when the window is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

# Explicit key strings rather than QKeySequence.StandardKey: StandardKey.Quit has no binding on
# some platforms (offscreen, plain X11) and StandardKey.Close maps to Ctrl+F4 first.
# Ctrl+F is left to the views (timeline/icicle search); a window-wide Ctrl+F would make Qt
# report an ambiguous shortcut and fire neither. Ctrl+L focuses the current view's filter box.
Shortcut = str | None


@dataclass(frozen=True)
class ActionSpec:
    id: str
    text: str
    menu: str  # a key of MENU_TITLES
    shortcut: Shortcut = None
    tip: str = ""
    separator_before: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open", "&Open…", "file", "Ctrl+O",
               "Open a profile, trace or memory recording"),
    ActionSpec("open_example", "Open &Example Profile", "file", None,
               "Open the small cProfile profile that ships with perfview"),
    ActionSpec("open_folder", "Open &Folder…", "file", "Ctrl+Shift+F",
               "Open a folder of per-rank torch traces (a distributed run) in a Ranks tab"),
    ActionSpec("open_location", "Open &Location…", "file", "Ctrl+Shift+L",
               "Open a path or URL: s3://, gs://, az://, hdfs://, http(s)://"),
    ActionSpec("compare", "Co&mpare…", "file", "Ctrl+Shift+O",
               "Compare two runs side by side (A = baseline, B = new)", separator_before=True),
    ActionSpec("reload", "&Reload", "file", "F5",
               "Load the current file again from disk"),
    ActionSpec("export_table", "&Export Table as CSV…", "file", None,
               "Save every visible row of the current table to a CSV file",
               separator_before=True),
    ActionSpec("export_view", "Export &View…", "file", None,
               "Save the current view as SVG or PNG, its table as CSV or Parquet"),
    ActionSpec("open_workspace", "Open &Workspace…", "file", None,
               "Reopen the files and views of a saved workspace"),
    ActionSpec("save_workspace", "Save Wor&kspace…", "file", None,
               "Save the open files and how each tab looks"),
    ActionSpec("close", "&Close", "file", "Ctrl+W",
               "Close the current document"),
    ActionSpec("quit", "&Quit", "file", "Ctrl+Q",
               "Quit perfview", separator_before=True),
    ActionSpec("copy_table", "Copy Table as &CSV", "edit", "Ctrl+Shift+C",
               "Copy every visible row of the current table as CSV"),
    ActionSpec("find", "&Filter / Search…", "edit", "Ctrl+L",
               "Focus the current view's filter box"),
    ActionSpec("next_view", "&Next View", "view", "Ctrl+PgDown",
               "Show the next view of this document"),
    ActionSpec("prev_view", "&Previous View", "view", "Ctrl+PgUp",
               "Show the previous view of this document"),
    ActionSpec("snakeviz", "Open in &snakeviz", "view", None,
               "Serve this cProfile profile with snakeviz (on 127.0.0.1) and open the browser",
               separator_before=True),
    ActionSpec("run_script", "&Run Script…", "profile", "Ctrl+R",
               "Profile a Python script with cProfile, torch.profiler or memory_profiler"),
    ActionSpec("rerun_last", "Re-run &Last", "profile", "Ctrl+Shift+R",
               "Run the last profiled script again with the same settings"),
    ActionSpec("show_runs", "R&uns…", "profile", None,
               "List past runs to reopen or delete them", separator_before=True),
    ActionSpec("about", "&About perfview", "help", None, ""),
)  # fmt: skip

MENU_TITLES = {
    "file": "&File",
    "edit": "&Edit",
    "view": "&View",
    "profile": "&Profile",
    "help": "&Help",
}


def build_actions(
    parent: QObject, handlers: Mapping[str, Callable[[], object]]
) -> dict[str, QAction]:
    """QActions for `ACTIONS`, parented to `parent`, each calling `handlers[its id]`."""
    declared = {spec.id for spec in ACTIONS}
    if declared != set(handlers):
        missing = sorted(declared - set(handlers))
        extra = sorted(set(handlers) - declared)
        raise ValueError(f"menu commands without a handler {missing}, handlers without one {extra}")
    actions: dict[str, QAction] = {}
    for spec in ACTIONS:
        action = QAction(spec.text, parent)
        if spec.shortcut is not None:
            action.setShortcut(QKeySequence(spec.shortcut))
        if spec.tip:
            action.setStatusTip(spec.tip)
            action.setToolTip(spec.tip)
        action.triggered.connect(lambda _checked=False, h=handlers[spec.id]: h())
        actions[spec.id] = action
    return actions


def build_menus(
    window: QMainWindow, actions: dict[str, QAction], extra: dict[str, QMenu] | None = None
) -> dict[str, QMenu]:
    """Menus in `MENU_TITLES` order. `extra` submenus are appended: {"file:recent": menu}
    places `menu` in File right after Open (the recent-files menu)."""
    menus: dict[str, QMenu] = {}
    bar = window.menuBar()
    for key, title in MENU_TITLES.items():
        menus[key] = bar.addMenu(title)
    extra = extra or {}
    for spec in ACTIONS:
        menu = menus[spec.menu]
        if spec.separator_before:
            menu.addSeparator()
        menu.addAction(actions[spec.id])
        sub = extra.get(f"{spec.menu}:{spec.id}")
        if sub is not None:
            menu.addMenu(sub)
    return menus


def check_unique_shortcuts() -> list[str]:
    """Shortcuts used by more than one action (for a test; should be empty)."""
    seen: dict[str, str] = {}
    clashes = []
    for spec in ACTIONS:
        if spec.shortcut is None:
            continue
        text = QKeySequence(spec.shortcut).toString()
        if text in seen:
            clashes.append(f"{text}: {seen[text]} and {spec.id}")
        seen[text] = spec.id
    return clashes


__all__ = [
    "ACTIONS",
    "MENU_TITLES",
    "ActionSpec",
    "build_actions",
    "build_menus",
    "check_unique_shortcuts",
]
