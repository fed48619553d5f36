"""diff.py / diff_views.py / diff_tree.py: hand-made pairs with known answers, then real pairs.

Real pairs: tests/data/diff/ (made by scripts/fixtures/make_diff_fixtures.py: run B makes `hot`
about 3x slower and allocates 60 MiB instead of 20) and the two HTA rank traces in the shared
samples.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.compare import diff_views
from perfview.core.compare.diff import compare_tables, diff_profiles, pct_change, regressions
from perfview.core.compare.diff_tree import diff_tree
from perfview.core.model import Bundle, CallTree, Timeline
from perfview.core.model.units import MIB

DIFF = Path(__file__).resolve().parents[2] / "data" / "diff"

# --------------------------------------------------------------------- compare_tables


def frame(names: list[str], values: list[float], calls: list[int] | None = None) -> pd.DataFrame:
    out = pd.DataFrame({"name": pd.Categorical(names), "time_ns": values})
    out["calls"] = calls if calls is not None else [1] * len(names)
    return out


def test_compare_tables_join_status_pct_and_order() -> None:
    a = frame(["f", "g", "h"], [10, 5, 3])
    b = frame(["f", "g", "k"], [10, 8, 2])
    t = compare_tables(a, b, ["name"], ["time_ns", "calls"])
    assert t["name"].tolist() == ["g", "k", "f", "h"]  # delta +3, +2 (new), 0, -3 (gone)
    assert t["status"].tolist() == ["+", "new", "=", "gone"]
    assert t["time_ns_delta"].tolist() == [3.0, 2.0, 0.0, -3.0]
    pct = t["time_ns_pct"].tolist()
    assert pct[0] == pytest.approx(60.0)
    assert math.isnan(pct[1])  # new rows have no Δ% relative to A
    assert pct[2:] == [0.0, -100.0]
    assert math.isnan(t["time_ns_a"].iat[1])
    assert math.isnan(t["time_ns_b"].iat[3])
    expected = ["name"] + [f"{m}_{s}" for m in ("time_ns", "calls") for s in ("a", "b")]
    assert [c for c in t.columns if not c.endswith(("_delta", "_pct"))] == [*expected, "status"]


def test_categorical_keys_join_on_text_not_codes() -> None:
    # Same names, different category order (different files intern differently).
    a = pd.DataFrame({"name": pd.Categorical(["x", "y"], categories=["x", "y"]), "v": [1, 2]})
    b = pd.DataFrame({"name": pd.Categorical(["y", "x"], categories=["y", "x"]), "v": [2, 1]})
    t = compare_tables(a, b, ["name"], ["v"])
    assert (t["status"] == "=").all()
    assert sorted(t["name"]) == ["x", "y"]


def test_duplicate_keys_are_summed_and_zero_baseline_is_inf() -> None:
    a = frame(["f", "f", "z"], [1, 2, 0])
    b = frame(["f", "z"], [3, 4])
    t = compare_tables(a, b, ["name"], ["time_ns"]).set_index("name")
    assert t.loc["f", "time_ns_a"] == 3.0
    assert t.loc["f", "status"] == "="
    assert t.loc["z", "time_ns_pct"] == math.inf
    assert t.loc["z", "status"] == "+"
    assert pct_change(0, 0) == 0.0
    assert pct_change(0, -1) == -math.inf
    assert pct_change(10, 12) == pytest.approx(20.0)


def test_sort_by_other_metric_tolerance_and_unsorted() -> None:
    a = frame(["f", "g"], [100, 100], calls=[1, 10])
    b = frame(["f", "g"], [100.5, 150], calls=[5, 10])
    t = compare_tables(a, b, ["name"], ["time_ns", "calls"], sort_by="calls")
    assert t["name"].tolist() == ["f", "g"]
    assert t["status"].tolist() == ["+", "="]
    t = compare_tables(a, b, ["name"], ["time_ns", "calls"], tolerance_pct=1.0)
    assert dict(zip(t["name"], t["status"], strict=True)) == {"g": "+", "f": "="}
    t = compare_tables(a[::-1], b, ["name"], ["time_ns"], sort=False)
    assert t["name"].tolist() == ["g", "f"]
    with pytest.raises(ValueError, match="unknown metric"):
        compare_tables(a, b, ["name"], ["time_ns"], sort_by="nope")


def test_info_columns_come_from_b_else_a() -> None:
    a = pd.DataFrame({"k": ["p", "q"], "v": [1, 1], "where": ["a1", "a2"]})
    b = pd.DataFrame({"k": ["p", "r"], "v": [1, 1], "where": ["b1", "b3"]})
    t = compare_tables(a, b, ["k"], ["v"], info=["where"]).set_index("k")
    assert t["where"].to_dict() == {"p": "b1", "q": "a2", "r": "b3"}


# ------------------------------------------------------------------------------ diff_tree


def tree(parent: list[int], names: list[str], total: list[float]) -> CallTree:
    """Node 0 is the root; frames listed in reverse so frame ids differ from node ids."""
    frames = pd.DataFrame({"name": names[1:][::-1], "file": "/x/m.py", "line": 1})
    n = len(names) - 1
    frame_ids = [-1, *[n - 1 - i for i in range(n)]]
    t = np.asarray(total, dtype=np.float64)
    return CallTree(
        parent=np.asarray(parent, dtype=np.int32),
        frame=np.asarray(frame_ids, dtype=np.int32),
        frames=frames,
        metrics={"total_ns": t, "self_ns": t * 0.5},
    )


def test_diff_tree_aligns_paths_and_keeps_gone_nodes() -> None:
    a = tree([-1, 0, 1, 1, 0], ["", "main", "f", "g", "f"], [12, 10, 6, 4, 2])
    b = tree([-1, 0, 1, 1], ["", "main", "h", "f"], [11, 11, 5, 6])
    d = diff_tree(a, b)
    assert len(d) == 6  # root, main, main/f, main/g, main/h, f
    paths = {}
    for i in range(len(d)):
        parent = int(d.parent[i])
        paths[i] = d.name(i) if parent <= 0 else f"{paths[parent]}/{d.name(i)}"
        assert parent < i  # parents precede children
    got = {
        paths[i]: (d.metrics["total_a"][i], d.metrics["total_b"][i], d.metrics["delta"][i])
        for i in range(len(d))
    }
    assert got == {
        "(root)": (12, 11, -1),
        "main": (10, 11, 1),
        "main/f": (6, 6, 0),
        "main/g": (4, 0, -4),
        "main/h": (0, 5, 5),
        "f": (2, 0, -2),
    }
    assert (d.metrics["total_ns"] == d.metrics["total_b"]).all()  # icicle widths come from B
    hot = list(paths.values()).index("main/f")
    assert d.metrics["self_a"][hot] == 3.0
    main = list(paths.values()).index("main")
    assert sorted(d.name(int(c)) for c in d.children(main)) == ["f", "g", "h"]


def test_diff_tree_merges_same_key_siblings() -> None:
    a = tree([-1, 0, 0], ["", "f", "f"], [5, 3, 2])
    d = diff_tree(a, a, match="name")
    assert len(d) == 2
    assert d.metrics["total_a"].tolist() == [5, 5]
    assert not d.metrics["delta"].any()


def test_diff_tree_of_identical_trees_has_zero_delta() -> None:
    a = tree([-1, 0, 1, 1], ["", "main", "f", "g"], [10, 10, 6, 4])
    d = diff_tree(a, a)
    assert len(d) == len(a)
    assert not d.metrics["delta"].any()


# ---------------------------------------------------------------- views on hand-made bundles


def timeline(names: list[str], kinds: list[str], durs: list[int]) -> Timeline:
    n = len(names)
    events = pd.DataFrame(
        {
            "ts": np.arange(n, dtype=np.int64) * 1000,
            "dur": np.asarray(durs, dtype=np.int64),
            "name": pd.Categorical(names),
            "kind": pd.Categorical(kinds),
            "parent": np.full(n, -1, dtype=np.int64),
            "shape": pd.Categorical([""] * n),
        }
    )
    empty = pd.DataFrame()
    return Timeline(events, empty, empty, empty, empty, empty)


def test_steps_table_orders_by_step_number_and_skips_gpu_copies() -> None:
    tl = timeline(
        ["ProfilerStep#10", "ProfilerStep#9", "ProfilerStep#9", "aten::mm"],
        ["annotation", "annotation", "gpu_annotation", "cpu_op"],
        [300, 100, 999, 50],
    )
    t = diff_views.steps_table(tl)
    assert t["step"].tolist() == ["#0", "#1", "mean", "median"]
    assert t["label"].tolist() == ["ProfilerStep#9", "ProfilerStep#10", "", ""]
    assert t["dur_ns"].tolist() == [100.0, 300.0, 200.0, 200.0]


def test_trace_views_on_hand_made_timelines() -> None:
    a = Bundle("trace", Path("a.json"), timeline=timeline(
        ["ProfilerStep#1", "aten::mm", "aten::add", "gemm"],
        ["annotation", "cpu_op", "cpu_op", "kernel"], [1000, 400, 100, 300]))  # fmt: skip
    b = Bundle("trace", Path("b.json"), timeline=timeline(
        ["ProfilerStep#1", "aten::mm", "aten::relu", "gemm"],
        ["annotation", "cpu_op", "cpu_op", "kernel"], [1500, 900, 100, 600]))  # fmt: skip
    ops = diff_profiles(a, b)
    assert ops.view == "ops"
    assert ops.metric == "self_ns"
    assert ops.table["name"].tolist() == ["aten::mm", "aten::relu", "aten::add"]
    assert ops.table["status"].tolist() == ["+", "new", "gone"]
    assert (ops.total_a, ops.total_b) == (500.0, 1000.0)
    assert ops.total_delta_pct == pytest.approx(100.0)
    kernels = diff_profiles(a, b, view="kernels")
    assert kernels.table["total_ns_delta"].tolist() == [300.0]
    steps = diff_profiles(a, b, view="steps")
    assert steps.table["dur_ns_delta"].tolist() == [500.0, 500.0, 500.0]
    assert steps.total_a == 1000.0
    with pytest.raises(ValueError, match="no metric"):
        diff_profiles(a, b, view="kernels", metric="self_ns")
    with pytest.raises(ValueError, match="does not apply"):
        diff_profiles(a, b, view="memory")
    with pytest.raises(ValueError, match="cannot compare a trace file with a pstats"):
        diff_profiles(a, Bundle("pstats", Path("x.prof")))


# ------------------------------------------------------------------------ real file pairs


@pytest.fixture(scope="module")
def pstats_pair() -> tuple[Bundle, Bundle]:
    from perfview.loaders import load

    return load(DIFF / "run_a.prof"), load(DIFF / "run_b.prof")


def test_slowed_function_is_first_row(pstats_pair: tuple[Bundle, Bundle]) -> None:
    c = diff_profiles(*pstats_pair)
    first = c.table.iloc[0]
    assert (first["function"], first["file"], first["line"]) == ("hot", "diffwork.py", 18)
    assert first["status"] == "+"
    assert first["tottime_ns_pct"] > 100
    assert first["ncalls_delta"] == 0  # same calls, more time per call
    assert c.total_a == pstats_pair[0].profile.total_ns  # type: ignore[union-attr]
    hits = regressions(c, 20.0)
    assert hits["function"].iat[0] == "hot"
    assert "steady" not in set(hits["function"])
    # Tiny rows (µs out of 100+ ms) are ignored by the gate even when they doubled.
    assert not (hits["tottime_ns_a"] < 0.001 * c.table["tottime_ns_a"].sum()).any()


def test_match_modes_and_swap(pstats_pair: tuple[Bundle, Bundle]) -> None:
    by_name = diff_profiles(*pstats_pair, match="name")
    assert by_name.key == ["function"]
    assert by_name.table["function"].iat[0] == "hot"
    assert by_name.table["file"].iat[0].endswith("diffwork.py")  # info: where it lives
    full = diff_profiles(*pstats_pair, match="full")
    assert full.table["file"].iat[0].startswith("/")
    c = diff_profiles(*pstats_pair)
    swapped = c.swapped()
    assert swapped.total_a == c.total_b
    assert swapped.path_a == c.path_b
    assert swapped.table["function"].iat[-1] == "hot"
    assert swapped.table["status"].iat[-1] == "-"
    assert swapped.tree is not None
    assert len(swapped.tree) >= len(pstats_pair[0].tree)


def test_pstats_tree_diff(pstats_pair: tuple[Bundle, Bundle]) -> None:
    c = diff_profiles(*pstats_pair)
    assert c.tree is not None
    names = [c.tree.name(i) for i in range(len(c.tree))]
    hot = names.index("hot")
    assert c.tree.metrics["delta"][hot] == pytest.approx(
        c.table.set_index("function").loc["hot", "cumtime_ns_delta"], rel=0.01
    )


def test_same_file_is_all_equal(pstats_pair: tuple[Bundle, Bundle]) -> None:
    a = pstats_pair[0]
    c = diff_profiles(a, a)
    assert (c.table["status"] == "=").all()
    assert c.total_delta_pct == 0.0
    assert regressions(c, 0.0).empty
    assert c.tree is not None
    assert not c.tree.metrics["delta"].any()


def mprof_peak_bytes(path: Path) -> int:
    """Peak straight from the text (MEM lines' MiB column), independent of the loader."""
    mib = [float(ln.split()[1]) for ln in path.read_text().splitlines() if ln.startswith("MEM ")]
    return round(max(mib) * MIB)


def test_mprof_peak_delta_matches_independent_peaks() -> None:
    from perfview.loaders import load

    a, b = load(DIFF / "run_a.dat"), load(DIFF / "run_b.dat")
    c = diff_profiles(a, b)
    assert c.view == "memory"
    assert c.metric == "peak_bytes"
    expected = mprof_peak_bytes(DIFF / "run_b.dat") - mprof_peak_bytes(DIFF / "run_a.dat")
    assert c.table["peak_bytes_delta"].iat[0] == pytest.approx(expected, abs=1)
    assert c.total_b - c.total_a == pytest.approx(expected, abs=1)
    assert expected > 20 * MIB  # B allocates 40 MiB more


def test_line_report_pair() -> None:
    from perfview.loaders import load

    a, b = load(DIFF / "run_a_lines.txt"), load(DIFF / "run_b_lines.txt")
    c = diff_profiles(a, b)
    assert c.view == "lines"
    assert c.key == ["file", "function", "content", "nth"]
    first = c.table.iloc[0]
    assert first["content"] == "blocks.append(bytearray(1 << 20))"
    assert first["function"] == "allocate"
    assert first["file"] == "diffwork.py"
    # 20 vs 60 one-MiB blocks: the increment grows by about 40 MiB.
    assert first["increment_bytes_delta"] == pytest.approx(40 * MIB, rel=0.05)
    assert set(c.table["status"]) <= {"+", "-", "="}  # same source: every line matched


def test_hta_rank_pair(samples_dir: Path) -> None:
    from perfview.loaders import load

    a = load(samples_dir / "kineto_gpu" / "hta_sampled_rank-0.json.gz")
    b = load(samples_dir / "kineto_gpu" / "hta_sampled_rank-1.json.gz")
    for view in ("ops", "ops-by-shape", "kernels", "steps"):
        c = diff_profiles(a, b, view=view, with_tree=view == "ops")
        assert len(c.table) > 0
        assert c.total_a > 0
        assert c.total_b > 0
        assert set(c.table["status"]) <= {"+", "-", "=", "new", "gone"}
    steps = diff_profiles(a, b, view="steps", with_tree=False)
    assert steps.table["step"].tolist() == ["#0", "#1", "mean", "median"]
    kernels = diff_profiles(a, b, view="kernels", with_tree=False).table
    deltas = kernels["total_ns_delta"].to_numpy()
    assert (np.diff(deltas) <= 0).all()  # largest growth first
