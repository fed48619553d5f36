"""A name nested inside itself counts once in total time (union of its intervals per thread)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from perfview.core.analysis import aggregate
from perfview.core.analysis.torch import op_kernels
from perfview.core.layout import timeline_layout
from perfview.loaders import load


def _write(tmp_path: Path, name: str, events: list[dict[str, Any]], **extra: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events, **extra}))
    return path


def _be(name: str, start: int, end: int, tid: int = 1) -> list[dict[str, Any]]:
    return [
        {"ph": "B", "name": name, "pid": 1, "tid": tid, "ts": start},
        {"ph": "E", "name": name, "pid": 1, "tid": tid, "ts": end},
    ]


NESTED = [(0, 100), (10, 90), (20, 80)]  # f ⊃ f ⊃ f: 100 + 80 + 60 µs of slices


def _nested_be(tmp_path: Path) -> Path:
    events: list[dict[str, Any]] = []
    for start, _ in NESTED:
        events.append({"ph": "B", "name": "f", "pid": 1, "tid": 1, "ts": start})
    for _, end in reversed(NESTED):
        events.append({"ph": "E", "pid": 1, "tid": 1, "ts": end})
    return _write(tmp_path, "be.json", events)


def _nested_x(tmp_path: Path) -> Path:
    events = [
        {"ph": "X", "name": "f", "pid": 1, "tid": 1, "ts": s, "dur": e - s} for s, e in NESTED
    ]
    return _write(tmp_path, "x.json", events)


@pytest.mark.parametrize("make", [_nested_be, _nested_x], ids=["B/E", "X"])
def test_nested_same_name_total_is_the_outer_interval(tmp_path: Path, make: Any) -> None:
    timeline = load(make(tmp_path)).timeline
    assert timeline is not None
    row = aggregate.ops_table(timeline).set_index("name").loc["f"]
    assert row["total_ns"] == 100_000  # not 240 µs
    assert row["self_ns"] == 100_000
    assert row["calls"] == 3
    assert row["mean_ns"] == 80_000  # mean call duration, all three calls
    assert row["max_ns"] == 100_000
    summary = timeline_layout.range_summary(timeline.events, 0, 50_000)
    assert summary.set_index("name").loc["f", "total_ns"] == 50_000


def test_threads_and_siblings_still_add_up(tmp_path: Path) -> None:
    # Two sequential f calls on one thread and one on another: nothing nested, all count.
    events = _be("f", 0, 10) + _be("f", 20, 50) + _be("f", 0, 40, tid=2) + _be("g", 0, 5, tid=2)
    timeline = load(_write(tmp_path, "t.json", events)).timeline
    assert timeline is not None
    table = aggregate.ops_table(timeline).set_index("name")
    assert table.loc["f", "total_ns"] == 80_000
    assert table.loc["f", "calls"] == 3


def test_torch_ops_recursion_through_another_op(tmp_path: Path) -> None:
    # aten::to → aten::_to_copy → aten::to (the inner one a real call, not a folded duplicate).
    def op(name: str, ts: int, dur: int) -> dict[str, Any]:
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}

    events = [
        op("aten::to", 0, 100),
        op("aten::_to_copy", 5, 90),
        op("aten::to", 10, 70),
        op("aten::empty", 12, 10),
        op("aten::copy_", 30, 40),
    ]
    path = _write(tmp_path, "torch.json", events, schemaVersion=1, deviceProperties=[])
    timeline = load(path).timeline
    assert timeline is not None
    host = aggregate.ops_table(timeline).set_index("name")
    assert host.loc["aten::to", "total_ns"] == 100_000
    assert host.loc["aten::to", "calls"] == 2
    assert host.loc["aten::to", "self_ns"] == 10_000 + 20_000
    assert host.loc["aten::_to_copy", "total_ns"] == 90_000
    ops = op_kernels.ops_table(timeline).set_index("name")
    assert ops.loc["aten::to", "host_total_ns"] == 100_000
    assert ops.loc["aten::to", "host_self_ns"] == 30_000


def test_diff_counts_recursion_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from perfview import cli

    a, b = _nested_be(tmp_path), _nested_x(tmp_path)
    code = cli.main(["diff", str(a), str(b), "--view", "ops", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert (row["name"], row["total_ns_a"], row["total_ns_b"]) == ("f", 100_000, 100_000)
    assert row["calls_a"] == row["calls_b"] == 3
