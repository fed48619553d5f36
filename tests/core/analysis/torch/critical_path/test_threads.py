"""Hand-offs between CPU threads: the main thread waits in "## backward ##" while the autograd
thread runs the backward op, so the path runs through the autograd thread's op."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfview.core.analysis.torch.critical_path import path, what_if
from tests.core.analysis.torch.critical_path._tiny import US, loaded


def _slice(name: str, cat: str, tid: int, ts: int, dur: int) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur}


def _trace(tmp_path: Path) -> Path:
    events = [
        _slice("ProfilerStep#1", "user_annotation", 1, 0, 100),
        _slice("## backward ##", "user_annotation", 1, 10, 80),
        _slice("autograd::engine::evaluate_function: MmBackward0", "cpu_op", 2, 20, 60),
        _slice("aten::mm", "cpu_op", 2, 25, 50),
    ]
    out = tmp_path / "threads.json"
    out.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return out


def test_the_path_runs_through_the_autograd_thread(tmp_path: Path) -> None:
    tl = loaded(_trace(tmp_path))
    table = path.critical_path_table(tl)
    got = {(r["category"], r["name"]): int(r["ns"]) for r in table.to_dict("records")}
    assert got == {
        ("cpu_op", "aten::mm"): 50 * US,
        ("cpu_op", "ProfilerStep#1"): 20 * US,
        ("idle", "(hand-off between threads)"): 20 * US,  # 10 → 20 and 80 → 90
        ("cpu_op", "autograd::engine::evaluate_function: MmBackward0"): 10 * US,
    }
    row = what_if.what_if_table(tl, ["cpu:aten::mm=0.5"]).to_dict("records")[0]
    assert row["predicted_ns"] == 75 * US  # the main thread's wait shrinks with the op
