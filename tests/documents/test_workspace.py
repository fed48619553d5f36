"""Workspace files (documents/workspace.py): round trip, relative paths, untrusted fields."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from perfview.core.layout.track_arrange import TrackState
from perfview.core.model.errors import LoadError
from perfview.documents import workspace as ws


def _workspace(folder: Path) -> ws.Workspace:
    (folder / "traces").mkdir()
    a, b = folder / "traces" / "a.json", folder / "b.prof"
    a.write_text("{}")
    b.write_text("x")
    state = TrackState(
        order=(2, 0), pinned=(3,), hidden=frozenset({1}), collapsed=frozenset({7}),
        name_filter="gpu", flows="all",
    )  # fmt: skip
    return ws.Workspace(
        [
            ws.TabState(a, "timeline", (10, 2000), (100, 900), 42, state, [ws.Bookmark(5, "x")]),
            ws.TabState(b, "functions"),
        ],
        current=1,
    )


def test_round_trip_with_relative_paths_survives_a_move(tmp_path: Path) -> None:
    folder = tmp_path / "study"
    folder.mkdir()
    original = _workspace(folder)
    target = ws.save(original, folder / "mine")  # suffix added
    assert target.name == "mine.perfview"
    doc = json.loads(target.read_text())
    assert doc["format"] == "perfview-workspace"
    assert [t["path"] for t in doc["tabs"]] == ["traces/a.json", "b.prof"]
    assert ws.read(target) == _resolved(original, folder)
    moved = tmp_path / "elsewhere"
    shutil.move(folder, moved)
    again = ws.read(moved / "mine.perfview")
    assert [t.path for t in again.tabs] == [moved / "traces" / "a.json", moved / "b.prof"]
    assert ws.missing(again) == []
    assert again.tabs[0].tracks == original.tabs[0].tracks
    assert again.current == 1


def _resolved(workspace: ws.Workspace, folder: Path) -> ws.Workspace:
    for tab in workspace.tabs:
        tab.path = folder / Path(tab.path).resolve().relative_to(folder.resolve())
    return workspace


def test_bad_fields_are_dropped_and_missing_files_listed(tmp_path: Path) -> None:
    doc = {
        "format": "perfview-workspace",
        "version": 1,
        "current": 9,
        "tabs": [
            {"path": "gone.json", "view": 3, "x_range": [1, "a"], "selection": -4,
             "tracks": {"hidden": [1, "x", True], "flows": "sideways", "pinned": "no"}},
            {"nopath": 1},
            "junk",
        ],
    }  # fmt: skip
    (tmp_path / "w.perfview").write_text(json.dumps(doc))
    got = ws.read(tmp_path / "w.perfview")
    assert len(got.tabs) == 1
    tab = got.tabs[0]
    assert (tab.view, tab.x_range, tab.selection) == ("", None, None)
    assert tab.tracks == TrackState(hidden=frozenset({1}))
    assert got.current == 0
    assert ws.missing(got) == [tmp_path / "gone.json"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json", "not JSON"),
        ('{"format": "other"}', "not a perfview workspace"),
        ('{"format": "perfview-workspace", "version": 99}', "newer perfview"),
    ],
)
def test_not_a_workspace_is_one_sentence(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "w.perfview"
    path.write_text(text)
    with pytest.raises(LoadError, match=reason):
        ws.read(path)
    with pytest.raises(LoadError, match="cannot read it"):
        ws.read(tmp_path / "none.perfview")
