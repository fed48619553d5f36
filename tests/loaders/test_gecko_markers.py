"""Gecko markers on the Timeline: per thread, the slices are the file's paired interval
markers and the instants its other markers, counted by an independent walk of the JSON; the
other marker shapes (phase, startTime/endTime) pair the same way."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.model import schema
from perfview.loaders import FRESH, load
from perfview.loaders.gecko_markers import Markers
from tests.conftest import DATA

GECKO = DATA / "gecko"
WITH_MARKERS = ("firefox_processed.json", "firefox_raw.json", "firefox_raw_v3.json")


def _threads(profile: Any) -> list[tuple[str, dict[str, Any], list[Any]]]:
    if isinstance(profile, str):
        profile = json.loads(profile)
    out = []
    for thread in profile.get("threads", []):
        if isinstance(thread, str):
            out += _threads(json.loads(thread))
            continue
        strings = thread.get("stringArray", thread.get("stringTable", []))
        out.append((thread.get("name", ""), thread, strings))
    for child in profile.get("processes", []):
        out += _threads(child)
    return out


def _marker_rows(thread: dict[str, Any], strings: list[Any]) -> list[tuple[str, Any]]:
    table = thread.get("markers") or {}
    if "schema" in table:
        s = table["schema"]
        return [(strings[row[s["name"]]], row[s["data"]]) for row in table["data"]]
    return [
        (strings[n], d) for n, d in zip(table.get("name", []), table.get("data", []), strict=False)
    ]


def independent(path: Path) -> list[tuple[Counter[str], Counter[str]]]:
    """Per thread with markers: slices and instants by name (tracing start/end pairs)."""
    out = []
    for _name, thread, strings in _threads(json.loads(path.read_text())):
        slices: Counter[str] = Counter()
        instants: Counter[str] = Counter()
        open_: Counter[str] = Counter()
        for name, data in _marker_rows(thread, strings):
            interval = data.get("interval") if isinstance(data, dict) else None
            if interval == "start":
                open_[name] += 1
            elif interval == "end" and open_[name]:
                open_[name] -= 1
                slices[name] += 1
            elif interval is None:
                instants[name] += 1
        slices += open_  # a start never ended still draws
        if slices or instants:
            out.append((slices, instants))
    return out


@pytest.mark.parametrize("name", WITH_MARKERS)
def test_markers_are_slices_and_instants(name: str) -> None:
    bundle = load(GECKO / name, options=FRESH)
    timeline = bundle.timeline
    assert timeline is not None
    want = independent(GECKO / name)
    schema.validate_tables(
        {"events": timeline.events, "lanes": timeline.lanes, "instants": timeline.instants}
    )
    threads = sorted(set(timeline.lanes["tid"].tolist()))
    assert len(threads) == len(want)
    events, instants = timeline.events, timeline.instants
    for tid, (slices, marks) in zip(threads, want, strict=True):
        got = Counter(events.loc[events["tid"] == tid, "name"].astype(str))
        assert got == slices
        got_instants = Counter(instants.loc[instants["tid"] == tid, "name"].astype(str))
        assert got_instants == marks
    assert bool((events["dur"] >= 0).all())
    # nesting: every child lies inside its parent
    child = events[events["parent"] >= 0]
    parent = events.loc[child["parent"].to_numpy()]
    assert bool((child["ts"].to_numpy() >= parent["ts"].to_numpy()).all())
    assert bool(
        ((child["ts"] + child["dur"]).to_numpy() <= (parent["ts"] + parent["dur"]).to_numpy()).all()
    )


def test_python_sampler_profile_has_no_timeline() -> None:
    assert load(GECKO / "sampled_py.json", options=FRESH).timeline is None


def test_phase_markers_pair_and_overlaps_take_rows() -> None:
    """Today's shape: phase 0 instant, 1 interval, 2/3 start/end; two overlapping intervals
    that do not nest go to two rows of the thread."""
    marks = Markers()
    columns: dict[str, list[Any]] = {
        "name": [0, 1, 2, 2, 1, 3],
        "startTime": [1.0, 2.0, 3.0, None, 2.5, 0.5],
        "endTime": [None, 6.0, None, 4.0, 8.0, None],
        "phase": [0, 1, 2, 3, 1, 0],
        "data": [None, {"type": "GCMajor"}, None, None, None, None],
    }
    marks.add(columns, 6, ["Vsync", "GC", "Paint", "Load"], 0.0, (0, "Main", "Main"))
    timeline = marks.timeline()
    assert timeline is not None
    events = timeline.events
    assert sorted(events["name"].astype(str)) == ["GC", "GC", "Paint"]
    assert sorted(timeline.instants["name"].astype(str)) == ["Load", "Vsync"]
    paint = events[events["name"] == "Paint"].iloc[0]
    assert (int(paint["ts"]), int(paint["dur"])) == (2_500_000, 1_000_000)  # 3 ms - 0.5 ms origin
    assert len(timeline.lanes) == 2  # GC 2-6 and GC 2.5-8 overlap without nesting
    assert np.array_equal(np.sort(timeline.lanes["sub"].to_numpy()), [0, 1])


def test_timeline_page_is_shown_for_a_profile_with_markers() -> None:
    from perfview.core.pages import PAGES

    bundle = load(GECKO / "firefox_processed.json", options=FRESH)
    page = PAGES["timeline"]
    assert page.shown_when is not None
    assert page.shown_when(bundle)
