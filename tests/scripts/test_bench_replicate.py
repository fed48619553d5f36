"""scripts/bench/bench_replicate.py: a replica of N copies is N times the source to perfview, its
linking ids stay unique and inside their copy, and its copies follow each other in time."""

from __future__ import annotations

import collections
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from perfview.loaders import FRESH, load
from tests.conftest import ROOT, sample


def _replicate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_replicate", ROOT / "scripts" / "bench" / "bench_replicate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_replicate"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


rep = _replicate_module()
SCALED = ("events", "slices", "instants", "flows", "flow_ends", "orphan_flow_ends")


def _events(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_bytes())["traceEvents"]  # type: ignore[no-any-return]


def test_rocm_replica_is_n_copies_to_perfview(tmp_path: Path) -> None:
    source = sample("kineto_gpu/hta_mi250_rocm6.2.json.gz")
    out = tmp_path / "rocm_x4.json"
    made = rep.make_replica(source, 0, out, copies=4)
    assert made.copies == 4
    one, four = load(source, options=FRESH).counts, load(out, options=FRESH).counts
    meta = one["metadata"]
    assert four["metadata"] == meta  # process/thread names once
    for key in SCALED:
        expected = 4 * (one[key] - meta) + meta if key == "events" else 4 * one[key]
        assert four[key] == expected, key
    assert made.events == four["events"]
    data = json.loads(out.read_bytes())
    src = rep.read_trace(source)
    assert {k: v for k, v in data.items() if k != "traceEvents"} == {
        k: v for k, v in src.items() if k != "traceEvents"
    }


def test_ids_stay_unique_and_times_move(tmp_path: Path) -> None:
    source = sample("kineto_gpu/hta_mi250_rocm6.2.json.gz")
    out = tmp_path / "rocm_x3.json"
    rep.make_replica(source, 0, out, copies=3)
    src, copy = rep.read_trace(source)["traceEvents"], _events(out)
    for key in ("correlation", "External id"):
        most = max(
            collections.Counter(e["args"][key] for e in src if key in e.get("args", {})).values()
        )
        again = collections.Counter(e["args"][key] for e in copy if key in e.get("args", {}))
        assert max(again.values()) == most, key  # no id is shared between two copies
    flows = collections.Counter((e["ph"], e["id"]) for e in copy if e["ph"] in "sf")
    assert max(flows.values()) == max(
        collections.Counter((e["ph"], e["id"]) for e in src if e["ph"] in "sf").values()
    )
    timed = [e for e in src if e["ph"] != "M"]
    dt, _ = rep.shift_plan(src)
    tail = copy[-len(timed) :]  # the third copy, in the source's order
    assert [e["ts"] for e in tail] == [e["ts"] + 2 * dt for e in timed]
    end = max(e["ts"] + e.get("dur", 0) for e in timed)
    assert min(e["ts"] for e in tail) > end + dt  # after the second copy began


def test_python_stack_ids_link_inside_their_copy(tmp_path: Path) -> None:
    # torch's python_function events: each frame names its caller by "Python parent id".
    frames = [
        ("train", 1, None, 0.0, 100.0),
        ("step", 2, 1, 10.0, 50.0),
        ("forward", 3, 2, 12.0, 20.0),
        ("step", 4, 1, 70.0, 20.0),
    ]
    events = [
        {
            "ph": "X",
            "cat": "python_function",
            "name": name,
            "pid": 1,
            "tid": 1,
            "ts": ts,
            "dur": dur,
            "args": {"Python id": pid, "Python parent id": parent},
        }
        for name, pid, parent, ts, dur in frames
    ]
    src = tmp_path / "stack.json"
    src.write_text(json.dumps({"traceEvents": events, "with_stack": 1}))
    out = tmp_path / "stack_x5.json"
    rep.make_replica(src, 0, out, copies=5)
    copy = _events(out)
    by_id = {e["args"]["Python id"]: e for e in copy}
    assert len(by_id) == len(copy) == 20  # every frame's id is its own
    for e in copy:
        parent = by_id.get(e["args"]["Python parent id"])
        if parent is None:
            assert e["args"]["Python parent id"] is None
            assert e["name"] == "train"
            continue
        assert parent["ts"] <= e["ts"]
        assert e["ts"] + e["dur"] <= parent["ts"] + parent["dur"]
