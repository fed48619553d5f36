"""Aggregate tables on hand-built frames (exact expected values) and on real samples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis import aggregate
from perfview.core.model import Bundle, LineReport, MemoryProfile, PstatsProfile, Timeline, schema

# (lane, ts, dur, name, kind, parent, depth, shape) in (lane, ts, -dur) order, like a loader.
ROWS = [
    (0, 0, 100, "ProfilerStep#0", "annotation", -1, 0, ""),
    (0, 10, 50, "aten::linear", "cpu_op", 0, 1, "[[2, 3]]"),
    (0, 12, 40, "nn.Module: Linear", "python", 1, 2, ""),
    (0, 15, 30, "aten::addmm", "cpu_op", 2, 3, "[[2, 3], [3, 4]]"),
    (0, 16, 5, "aten::empty", "cpu_op", 3, 4, "[]"),
    (0, 70, 20, "aten::relu", "cpu_op", 0, 1, "[[2, 4]]"),
    (0, 72, 10, "aten::addmm", "cpu_op", 5, 2, "[[5, 5]]"),
    (1, 20, 30, "gemm", "kernel", -1, 0, ""),
    (1, 45, 10, "gemm", "kernel", -1, 0, ""),
    (1, 60, 10, "gemm", "kernel", -1, 0, ""),
    (1, 80, 5, "relu_k", "kernel", -1, 0, ""),
]


def make_events(rows: list[tuple]) -> pd.DataFrame:
    lane, ts, dur, name, kind, parent, depth, shape = zip(*rows, strict=True)
    n = len(rows)
    frame = pd.DataFrame(
        {
            "ts": ts,
            "dur": dur,
            "name": name,
            "cat": ["x"] * n,
            "kind": kind,
            "pid": lane,
            "tid": lane,
            "lane": lane,
            "depth": depth,
            "parent": parent,
            "corr": [-1] * n,
            "ext_id": [-1] * n,
            "shape": shape,
        }
    )
    return schema.coerce(frame, schema.EVENTS)


def make_timeline(rows: list[tuple] = ROWS, memory: pd.DataFrame | None = None) -> Timeline:
    events = make_events(rows)
    lanes = schema.coerce(
        pd.DataFrame(
            {
                "lane": [0, 1],
                "pid": [0, 1],
                "tid": [0, 1],
                "sub": [0, 0],
                "process": ["CPU", "GPU 0"],
                "thread": ["main", "stream 7"],
                "label": ["CPU · main", "GPU 0 · stream 7"],
                "device": ["cpu", "gpu:0"],
                "sort_key": [0, 1],
                "max_depth": [4, 0],
                "n_events": [7, 4],
            }
        ),
        schema.LANES,
    )
    return Timeline(
        events=events,
        lanes=lanes,
        instants=schema.empty(schema.INSTANTS),
        counters=schema.empty(schema.COUNTERS),
        flows=schema.empty(schema.FLOWS),
        memory=memory if memory is not None else schema.empty(schema.MEMORY_EVENTS),
        duration_ns=200,
    )


def by_name(table: pd.DataFrame, key: str = "name") -> dict[str, dict[str, object]]:
    return {row[key]: row for row in table.to_dict("records")}


def test_nearest_ancestor_skips_non_members() -> None:
    parent = np.array([-1, 0, 1, 2, 3, 0, 5])
    member = np.array([False, True, False, True, True, True, True])
    got = aggregate.nearest_ancestor(parent, member)
    assert got.tolist() == [-1, -1, 1, 1, 3, -1, 5]


def test_nearest_ancestor_survives_a_parent_cycle() -> None:
    got = aggregate.nearest_ancestor(np.array([1, 0]), np.array([False, False]))
    assert got.tolist() == [-1, -1]


def test_ops_table_self_time_counts_nested_ops_through_python_frames() -> None:
    table = aggregate.ops_table(make_timeline())
    assert list(table.columns) == [
        "name",
        "calls",
        "self_ns",
        "total_ns",
        "mean_ns",
        "max_ns",
        "self_pct",
    ]
    assert table["name"].tolist() == ["aten::linear", "aten::addmm", "aten::relu", "aten::empty"]
    rows = by_name(table)
    # linear 50 minus addmm 30 (nested below a python frame), not minus the python frame's 40.
    assert rows["aten::linear"] == pytest.approx(
        {"name": "aten::linear", "calls": 1, "self_ns": 20, "total_ns": 50, "mean_ns": 50,
         "max_ns": 50, "self_pct": 20 * 100 / 70}
    )  # fmt: skip
    assert (rows["aten::addmm"]["calls"], rows["aten::addmm"]["self_ns"]) == (2, 25 + 10)
    assert (rows["aten::addmm"]["mean_ns"], rows["aten::addmm"]["max_ns"]) == (20, 30)
    assert rows["aten::relu"]["self_ns"] == 10
    assert table["self_pct"].sum() == pytest.approx(100.0)
    assert table["calls"].dtype == np.int64
    assert table["self_ns"].dtype == np.int64


def test_ops_table_by_shape_splits_rows() -> None:
    table = aggregate.ops_table(make_timeline(), by_shape=True)
    assert list(table.columns[:3]) == ["name", "shape", "calls"]
    addmm = table[table["name"] == "aten::addmm"].set_index("shape")
    assert addmm.loc["[[2, 3], [3, 4]]", "total_ns"] == 30
    assert addmm.loc["[[5, 5]]", "self_ns"] == 10
    assert len(table) == 5


def test_ops_table_falls_back_to_all_slices_without_cpu_ops() -> None:
    rows = [(0, ts, dur, n, "other", p, d, "") for (_, ts, dur, n, _k, p, d, _s) in ROWS[:7]]
    rows += [(1, 0, 200, "window", "trace", -1, 0, "")]
    table = aggregate.ops_table(make_timeline(rows))
    got = by_name(table)
    assert "window" not in got  # the whole-trace span is not an operation
    assert got["ProfilerStep#0"]["self_ns"] == 100 - 50 - 20
    assert got["nn.Module: Linear"]["self_ns"] == 40 - 30
    assert got["aten::addmm"]["self_ns"] == 25 + 10


def test_kernels_table() -> None:
    table = aggregate.kernels_table(make_timeline())
    assert list(table.columns) == [
        "name",
        "calls",
        "total_ns",
        "mean_ns",
        "min_ns",
        "max_ns",
        "total_pct",
    ]
    gemm = by_name(table)["gemm"]
    assert (gemm["calls"], gemm["total_ns"], gemm["min_ns"], gemm["max_ns"]) == (3, 50, 10, 30)
    assert gemm["mean_ns"] == 17
    assert gemm["total_pct"] == pytest.approx(50 * 100 / 55)


def test_lanes_table_busy_is_the_union_of_top_level_slices() -> None:
    table = aggregate.lanes_table(make_timeline())
    assert table["lane"].tolist() == [0, 1]
    assert table["events"].tolist() == [7, 4]
    assert table["max_depth"].tolist() == [4, 0]
    # GPU: 20-50 and 45-55 overlap → 20-55, then 60-70 and 80-85.
    assert table["busy_ns"].tolist() == [100, 35 + 10 + 5]
    assert table["busy_pct"].tolist() == pytest.approx([50.0, 25.0])
    assert table["label"].tolist() == ["CPU · main", "GPU 0 · stream 7"]


def test_busy_ns_handles_nested_and_disjoint_intervals() -> None:
    lane = np.array([0, 0, 0, 1, 1])
    ts = np.array([0, 5, 30, 100, 0])
    end = np.array([20, 10, 40, 150, 10])
    assert aggregate.busy_ns(lane, ts, end, 3).tolist() == [30, 60, 0]


def test_trace_memory_table() -> None:
    memory = schema.coerce(
        pd.DataFrame(
            {
                "ts": [1, 2, 3, 4, 5, 6],
                "pid": [0] * 6,
                "tid": [0] * 6,
                "device_type": [0, 0, 0, 1, 1, 1],
                "device_id": [-1, -1, -1, 0, 0, 0],
                "addr": [1, 2, 1, 9, 9, 0],
                "bytes": [100, 50, -100, 1000, -1000, 4000],
                "total_allocated": [100, 150, 50, 1000, 0, 0],
                "total_reserved": [0, 0, 0, 2048, 2048, 2048],
                "oom": [False, False, False, False, False, True],
            }
        ),
        schema.MEMORY_EVENTS,
    )
    table = aggregate.trace_memory_table(make_timeline(memory=memory))
    rows = by_name(table, "device")
    assert set(rows) == {"cpu", "cuda:0"}
    cpu, gpu = rows["cpu"], rows["cuda:0"]
    assert (cpu["allocs"], cpu["frees"], cpu["alloc_bytes"]) == (2, 1, 150)
    assert (cpu["peak_allocated_bytes"], cpu["final_allocated_bytes"], cpu["peak_ts_ns"]) == (
        150,
        50,
        2,
    )
    assert (gpu["allocs"], gpu["frees"], gpu["ooms"], gpu["alloc_bytes"]) == (1, 1, 1, 1000)
    assert gpu["peak_reserved_bytes"] == 2048


def test_trace_memory_table_empty() -> None:
    table = aggregate.trace_memory_table(make_timeline())
    assert len(table) == 0
    assert "peak_allocated_bytes" in table.columns


def make_profile() -> PstatsProfile:
    functions = schema.coerce(
        pd.DataFrame(
            {
                "function": ["main", "<built-in method builtins.print>", "helper"],
                "file": ["a.py", "~", "b.py"],
                "line": [1, 0, 7],
                "ncalls": [1, 3, 4],
                "primitive_calls": [1, 3, 2],
                "tottime_ns": [10, 30, 60],
                "cumtime_ns": [100, 30, 90],
            }
        ),
        schema.FUNCTIONS,
    )
    edges = schema.coerce(
        pd.DataFrame(
            {
                "caller": [0, 2, 0],
                "callee": [2, 1, 1],
                "ncalls": [2, 2, 1],
                "primitive_calls": [2, 2, 1],
                "tottime_ns": [60, 20, 10],
                "cumtime_ns": [80, 20, 10],
            }
        ),
        schema.EDGES,
    )
    return PstatsProfile(functions=functions, edges=edges, total_ns=100, total_calls=8)


def test_functions_table_sorted_by_cumtime() -> None:
    table = aggregate.functions_table(make_profile())
    assert table["function"].tolist() == ["main", "helper", "<built-in method builtins.print>"]
    assert list(table.columns) == list(schema.FUNCTIONS)


def test_callers_table_uses_pstats_labels() -> None:
    table = aggregate.callers_table(make_profile())
    assert table["caller"].tolist() == ["a.py:1(main)", "b.py:7(helper)", "a.py:1(main)"]
    assert table["callee"].tolist() == [
        "b.py:7(helper)",
        "{built-in method builtins.print}",
        "{built-in method builtins.print}",
    ]
    assert table["cumtime_ns"].tolist() == [80, 20, 10]


def make_memory() -> MemoryProfile:
    mib = 1 << 20
    samples = schema.coerce(
        pd.DataFrame(
            {
                "run": [0, 0, 0, 1, 1],
                "ts_ns": [10, 20, 30, 1000, 1500],
                "rss_bytes": [1 * mib, 5 * mib, 3 * mib, 2 * mib, 1 * mib],
            }
        ),
        schema.SAMPLES,
    )
    children = schema.coerce(
        pd.DataFrame({"run": [1, 1, 1], "child": [0, 1, 0], "ts_ns": [1, 2, 3], "rss_bytes": 0}),
        schema.CHILD_SAMPLES,
    )
    spans = schema.empty(schema.SPANS)
    return MemoryProfile(samples, children, spans, cmdlines=["python a.py", "python b.py"])


def test_memory_table_per_run() -> None:
    table = aggregate.memory_table(make_memory())
    mib = 1 << 20
    assert table.to_dict("records") == [
        {"run": 0, "cmdline": "python a.py", "samples": 3, "start_ns": 10, "duration_ns": 20,
         "peak_bytes": 5 * mib, "final_bytes": 3 * mib, "peak_ts_ns": 10, "children": 0,
         "functions": 0},
        {"run": 1, "cmdline": "python b.py", "samples": 2, "start_ns": 1000, "duration_ns": 500,
         "peak_bytes": 2 * mib, "final_bytes": 1 * mib, "peak_ts_ns": 0, "children": 2,
         "functions": 0},
    ]  # fmt: skip


def test_samples_table_elapsed() -> None:
    table = aggregate.samples_table(make_memory())
    assert table["elapsed_ns"].tolist() == [0, 10, 20, 0, 500]
    assert list(table.columns) == ["run", "ts_ns", "elapsed_ns", "rss_bytes"]


def make_report() -> LineReport:
    mib = float(1 << 20)
    nan = float("nan")
    lines = schema.coerce(
        pd.DataFrame(
            {
                "report": [0] * 5,
                "block": [0, 0, 0, 1, 1],
                "file": ["a.py"] * 5,
                "line": [1, 2, 3, 10, 11],
                "mem_bytes": [10 * mib, 30 * mib, nan, 5 * mib, 4 * mib],
                "increment_bytes": [0.0, 20 * mib, nan, 0.0, -1 * mib],
                "occurrences": [1.0, 1.0, nan, 1.0, 2.0],
                "content": ["def f():", "    x = [0] * 10**7", "    pass", "def g():", "  del y"],
            }
        ),
        schema.LINES,
    )
    blocks = pd.DataFrame(
        {
            "block": [0, 1],
            "report": [0, 0],
            "file": ["a.py", "a.py"],
            "function": ["f", "g"],
            "first_line": [1, 10],
            "n_lines": [3, 2],
        }
    )
    return LineReport(lines=lines, blocks=blocks)


def test_lines_table_orders() -> None:
    report = make_report()
    by_inc = aggregate.lines_table(report)
    # Growth first, then each function's entry line (a baseline), the never-ran line last.
    assert by_inc["line"].tolist() == [2, 11, 1, 10, 3]
    assert by_inc["function"].tolist()[:2] == ["f", "g"]
    source = aggregate.lines_table(report, order="source")
    assert source["line"].tolist() == [1, 2, 3, 10, 11]
    with pytest.raises(ValueError, match="order"):
        aggregate.lines_table(report, order="nope")


def test_line_functions_table() -> None:
    table = aggregate.line_functions_table(make_report())
    mib = 1 << 20
    assert table["function"].tolist() == ["f", "g"]
    f = table.iloc[0]
    assert (f["lines"], f["first_line"], f["max_line"]) == (3, 1, 2)
    assert f["peak_mem_bytes"] == 30 * mib
    assert f["increment_bytes"] == 20 * mib
    assert table.iloc[1]["increment_bytes"] == -1 * mib


def _load(path: Path) -> Bundle:
    from perfview.loaders import load

    return load(path)


def test_ops_table_on_real_cpu_trace() -> None:
    """Every cpu_op slice is counted once; self times add up to the ops' exclusive time."""
    from tests.conftest import sample

    bundle = _load(sample("kineto_cpu/dtu_jc_resnet18_cpu_trace.json"))
    events = bundle.timeline.events
    table = aggregate.ops_table(bundle.timeline, torch_dedup=False)
    assert table["calls"].sum() == int((events["kind"] == "cpu_op").sum())
    assert (table["self_ns"] <= table["total_ns"]).all()
    assert (table["self_ns"] >= 0).all()
    # Top-level ops' durations = all self time of ops, since every nested op's time is inside.
    ops = events[events["kind"] == "cpu_op"]
    member = (events["kind"] == "cpu_op").to_numpy()
    anc = aggregate.nearest_ancestor(events["parent"].to_numpy(), member)
    top_total = int(ops["dur"][anc[member] < 0].sum())
    assert int(table["self_ns"].sum()) == top_total


