"""Time the pstats tree cannot reach from its roots goes on extra top-level nodes, with a note."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis import calltree
from perfview.core.model import CallTree, PstatsProfile, schema
from perfview.loaders import load
from tests.conftest import DATA, sample

PSTATS_SAMPLES = [
    "pstats/hypothesis_csv_combined.prof",
    "pstats/dtu_gabriellanaro_output.prof",
    "pstats/gprof2dot_memtrail.pstats",
    "pstats/gprof2dot_print1.pstats",
]


def top_level(tree: CallTree) -> dict[str, float]:
    kids = tree.children(0)
    return {tree.name(int(k)): float(tree.metrics["total_ns"][k]) for k in kids}


def _profile(
    funcs: list[tuple[str, float, float]], edges: list[tuple[int, int, float]]
) -> PstatsProfile:
    """funcs: (name, tottime, cumtime); edges: (caller, callee, cumtime); one call each."""
    functions = pd.DataFrame(
        {
            "function": [f[0] for f in funcs],
            "file": ["m.py"] * len(funcs),
            "line": list(range(1, len(funcs) + 1)),
            "ncalls": [1] * len(funcs),
            "primitive_calls": [1] * len(funcs),
            "tottime_ns": [f[1] for f in funcs],
            "cumtime_ns": [f[2] for f in funcs],
        }
    )
    edge_df = pd.DataFrame(
        {
            "caller": [e[0] for e in edges],
            "callee": [e[1] for e in edges],
            "ncalls": [1] * len(edges),
            "primitive_calls": [1] * len(edges),
            "tottime_ns": [0] * len(edges),
            "cumtime_ns": [e[2] for e in edges],
        }
    )
    return PstatsProfile(
        functions=schema.coerce(functions, schema.FUNCTIONS),
        edges=schema.coerce(edge_df, schema.EDGES),
        total_ns=int(sum(f[1] for f in funcs)),
    )


def test_cycle_without_entry_becomes_a_root() -> None:
    # main (1 ms own) ran a and b for 9 ms, but the main → a edge is missing: a ⇄ b is a
    # cycle nobody enters. Before, main showed 10 ms with 9 ms of "self" time.
    prof = _profile(
        [("main", 1e6, 10e6), ("a", 4e6, 9e6), ("b", 5e6, 5e6)],
        [(1, 2, 5e6), (2, 1, 9e6)],
    )
    tree, notes = calltree.build_pstats_tree(prof)
    tops = top_level(tree)
    assert tops == pytest.approx({"main": 1e6, "a": 9e6})
    assert tree.metrics["total_ns"][0] == pytest.approx(10e6)
    assert len(notes) == 1
    assert notes == tree.notes
    assert "9 ms" in notes[0]
    assert "a (" not in notes[0]
    assert "m.py:2(a)" in notes[0]
    assert "call cycle with no recorded entry edge" in notes[0]
    a = int(np.flatnonzero(tree.frame == 1)[0])
    assert [tree.name(int(k)) for k in tree.children(a)] == ["b"]


def test_consistent_profile_gets_no_extra_roots() -> None:
    prof = _profile(
        [("main", 1e6, 10e6), ("a", 4e6, 9e6), ("b", 5e6, 5e6)],
        [(0, 1, 9e6), (1, 2, 5e6)],
    )
    tree, notes = calltree.build_pstats_tree(prof)
    assert top_level(tree) == pytest.approx({"main": 10e6})
    assert notes == []
    assert tree.notes == []


def test_colliding_keys_fixture() -> None:
    """`python -m cProfile -m evalpkg` whose code calls eval
    (scripts/fixtures/make_pstats_collision.py)."""
    bundle = load(DATA / "module_eval_collision.prof")
    warnings = " ".join(bundle.warnings)
    assert "colliding pstats keys: <string>:1(<module>)" in warnings
    assert "run_module" in warnings
    assert "collides" in warnings
    tree = bundle.tree
    assert tree is not None
    tops = top_level(tree)
    assert "run_module" in tops
    assert sum(tops.values()) == pytest.approx(bundle.duration_ns, rel=0.01)
    assert tree.metrics["total_ns"][0] == pytest.approx(sum(tops.values()), rel=1e-4)


def test_hypothesis_cycle_is_placed() -> None:
    bundle = load(sample("pstats/hypothesis_csv_combined.prof"))
    tree = bundle.tree
    assert tree is not None
    tops = top_level(tree)
    # Before: 17 nodes, pytest_runtest_call 7.74 s of which 7.74 s "self" in pytest_pyfunc_call.
    assert len(tree) > 300
    assert tops["pytest_runtest_call"] < 0.01e9
    assert tops["wrapped_test"] + tops["test"] == pytest.approx(7.74e9, rel=0.01)
    assert sum(tops.values()) == pytest.approx(bundle.duration_ns, rel=0.01)
    assert any("call cycle with no recorded entry edge" in w for w in bundle.warnings)


@pytest.mark.parametrize("rel", PSTATS_SAMPLES)
def test_top_level_adds_up_on_real_samples(rel: str) -> None:
    bundle = load(sample(rel))
    tree = bundle.tree
    assert tree is not None
    assert sum(top_level(tree).values()) == pytest.approx(bundle.duration_ns, rel=0.01)


def test_fixture_script_exists() -> None:
    root = Path(__file__).resolve().parents[3]
    assert (root / "scripts" / "fixtures" / "make_pstats_collision.py").exists()
