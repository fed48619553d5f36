"""The estimated cProfile icicle keeps each function's exact pstats totals where the tree can.

cProfile records edges, not stacks, so the icicle is an estimate; but a script's `<module>`
under `exec` is one exact edge (39.14 s, the whole run), and a function reached along a single
path gets all of its time and calls. Call counts are whole numbers: a split estimate is rounded.
"""

from __future__ import annotations

import pstats

import numpy as np
import pytest

from perfview.core.analysis.pstats_graph import build_pstats_tree
from perfview.loaders import cprofile
from tests.conftest import sample

FILES = [
    "pstats/dtu_gabriellanaro_output.prof",
    "pstats/hypothesis_csv_combined.prof",
    "pstats/gprof2dot_memtrail.pstats",
    "pstats/gprof2dot_print1.pstats",
]


def test_script_module_is_the_exact_exec_edge() -> None:
    path = sample("pstats/dtu_gabriellanaro_output.prof")
    stats = pstats.Stats(str(path))
    exec_key = ("~", 0, "<built-in method builtins.exec>")
    table = stats.stats  # type: ignore[attr-defined]
    script = next(k for k in table if k[0].endswith("vae_mnist_working.py") and k[2] == "<module>")
    edge_s = table[script][4][exec_key][3]
    tree, _ = build_pstats_tree(cprofile.load(path).profile)  # type: ignore[arg-type]
    files = tree.frames["file"].to_numpy(dtype=object)[tree.frame[1:]]
    names = tree.frames["name"].to_numpy(dtype=object)[tree.frame[1:]]
    node = 1 + int(np.flatnonzero((names == "<module>") & (files == script[0]))[0])
    total = tree.metrics["total_ns"]
    assert total[node] == pytest.approx(edge_s * 1e9, rel=1e-6)
    assert total[node] / total[0] == pytest.approx(1.0, abs=1e-5)  # 100 %, as pstats says


@pytest.mark.parametrize("rel", FILES)
def test_a_function_on_one_path_gets_all_its_time_and_calls(rel: str) -> None:
    profile = cprofile.load(sample(rel)).profile
    assert profile is not None
    tree, _ = build_pstats_tree(profile)
    frame = tree.frame[1:].astype(np.int64)
    total = tree.metrics["total_ns"][1:]
    calls = tree.metrics["calls"][1:]
    cum = profile.functions["cumtime_ns"].to_numpy(dtype=np.float64)
    ncalls = profile.functions["ncalls"].to_numpy(dtype=np.float64)
    callers = np.bincount(profile.edges["callee"].to_numpy(dtype=np.int64), minlength=len(cum))
    # Functions with one caller edge, drawn on exactly one node whose parent node is also
    # the only node of its function, holds all of that function's time and is not recursive
    # (its edges add up to no more than its time): nothing to split.
    out = np.bincount(
        profile.edges["caller"].to_numpy(dtype=np.int64),
        weights=profile.edges["cumtime_ns"].to_numpy(dtype=np.float64),
        minlength=len(cum),
    )
    nodes = np.bincount(frame, minlength=len(cum))
    node_of = np.full(len(cum), -1)
    node_of[frame] = np.arange(len(frame))
    parent = tree.parent[1:].astype(np.int64) - 1
    checked = 0
    for f in np.flatnonzero((nodes == 1) & (callers == 1)):
        i = node_of[f]
        p = parent[i]
        if p < 0 or nodes[frame[p]] != 1 or abs(total[p] - cum[frame[p]]) > 1e-6 * cum[frame[p]]:
            continue
        if out[frame[p]] > cum[frame[p]] * (1 + 1e-9):
            continue
        if not _single_caller_chain_exact(profile, int(frame[p]), int(f)):
            continue
        assert total[i] == pytest.approx(cum[f], rel=1e-6), profile.functions["function"][f]
        assert calls[i] == ncalls[f]
        checked += 1
    assert checked > 0


def _single_caller_chain_exact(profile, caller: int, callee: int) -> bool:  # type: ignore[no-untyped-def]
    """True when the recorded edge caller → callee carries the callee's whole cumtime."""
    e = profile.edges
    row = e[(e["caller"] == caller) & (e["callee"] == callee)]
    cum = float(profile.functions["cumtime_ns"].iloc[callee])
    return len(row) == 1 and abs(float(row["cumtime_ns"].iloc[0]) - cum) <= 1e-9 * max(cum, 1)


@pytest.mark.parametrize("rel", FILES)
def test_estimated_call_counts_are_whole_numbers(rel: str) -> None:
    profile = cprofile.load(sample(rel)).profile
    assert profile is not None
    tree, _ = build_pstats_tree(profile)
    calls = tree.metrics["calls"][1:]
    assert np.array_equal(calls, np.rint(calls))
    assert (calls >= 1).all()