def test_kernels_table_on_real_gpu_trace() -> None:
    import gzip
    import json

    from tests.conftest import sample

    path = sample("kineto_gpu/hta_nccl_data.json.gz")
    bundle = _load(path)
    table = aggregate.kernels_table(bundle.timeline)
    with gzip.open(path, "rt") as fh:
        raw = json.load(fh)["traceEvents"]
    kernels = [e for e in raw if e.get("cat") == "kernel" and e.get("ph") == "X"]
    assert int(table["calls"].sum()) == len(kernels)
    assert table["name"].nunique() == len({e["name"] for e in kernels})
    expected_ns = sum(round(float(e["dur"]) * 1000) for e in kernels)
    assert int(table["total_ns"].sum()) == pytest.approx(expected_ns, abs=len(kernels))


def test_torch_dedup_folds_single_same_name_children() -> None:
    """torch's key_averages drops an op whose parent has its name and no other child."""
    rows = [
        (0, 0, 100, "aten::sum", "cpu_op", -1, 0, ""),
        (0, 10, 50, "aten::sum", "cpu_op", 0, 1, ""),  # folded into its parent
        (0, 20, 10, "aten::fill_", "cpu_op", 1, 2, ""),
        (0, 200, 100, "aten::sum", "cpu_op", -1, 0, ""),
        (0, 210, 10, "aten::sum", "cpu_op", 3, 1, ""),  # kept: the parent has two children
        (0, 230, 10, "aten::copy_", "cpu_op", 3, 1, ""),
    ]
    timeline = make_timeline(rows)
    plain = by_name(aggregate.ops_table(timeline, torch_dedup=False))
    assert plain["aten::sum"]["calls"] == 4
    folded = by_name(aggregate.ops_table(timeline, torch_dedup=True))
    assert folded["aten::sum"]["calls"] == 3
    # the first sum's self time now excludes fill_ (its grandchild), as in torch
    assert folded["aten::sum"]["self_ns"] == (100 - 10) + (100 - 20) + 10
    # total: the nested sum lies inside the outer one, so it is on the stack already
    assert folded["aten::sum"]["total_ns"] == 100 + 100


