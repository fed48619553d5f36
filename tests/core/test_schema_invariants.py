"""The schema's invariants, checked on every load (a parse or the cache): each one catches the
damage it is for, names the table and column, and a loader turns it into a LoadError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.model import Timeline, schema
from perfview.core.model.errors import LoadError
from perfview.loaders import cprofile, trace
from perfview.loaders.trace import loader as trace_loader

DATA = Path(__file__).resolve().parent.parent / "data"
TRACE = DATA / "torch_cpu_small.pt.trace.json.gz"


@pytest.fixture(scope="module")
def timeline() -> Timeline:
    tl = trace.load(TRACE).timeline
    assert tl is not None
    assert len(tl.events) > 10
    return tl


def frames(tl: Timeline) -> dict[str, pd.DataFrame]:
    return {name: getattr(tl, name).copy() for name in schema.TIMELINE_SCHEMAS}


def test_a_parsed_trace_meets_them(timeline: Timeline) -> None:
    schema.validate_tables(frames(timeline))


def _set(table: str, col: str, value: int) -> Callable[[dict[str, pd.DataFrame]], None]:
    def damage(tables: dict[str, pd.DataFrame]) -> None:
        df = tables[table]
        values = df[col].to_numpy().copy()
        values[len(values) // 2] = value
        df[col] = values

    return damage


def _code(table: str, col: str, code: int) -> Callable[[dict[str, pd.DataFrame]], None]:
    def damage(tables: dict[str, pd.DataFrame]) -> None:
        df = tables[table]
        codes = df[col].cat.codes.to_numpy().copy()
        codes[len(codes) // 2] = code
        df[col] = pd.Categorical.from_codes(codes, categories=df[col].cat.categories)

    return damage


def _renumber_lanes(tables: dict[str, pd.DataFrame]) -> None:
    lanes = tables["lanes"]
    lanes["lane"] = (lanes["lane"].to_numpy()[::-1]).astype("int32")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_set("events", "dur", -1), "events.dur: negative value"),
        (_set("events", "depth", -3), "events.depth: negative value"),
        (_set("lanes", "n_events", -1), "lanes.n_events: negative value"),
        (_set("events", "parent", 10**9), "events.parent: row"),
        (_set("events", "parent", -2), "events.parent: row"),
        (_set("events", "lane", 1000), "events.lane: a row outside lanes"),
        (_set("events", "lane", -1), "events.lane: a row outside lanes"),
        (_code("events", "name", -1), "events.name: a code outside its categories"),
        (_code("events", "kind", -1), "events.kind: a code outside its categories"),
        (_renumber_lanes, "lanes.lane: lanes are not numbered by row"),
    ],
)
def test_each_invariant_catches_its_damage(
    timeline: Timeline, damage: Callable[[dict[str, pd.DataFrame]], None], message: str
) -> None:
    tables = frames(timeline)
    damage(tables)
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        schema.validate_tables(tables)


def test_the_parent_must_come_before_its_child(timeline: Timeline) -> None:
    """A parent index equal to the row itself, or after it, is a loop or a damaged number."""
    tables = frames(timeline)
    rows = np.flatnonzero(tables["events"]["parent"].to_numpy() >= 0)
    assert len(rows)
    child = int(rows[0])
    parents = tables["events"]["parent"].to_numpy().copy()
    parents[child] = child
    tables["events"]["parent"] = parents
    with pytest.raises(ValueError, match=f"events.parent: row {child} points at a later row"):
        schema.validate_tables(tables)


def test_flows_name_events_in_range(timeline: Timeline) -> None:
    tables = frames(timeline)
    flows = pd.DataFrame(
        {
            "flow_id": [1],
            "cat": pd.Categorical(["f"]),
            "name": pd.Categorical(["f"]),
            "src_ts": [0],
            "dst_ts": [1],
            "src_event": [len(tables["events"])],
            "dst_event": [-1],
        }
    )
    tables["flows"] = schema.coerce(flows, schema.FLOWS)
    with pytest.raises(ValueError, match=r"flows\.src_event: a row outside events"):
        schema.validate_tables(tables)


def test_unknown_kinds_are_refused(timeline: Timeline) -> None:
    tables = frames(timeline)
    kinds = tables["events"]["kind"]
    tables["events"]["kind"] = kinds.cat.rename_categories([f"x{c}" for c in kinds.cat.categories])
    with pytest.raises(ValueError, match=r"events\.kind: unknown kinds"):
        schema.validate_tables(tables)


def test_a_loader_reports_a_broken_table_as_a_load_error(
    timeline: Timeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loader that builds a broken table (a bug) says so in one sentence, never a number."""
    tables = frames(timeline)
    _set("events", "dur", -7)(tables)
    bad = Timeline(
        **tables,
        args=timeline.args,
        origin_ns=timeline.origin_ns,
        duration_ns=timeline.duration_ns,
        meta=timeline.meta,
    )
    with pytest.raises(LoadError, match=r"could not be converted \(events\.dur: negative"):
        trace_loader._validate(bad)


def test_pstats_edges_name_functions_in_range() -> None:
    bundle = cprofile.load(DATA / "recursion.prof")
    profile = bundle.profile
    assert profile is not None
    edges = profile.edges.copy()
    schema.validate_tables({"functions": profile.functions, "edges": edges})
    callee = edges["callee"].to_numpy().copy()
    callee[0] = len(profile.functions)
    edges["callee"] = callee
    with pytest.raises(ValueError, match=r"edges\.callee: a row outside functions"):
        schema.validate_tables({"functions": profile.functions, "edges": edges})
