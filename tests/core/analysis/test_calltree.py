"""Call trees: folded-stack trees with hand-computed values, trace slices, pstats reconstruction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis import bundle_tree, calltree
from perfview.core.model import Bundle, CallTree, PstatsProfile, Timeline, schema
from tests.conftest import sample


def paths(tree: CallTree) -> dict[str, tuple[float, float, float]]:
    """{"main;f;g": (total, self, calls)} for every non-root node."""
    out: dict[str, tuple[float, float, float]] = {}
    names: dict[int, str] = {0: ""}
    for i in range(1, len(tree)):
        prefix = names[int(tree.parent[i])]
        names[i] = f"{prefix};{tree.name(i)}" if prefix else tree.name(i)
        m = tree.metrics
        out[names[i]] = (m["total_ns"][i], m["self_ns"][i], m["calls"][i])
    return out


def check_invariants(tree: CallTree) -> None:
    """Parents precede children; total = self + children's totals everywhere."""
    assert tree.parent[0] == -1
    assert tree.frame[0] == -1
    assert (tree.parent[1:] < np.arange(1, len(tree))).all()
    total = tree.metrics["total_ns"]
    child_sum = np.bincount(tree.parent[1:], weights=total[1:], minlength=len(tree))
    np.testing.assert_allclose(total[1:], tree.metrics["self_ns"][1:] + child_sum[1:])


def test_folded_tree_values() -> None:
    tree = calltree.tree_from_folded("main;f;g 3\nmain;h 1\nmain;f 2\nmain;f;g 1")
    check_invariants(tree)
    assert paths(tree) == {
        "main": (7.0, 0.0, 4.0),
        "main;f": (6.0, 2.0, 3.0),
        "main;f;g": (4.0, 4.0, 2.0),
        "main;h": (1.0, 1.0, 1.0),
    }
    assert tree.metrics["total_ns"][0] == 7.0
    assert not tree.estimated
    # Siblings are ordered biggest first: f before h.
    kids = [tree.name(int(c)) for c in tree.children(1)]
    assert kids == ["f", "h"]


def test_invert_bottom_up() -> None:
    tree = calltree.tree_from_folded("main;f;g 3\nmain;h;g 2\nmain;h 1\nmain 4")
    inv = calltree.invert(tree)
    check_invariants(inv)
    assert paths(inv) == {
        "g": (5.0, 0.0, 2.0),
        "g;f": (3.0, 0.0, 1.0),
        "g;f;main": (3.0, 3.0, 1.0),
        "g;h": (2.0, 0.0, 1.0),
        "g;h;main": (2.0, 2.0, 1.0),
        "main": (4.0, 4.0, 4.0),
        "h": (1.0, 0.0, 2.0),
        "h;main": (1.0, 1.0, 2.0),
    }
    assert inv.metrics["total_ns"][0] == tree.metrics["total_ns"][0] == 10.0


def test_focus_and_focus_frame() -> None:
    tree = calltree.tree_from_folded("main;f;g 3\nmain;h;f;g 2\nmain;h;f 1\nmain;h 5")
    f_node = next(i for i in range(len(tree)) if tree.name(i) == "f" and tree.parent[i] == 1)
    sub = calltree.focus(tree, f_node)
    assert paths(sub) == {"f": (3.0, 0.0, 1.0), "f;g": (3.0, 3.0, 1.0)}
    frame_f = int(tree.frame[f_node])
    merged = calltree.focus_frame(tree, frame_f)
    check_invariants(merged)
    assert paths(merged) == {"f": (6.0, 1.0, 3.0), "f;g": (5.0, 5.0, 2.0)}
    assert calltree.focus(tree, 0) is tree


def test_focus_frame_outermost_only_with_recursion() -> None:
    tree = calltree.tree_from_folded("a;r;r;x 2\na;r 1")
    frame_r = int(tree.frames.index[tree.frames["name"] == "r"][0])
    merged = calltree.focus_frame(tree, frame_r)
    assert paths(merged) == {"r": (3.0, 1.0, 2.0), "r;r": (2.0, 0.0, 1.0), "r;r;x": (2.0, 2.0, 1.0)}


def test_callers_callees_tree() -> None:
    tree = calltree.tree_from_folded("main;f;g 3\nmain;h;g 2\nmain;h;g;k 1\nmain;f 1")
    callers, callees = calltree.callers_callees_tree(tree, "g")
    assert callers.to_dict("list") == {
        "name": ["f", "h"],
        "total_ns": [3.0, 3.0],
        "self_ns": [3.0, 2.0],
        "calls": [1.0, 2.0],
    }
    assert callees["name"].tolist() == ["k"]
    assert callees["total_ns"].tolist() == [1.0]
    top_callers, _ = calltree.callers_callees_tree(tree, "main")
    assert top_callers["name"].tolist() == ["(root)"]


