"""Workspaces: which files were open and how each tab looked, in a small `.perfview` JSON file.

Why a file of its own: an investigation spans several traces, a zoom level, a few hidden or
pinned tracks, a selected slice and a time range; reopening all that by hand costs minutes.
Paths are stored relative to the workspace file (a folder of traces plus its workspace can be
moved or shared as a unit), absolute when no relative path exists (another drive). Written
atomically. Reading never trusts the file: every field is checked and a bad one is dropped,
so a hand-edited workspace restores what it can.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from perfview.core.atomic import write_text
from perfview.core.layout.track_arrange import FLOW_MODES, TrackState
from perfview.core.model.errors import LoadError

FORMAT = "perfview-workspace"
VERSION = 1
SUFFIX = ".perfview"
MIME_TYPE = "application/x-perfview-workspace"
# Tabs a workspace may list: each opens a document, so a file naming 100,000 (a fuzz case,
# 25 MB) would keep the window opening files for hours; reading them alone took 10-25 s.
MAX_TABS = 1000


@dataclass
class Bookmark:
    """A named point in time on a trace (ns from the trace's origin)."""

    ts_ns: int
    label: str = ""


@dataclass
class TabState:
    """How one document's tab looked."""

    path: Path
    view: str = ""
    x_range: tuple[int, int] | None = None  # the timeline's visible ns range
    time_range: tuple[int, int] | None = None  # the selected ns range
    selection: int | None = None  # the selected slice (event row)
    tracks: TrackState = field(default_factory=TrackState)
    bookmarks: list[Bookmark] = field(default_factory=list)


@dataclass
class Workspace:
    tabs: list[TabState] = field(default_factory=list)
    current: int = 0


def _rel(path: Path, base: Path) -> str:
    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive (Windows): keep it absolute
        return str(path)


def tracks_to_dict(state: TrackState) -> dict[str, Any]:
    return {
        "order": list(state.order),
        "pinned": list(state.pinned),
        "hidden": sorted(state.hidden),
        "collapsed": sorted(state.collapsed),
        "name_filter": state.name_filter,
        "flows": state.flows,
    }


_LIMIT = 2**62  # times, rows and ids far inside int64 (a file's 2**70 must not overflow)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and -_LIMIT < value < _LIMIT


def _ints(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [v for v in value if _is_int(v)]


def tracks_from_dict(doc: Any) -> TrackState:
    if not isinstance(doc, dict):
        return TrackState()
    flows = doc.get("flows")
    text = doc.get("name_filter")
    return TrackState(
        order=tuple(_ints(doc.get("order"))),
        pinned=tuple(_ints(doc.get("pinned"))),
        hidden=frozenset(_ints(doc.get("hidden"))),
        collapsed=frozenset(_ints(doc.get("collapsed"))),
        name_filter=text if isinstance(text, str) else "",
        flows=flows if flows in FLOW_MODES else "selected",
    )


def to_json(workspace: Workspace, base: Path) -> str:
    """The workspace as JSON text, paths relative to `base` (the workspace file's folder)."""
    tabs = []
    for tab in workspace.tabs:
        tabs.append(
            {
                "path": _rel(Path(tab.path).resolve(), base.resolve()),
                "view": tab.view,
                "x_range": list(tab.x_range) if tab.x_range else None,
                "time_range": list(tab.time_range) if tab.time_range else None,
                "selection": tab.selection,
                "tracks": tracks_to_dict(tab.tracks),
                "bookmarks": [{"ts_ns": b.ts_ns, "label": b.label} for b in tab.bookmarks],
            }
        )
    doc = {"format": FORMAT, "version": VERSION, "current": workspace.current, "tabs": tabs}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def _pair(value: Any) -> tuple[int, int] | None:
    """A (start, end) range: two int64-safe integers, start before end; else None."""
    ints = _ints(value)
    ok = len(ints) == 2 and len(value) == 2 and ints[0] < ints[1]
    return (ints[0], ints[1]) if ok else None


def _tab(doc: Any, base: Path) -> TabState | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("path"), str) or not doc["path"]:
        return None
    path = Path(doc["path"])
    selection = doc.get("selection")
    marks = doc.get("bookmarks")
    bookmarks = [
        Bookmark(b["ts_ns"], str(b.get("label") or ""))
        for b in (marks if isinstance(marks, list) else [])
        if isinstance(b, dict) and _is_int(b.get("ts_ns"))
    ]
    view = doc.get("view")
    return TabState(
        path=path if path.is_absolute() else Path(os.path.normpath(base / path)),
        view=view if isinstance(view, str) else "",
        x_range=_pair(doc.get("x_range")),
        time_range=_pair(doc.get("time_range")),
        selection=selection if _is_int(selection) and selection >= 0 else None,
        tracks=tracks_from_dict(doc.get("tracks")),
        bookmarks=bookmarks,
    )


def from_json(text: str, base: Path) -> Workspace:
    """Parse a workspace; LoadError (one sentence) when it is not one at all."""
    try:
        doc = json.loads(text)
    except RecursionError as exc:  # "[[[[…": nested deeper than any workspace
        raise LoadError("it is not a perfview workspace (JSON nested too deep)") from exc
    except ValueError as exc:
        raise LoadError(f"it is not a perfview workspace (not JSON: {exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LoadError('it is not a perfview workspace (no "format": "perfview-workspace")')
    version = doc.get("version")
    if isinstance(version, float) and version.is_integer():
        version = int(version)  # 1.0 is version 1
    if not _is_int(version):
        raise LoadError('it is not a perfview workspace ("version" is not a whole number)')
    if version > VERSION:
        raise LoadError("it was written by a newer perfview; update perfview to open it")
    listed = doc.get("tabs")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise LoadError('it is not a perfview workspace ("tabs" is not a list)')
    if len(listed) > MAX_TABS:
        raise LoadError(
            f"it lists {len(listed):,} tabs; a workspace opens at most {MAX_TABS:,}, so it was "
            "not written by perfview"
        )
    tabs = [t for t in (_tab(d, base) for d in listed) if t is not None]
    current = doc.get("current")
    index = current if isinstance(current, int) and 0 <= current < len(tabs) else 0
    return Workspace(tabs, index)


def save(workspace: Workspace, path: str | Path) -> Path:
    """Write `workspace` to `path` (atomically; `.perfview` added when missing)."""
    target = Path(path)
    if target.suffix != SUFFIX:
        target = target.with_name(target.name + SUFFIX)
    write_text(target, to_json(workspace, target.parent))
    return target


def read(path: str | Path) -> Workspace:
    """Read a workspace file; LoadError with one sentence when it cannot be."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise LoadError(f"cannot read it: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise LoadError("it is not a perfview workspace (not UTF-8 text)") from exc
    return from_json(text, target.parent)


def missing(workspace: Workspace) -> list[Path]:
    """Files of the workspace that do not exist (reported; the other tabs still open)."""
    return [tab.path for tab in workspace.tabs if not Path(tab.path).exists()]


__all__ = [
    "FORMAT",
    "MIME_TYPE",
    "SUFFIX",
    "Bookmark",
    "TabState",
    "Workspace",
    "from_json",
    "missing",
    "read",
    "save",
    "to_json",
    "tracks_from_dict",
    "tracks_to_dict",
]