def test_trace_memory_table_rebuilds_totals_for_old_files() -> None:
    """Pre-1.10 [memory] events carry only Bytes: the allocated curve is their running sum."""
    memory = schema.coerce(
        pd.DataFrame(
            {
                "ts": [1, 2, 3, 4],
                "pid": 0,
                "tid": 0,
                "device_type": [1, 1, 1, 1],
                "device_id": [0, 0, 0, 0],
                "addr": 0,
                "bytes": [100, 300, -100, 50],
                "total_allocated": 0,
                "total_reserved": 0,
                "oom": False,
            }
        ),
        schema.MEMORY_EVENTS,
    )
    (row,) = aggregate.trace_memory_table(make_timeline(memory=memory)).to_dict("records")
    assert (row["peak_allocated_bytes"], row["peak_ts_ns"]) == (400, 2)
    assert row["final_allocated_bytes"] == 350


@pytest.mark.parametrize(
    "rel", ["kineto_gpu/hta_nccl_data.json.gz", "kineto_cpu/dtu_jc_resnet18_cpu_trace.json"]
)
@pytest.mark.parametrize("kinds", [("cpu_op",), ("cpu_op", "python_function"), ("kernel",)])
def test_fused_ops_table_equals_the_grouped_one(
    rel: str, kinds: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-pass operators table (`_ops_by_name`) gives pandas' groupby's table exactly:
    rows, order, values and dtypes."""
    from perfview.core.analysis import ancestors
    from tests.conftest import sample

    ancestors.kernels()  # numba loaded: the compiled passes apply to a small table too
    timeline = _load(sample(rel)).timeline
    fused = aggregate.ops_table(timeline, kinds=kinds)
    monkeypatch.setattr(aggregate, "_ops_by_name", lambda events, member: None)
    grouped = aggregate.ops_table(timeline, kinds=kinds)
    assert len(fused) > 0
    pd.testing.assert_frame_equal(fused, grouped, check_exact=True)