def _timeline(rows: list[tuple[int, int, str, int, int, int]], devices: list[str]) -> Timeline:
    """rows: (ts, dur, name, lane, depth, parent) → a Timeline with the full events schema."""
    ts, dur, name, lane, depth, parent = (list(c) for c in zip(*rows, strict=True))
    n = len(rows)
    events = pd.DataFrame(
        {
            "ts": ts,
            "dur": dur,
            "name": name,
            "cat": ["cpu_op"] * n,
            "kind": ["cpu_op" if d == "cpu" else "kernel" for d in (devices[x] for x in lane)],
            "pid": [0] * n,
            "tid": lane,
            "lane": lane,
            "depth": depth,
            "parent": parent,
            "corr": [-1] * n,
            "ext_id": [-1] * n,
            "shape": [""] * n,
        }
    )
    events = schema.coerce(events, schema.EVENTS)
    lanes = pd.DataFrame({"lane": range(len(devices)), "device": devices})
    return Timeline(
        events=events,
        lanes=lanes,
        instants=schema.empty(schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=schema.empty(schema.MEMORY_EVENTS),
    )


def _trace() -> Timeline:
    return _timeline(
        [
            (0, 100, "step", 0, 0, -1),  # 0
            (10, 40, "fwd", 0, 1, 0),  # 1
            (12, 20, "mm", 0, 2, 1),  # 2
            (60, 30, "fwd", 0, 1, 0),  # 3
            (0, 50, "step", 1, 0, -1),  # 4 (second CPU thread)
            (5, 10, "mm", 1, 1, 4),  # 5
            (0, 70, "kernel", 2, 0, -1),  # 6 (GPU lane, excluded by default)
        ],
        ["cpu", "cpu", "gpu:0"],
    )


def test_tree_from_events_merges_lanes() -> None:
    tree = calltree.tree_from_events(_trace())
    check_invariants(tree)
    assert paths(tree) == {
        "step": (150.0, 70.0, 2.0),
        "step;fwd": (70.0, 50.0, 2.0),
        "step;fwd;mm": (20.0, 20.0, 1.0),
        "step;mm": (10.0, 10.0, 1.0),
    }
    gpu = calltree.tree_from_events(_trace(), lanes=[2])
    assert paths(gpu) == {"kernel": (70.0, 70.0, 1.0)}
    assert list(gpu.frames["name"]) == ["kernel"]  # unused names are dropped


def test_tree_from_events_kind_filter_reattaches_children() -> None:
    tl = _trace()
    kinds = tl.events["kind"].astype(str).to_numpy().copy()
    kinds[1] = "python"  # hide the first "fwd": its "mm" now hangs under "step"
    tl.events["kind"] = pd.Categorical(kinds)
    tree = calltree.tree_from_events(tl, kinds=["cpu_op"])
    check_invariants(tree)
    assert paths(tree) == {
        "step": (150.0, 90.0, 2.0),
        "step;mm": (30.0, 30.0, 2.0),
        "step;fwd": (30.0, 30.0, 1.0),
    }


def test_tree_for_caches() -> None:
    from pathlib import Path

    bundle = Bundle(format="trace", path=Path("x.json"), timeline=_trace())
    tree = bundle_tree.tree_for(bundle)
    assert tree is not None
    assert bundle.tree is tree
    assert bundle_tree.tree_for(bundle) is tree
    assert bundle_tree.tree_for(Bundle(format="mprof", path=Path("x.dat"))) is None


def _profile(
    edges: list[tuple[int, int, int, int]], funcs: list[tuple[str, int, int]]
) -> PstatsProfile:
    """funcs: (name, ncalls, cumtime_ns); edges: (caller, callee, ncalls, cumtime_ns)."""
    functions = pd.DataFrame(
        {
            "function": [f[0] for f in funcs],
            "file": ["x.py"] * len(funcs),
            "line": list(range(len(funcs))),
            "ncalls": [f[1] for f in funcs],
            "primitive_calls": [f[1] for f in funcs],
            "tottime_ns": [0] * len(funcs),
            "cumtime_ns": [f[2] for f in funcs],
        }
    )
    edge_df = pd.DataFrame(
        {
            "caller": [e[0] for e in edges],
            "callee": [e[1] for e in edges],
            "ncalls": [e[2] for e in edges],
            "primitive_calls": [e[2] for e in edges],
            "tottime_ns": [0] * len(edges),
            "cumtime_ns": [e[3] for e in edges],
        }
    )
    return PstatsProfile(
        functions=schema.coerce(functions, schema.FUNCTIONS),
        edges=schema.coerce(edge_df, schema.EDGES),
    )


def test_pstats_tree_apportions_shared_callee() -> None:
    # main(100) calls a(60) and b(30); a and b both call c (c: 40 total, 30 via a, 10 via b);
    # c calls d for 20 in total.
    prof = _profile(
        [(0, 1, 1, 60), (0, 2, 1, 30), (1, 3, 3, 30), (2, 3, 1, 10), (3, 4, 2, 20)],
        [("main", 1, 100), ("a", 1, 60), ("b", 1, 30), ("c", 4, 40), ("d", 2, 20)],
    )
    tree = calltree.tree_from_pstats(prof)
    check_invariants(tree)
    assert tree.estimated
    got = {k: (v[0], v[1]) for k, v in paths(tree).items()}
    assert got == {
        "main": (100.0, 10.0),
        "main;a": (60.0, 30.0),
        "main;a;c": (30.0, 15.0),
        "main;a;c;d": (15.0, 15.0),
        "main;b": (30.0, 20.0),
        "main;b;c": (10.0, 5.0),
        "main;b;c;d": (5.0, 5.0),
    }


def test_pstats_tree_recursion_and_limits() -> None:
    # f calls itself and g; g calls f (mutual recursion): the tree must stop.
    prof = _profile(
        [(0, 1, 1, 100), (1, 1, 5, 80), (1, 2, 3, 50), (2, 1, 2, 40)],
        [("main", 1, 100), ("f", 8, 100), ("g", 3, 50)],
    )
    tree = calltree.tree_from_pstats(prof)
    assert paths(tree).keys() == {"main", "main;f", "main;f;g"}
    cut, notes = calltree.build_pstats_tree(prof, max_depth=2)
    assert paths(cut).keys() == {"main", "main;f"}
    assert len(notes) == 1
    assert "depth 2" in notes[0]


def test_callers_callees_exact() -> None:
    prof = _profile(
        [(0, 1, 1, 60), (0, 2, 1, 30), (1, 3, 3, 30), (2, 3, 1, 10)],
        [("main", 1, 100), ("a", 1, 60), ("b", 1, 30), ("c", 4, 40)],
    )
    callers, callees = calltree.callers_callees(prof, 3)
    assert callers["function"].tolist() == ["a", "b"]
    assert callers["ncalls"].tolist() == [3, 1]
    assert callers["cumtime_ns"].tolist() == [30, 10]
    assert callees.empty
    _, main_callees = calltree.callers_callees(prof, 0)
    assert main_callees["function"].tolist() == ["a", "b"]


@pytest.mark.parametrize(
    ("rel", "root_function"),
    [
        ("pstats/hypothesis_csv_combined.prof", "pytest_runtest_call"),
        ("pstats/dtu_gabriellanaro_output.prof", "<built-in method builtins.exec>"),
        ("pstats/gprof2dot_memtrail.pstats", "<built-in method builtins.exec>"),
    ],
)
def test_pstats_tree_on_real_samples(rel: str, root_function: str) -> None:
    from perfview.loaders import cprofile

    bundle = cprofile.load(sample(rel))
    tree, prof = bundle.tree, bundle.profile
    assert tree is not None
    assert prof is not None
    assert tree.estimated
    check_invariants(tree)
    _, times, _ = calltree.root_functions(prof)
    total = tree.metrics["total_ns"][0]
    assert total == pytest.approx(times.sum())
    # The main entry point's whole cumtime sits at the top of the tree.
    funcs = prof.functions
    main = funcs.index[funcs["function"] == root_function]
    top_cum = funcs.loc[main, "cumtime_ns"].max()
    assert total == pytest.approx(top_cum, rel=0.01)
    assert len(tree) < 20_000
    assert int(node_depth_max(tree)) < 200
    inv = calltree.invert(tree)
    assert inv.metrics["total_ns"][0] == pytest.approx(tree.metrics["self_ns"][1:].sum())


def node_depth_max(tree: CallTree) -> int:
    depths = calltree.node_depths(tree)
    np.testing.assert_array_equal(depths, tree.depth)
    return int(depths.max())
