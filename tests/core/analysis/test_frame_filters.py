"""Frame filters (core.analysis.frame_filters) on real captures: a memray capture whose
allocations sit under the import system, and a cProfile run with importlib and cProfile
frames. The hidden tree is checked against stacks rebuilt independently, path by path."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from perfview.core.analysis import frame_filters as ff
from perfview.core.analysis.bundle_tree import tree_for
from perfview.core.model import CallTree
from perfview.loaders import load
from tests.conftest import sample

MEMRAY = "memray/async_analysis_linux_memray.bin"
PSTATS = "pstats/dtu_gabriellanaro_output.prof"


def _paths(tree: CallTree, hidden: np.ndarray) -> dict[tuple[int, ...], float]:
    """Each node's stack of SHOWN frames from the root; per stack, the summed totals of the
    shown nodes with that stack (disjoint subtrees): what a flame graph of the stacks without
    the hidden frames shows as that node's total."""
    total = tree.metrics["total_ns"]
    stack: dict[int, tuple[int, ...]] = {0: ()}
    weight: dict[tuple[int, ...], float] = defaultdict(float)
    weight[()] = float(total[0])
    for i in range(1, len(tree)):
        up = stack[int(tree.parent[i])]
        f = int(tree.frame[i])
        if hidden[f]:
            stack[i] = up
        else:
            stack[i] = (*up, f)
            weight[stack[i]] += float(total[i])
    return weight


def _node_paths(tree: CallTree) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for i in range(1, len(tree)):
        out.append((*out[int(tree.parent[i])], int(tree.frame[i])))
    return out


@pytest.mark.parametrize(("rel", "keys"), [(MEMRAY, {"import"}), (PSTATS, {"import", "profiler"})])
def test_hidden_tree_equals_the_stacks_without_those_frames(rel: str, keys: set[str]) -> None:
    bundle = load(sample(rel))
    tree: CallTree | None
    if bundle.memray is not None:
        from perfview.core.analysis import memray_views

        tree = memray_views.site_tree(bundle.memray, bundle.memray.leaks)
    else:
        tree = tree_for(bundle)
    assert tree is not None
    hidden = ff.hidden_frames(tree.frames, keys)
    out = ff.hide_frames(tree, hidden)
    want = _paths(tree, hidden)
    paths = _node_paths(out)
    assert len(set(paths)) == len(paths)  # siblings of one frame merged
    assert set(paths) == set(want)  # exactly the shown stacks
    for node, path in enumerate(paths):
        assert out.metrics["total_ns"][node] == pytest.approx(want[path], rel=1e-9, abs=1e-6)
    shown_files = out.frames["file"].to_numpy()[out.frame[1:]]
    assert not any("importlib" in str(f) and "<frozen" in str(f) for f in shown_files)
    assert out.metrics["self_ns"].sum() == pytest.approx(tree.metrics["self_ns"].sum())
    assert out.metrics["total_ns"][0] == tree.metrics["total_ns"][0]


def test_the_memray_capture_s_import_frames_are_named_with_their_share() -> None:
    from perfview.core.analysis import memray_views

    cap = load(sample(MEMRAY)).memray
    assert cap is not None
    tree = memray_views.site_tree(cap, cap.leaks)
    found = {flt.key: (share, nodes) for flt, share, nodes in ff.applicable(tree)}
    assert set(found) == {"import"}
    share, nodes = found["import"]
    frame = tree.frames["file"].to_numpy()[np.maximum(tree.frame, 0)]
    is_import = np.array([str(f).startswith("<frozen importlib.") for f in frame])
    is_import[0] = False
    assert nodes == int(is_import.sum())
    # topmost import nodes' totals over the root's, recomputed by walking up from each node
    top = [
        i
        for i in np.flatnonzero(is_import)
        if not any(is_import[a] for a in _ancestors(tree, int(i)))
    ]
    assert share == pytest.approx(tree.metrics["total_ns"][top].sum() / tree.metrics["total_ns"][0])
    assert 0.5 < share < 0.8
    assert ff.HIDDEN_BY_DEFAULT["memray"] == {"import"}


def _ancestors(tree: CallTree, node: int) -> list[int]:
    out = []
    while node > 0:
        node = int(tree.parent[node])
        out.append(node)
    return out


def test_a_tree_with_nothing_to_hide_is_returned_as_is() -> None:
    tree = tree_for(load(sample("pstats/gprof2dot_print1.pstats")))
    assert tree is not None
    assert ff.applicable(tree) == []
    assert ff.hide_frames(tree, ff.hidden_frames(tree.frames, {"import"})) is tree
