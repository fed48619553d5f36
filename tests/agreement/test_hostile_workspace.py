"""Malformed workspace files give one sentence, and `--screenshot` of one exits.

Found by fuzzing: `"tabs": 5` and deep nesting raised tracebacks, a `time_range` of
`[2**70, -5]` was accepted, `"version": 1.0` was called "written by a newer perfview", and
`perfview --screenshot o.png bad.perfview` never returned.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from perfview.core.model.errors import LoadError
from perfview.documents import workspace as ws

GOOD_TAB = {"path": "a.prof", "view": "functions"}


def _doc(**over: Any) -> str:
    doc = {"format": ws.FORMAT, "version": 1, "current": 0, "tabs": [GOOD_TAB]}
    doc.update(over)
    return json.dumps(doc)


@pytest.mark.parametrize(
    "text",
    [
        _doc(tabs=5),
        _doc(tabs="abc"),
        _doc(tabs={"path": "a.prof"}),
        '{"format": "perfview-workspace", "version": 1, "tabs": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        "[" * 100_000,
        _doc(version="1"),
        _doc(version=True),
    ],
    ids=[
        "tabs-int",
        "tabs-str",
        "tabs-dict",
        "deep-nesting",
        "deep-open",
        "version-str",
        "version-bool",
    ],
)
def test_malformed_workspace_is_one_sentence(text: str) -> None:
    with pytest.raises(LoadError) as info:
        ws.from_json(text, Path("/tmp"))
    message = str(info.value)
    assert "\n" not in message
    assert "newer perfview" not in message


def test_version_1_0_is_version_1() -> None:
    assert len(ws.from_json(_doc(version=1.0), Path("/tmp")).tabs) == 1


def test_newer_version_is_still_called_newer() -> None:
    with pytest.raises(LoadError, match="newer perfview"):
        ws.from_json(_doc(version=2), Path("/tmp"))


@pytest.mark.parametrize(
    "bad",
    [[2**70, -5], [-5, 2**70], [10, 5], [1.5, 3], [0, 2**63]],
)
def test_out_of_range_time_range_is_dropped(bad: list[Any]) -> None:
    tab = dict(GOOD_TAB, time_range=bad, x_range=bad, selection=2**70)
    state = ws.from_json(_doc(tabs=[tab]), Path("/tmp")).tabs[0]
    assert state.time_range is None
    assert state.x_range is None
    assert state.selection is None


def test_bookmarks_outside_int64_are_dropped() -> None:
    tab = dict(GOOD_TAB, bookmarks=[{"ts_ns": 2**70}, {"ts_ns": 5, "label": "ok"}, 7])
    state = ws.from_json(_doc(tabs=[tab]), Path("/tmp")).tabs[0]
    assert [b.ts_ns for b in state.bookmarks] == [5]


def test_screenshot_of_a_bad_workspace_exits(qtbot: Any, tmp_path: Path) -> None:
    pytest.importorskip("pytestqt")
    from perfview.qt.app import main

    bad = tmp_path / "bad.perfview"
    bad.write_text(_doc(tabs=5))
    assert main(["--screenshot", str(tmp_path / "o.png"), str(bad)]) == 2
    empty = tmp_path / "empty.perfview"
    empty.write_text(_doc(tabs=[{"path": "missing.prof"}]))
    assert main(["--screenshot", str(tmp_path / "o.png"), str(empty)]) == 2
