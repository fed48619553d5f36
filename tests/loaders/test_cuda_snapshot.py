"""CUDA memory snapshot loader and views: tiny fixtures, the real samples, and safety."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.analysis import cuda_memory_views as views
from perfview.core.model.errors import LoadError
from perfview.core.pages import summary
from perfview.loaders import cuda_snapshot, detect, load
from tests.conftest import ROOT, sample

MIB = 1 << 20


def test_new_layout_counts_and_views(data_dir: Path, tmp_path: Path) -> None:
    neutral = tmp_path / "unknown"
    neutral.write_bytes((data_dir / "cuda_snapshot_new.pickle").read_bytes())
    bundle = load(neutral)
    assert bundle.format == "cuda_snapshot"
    assert bundle.counts == {
        "segments": 2,
        "blocks": 5,
        "active_bytes": 6 * MIB + 512 * 1024,
        "reserved_bytes": 10 * MIB,
        "trace_entries": 12,
    }
    snap = bundle.cuda_snapshot
    assert snap is not None
    assert snap.has_time
    alloc = summary.summarize(bundle, "allocations")
    assert alloc["size_bytes"].tolist() == [5 * MIB, MIB, 512 * 1024]
    assert alloc["python"].tolist() == [
        "forward (model.py:10)",
        "forward (model.py:11)",
        "forward (model.py:12)",
    ]
    assert alloc["op"].tolist() == ["mm", "add_Tensor", "relu"]
    seg = summary.summarize(bundle, "segments")
    large = seg[seg["segment_type"] == "large"].iloc[0]
    assert (large["used_bytes"], large["free_bytes"], large["largest_free_bytes"]) == (
        6 * MIB,
        2 * MIB,
        2 * MIB,
    )
    timeline = summary.summarize(bundle, "timeline")
    assert timeline["active_bytes"].iloc[0] == 0  # nothing was allocated before history
    assert timeline["active_bytes"].max() == 7 * MIB + 512 * 1024
    assert timeline["active_bytes"].iloc[-1] == bundle.counts["active_bytes"]
    assert (timeline["ts_ns"].diff().dropna() == 1_000_000).all()
    oom = summary.summarize(bundle, "oom")
    assert oom["action"].iloc[-1] == "oom"
    assert oom["size_bytes"].iloc[-1] == 64 * MIB
    assert len(oom) == 12  # the OOM is the last entry: 11 before it, none after
    assert oom["offset"].tolist() == list(range(-11, 1))


def test_live_tree_and_bands(data_dir: Path) -> None:
    bundle = load(data_dir / "cuda_snapshot_new.pickle")
    snap = bundle.cuda_snapshot
    assert snap is not None
    tree = views.live_tree(snap)
    assert tree.metrics["total_ns"][0] == bundle.counts["active_bytes"]
    assert tree.name(int(tree.children(0)[0])) == "<module>"  # outermost frame at the root
    x, labels, bands = views.timeline_bands(snap, 0)
    _rows, total = views.active_curve(snap, 0)
    assert np.array_equal(bands.sum(axis=0), total)
    assert labels[0] == "forward (model.py:10)"
    assert len(x) == 12


def test_old_layout_gzip_no_history(data_dir: Path) -> None:
    bundle = load(data_dir / "cuda_snapshot_old.pickle.gz")
    assert bundle.counts["trace_entries"] == 0
    assert bundle.counts["segments"] == 3
    assert bundle.counts["active_bytes"] == 12 * MIB
    assert "no allocation history" in bundle.warnings[0]
    assert "timeline" not in summary.available_views(bundle)
    assert summary.summarize(bundle, "allocations")["device"].tolist() == [1, 1, 1]
    assert len(summary.summarize(bundle, "timeline")) == 0


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_code_in_pickle_is_refused_and_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = {"segments": [_Evil(marker)], "device_traces": [[]], "total_size": 0}
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps(payload, protocol=4))
    assert detect(path) is cuda_snapshot  # looks like a snapshot, so the loader is tried
    with pytest.raises(LoadError, match="never runs code"):
        load(path)
    assert not marker.exists()
    cli = subprocess.run(
        [sys.executable, "-m", "perfview", "summary", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert cli.returncode == 2
    assert cli.stderr.count("\n") == 1
    assert "never runs code" in cli.stderr
    assert not marker.exists()
    # The control: the standard unpickler would have run it.
    pickle.loads(path.read_bytes())
    assert marker.exists()


def test_damaged_pickle_is_one_sentence(data_dir: Path, tmp_path: Path) -> None:
    raw = (data_dir / "cuda_snapshot_new.pickle").read_bytes()
    path = tmp_path / "cut.pickle"
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(LoadError, match="damaged or truncated"):
        load(path)


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        (
            "cs336_silmont_mem_snapshot.pickle",
            {"segments": 9, "blocks": 20, "active_bytes": 31_719_936, "trace_entries": 97},
        ),
        (
            "ftcourse_cranberrii_memory_snapshot.pickle",
            {
                "segments": 215,
                "blocks": 1079,
                "active_bytes": 2_297_283_072,
                "trace_entries": 10307,
            },
        ),
        (
            "select_n_maphsge4_snapshot.pickle",
            {"segments": 40, "blocks": 213, "active_bytes": 545_266_688, "trace_entries": 0},
        ),
    ],
)
def test_real_samples(name: str, counts: dict[str, int]) -> None:
    bundle = load(sample(f"cuda_memory_snapshot/{name}"))
    for key, value in counts.items():
        assert bundle.counts[key] == value
    for view in summary.available_views(bundle):
        summary.summarize(bundle, view)
    snap = bundle.cuda_snapshot
    assert snap is not None
    tree = views.live_tree(snap)
    assert tree.metrics["total_ns"][0] == counts["active_bytes"]
    if counts["trace_entries"]:
        timeline = summary.summarize(bundle, "timeline")
        assert timeline["active_bytes"].iloc[-1] == counts["active_bytes"]


def test_cli_json_counts(data_dir: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "perfview",
            "summary",
            str(data_dir / "cuda_snapshot_new.pickle"),
            "--view",
            "segments",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["format"] == "cuda_snapshot"
    assert doc["view"] == "segments"
    assert set(doc["counts"]) == {
        "segments",
        "blocks",
        "active_bytes",
        "reserved_bytes",
        "trace_entries",
    }


def test_repeated_references_bomb_is_refused(tmp_path: Path) -> None:
    entry = {"action": "alloc", "addr": 1, "size": 1, "stream": 0, "frames": []}
    many = [entry] * 100_000  # one dict, referenced 100k times: a few hundred KB of pickle
    bomb = {"segments": [], "device_traces": [many] * 1000}  # 10^8 entries by reference
    path = tmp_path / "bomb.pickle"
    path.write_bytes(pickle.dumps(bomb, protocol=4))
    assert path.stat().st_size < 1_000_000
    with pytest.raises(LoadError, match="repeated references"):
        load(path)


def test_mutated_snapshots_load_or_say_why(data_dir: Path, tmp_path: Path) -> None:
    """Truncated and byte-flipped snapshots: a load or a LoadError, never another exception."""
    import random

    raw = (data_dir / "cuda_snapshot_new.pickle").read_bytes()
    rng = random.Random(17)
    path = tmp_path / "mutant.pickle"
    outcomes = {"loaded": 0, "refused": 0}
    messages: list[str] = []
    for i in range(300):
        data = bytearray(raw)
        if i % 3 == 0:
            data = data[: rng.randrange(3, len(data))]
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(2, len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            cuda_snapshot.load(path)
            outcomes["loaded"] += 1
        except LoadError as exc:
            messages.append(str(exc))
            outcomes["refused"] += 1
    assert outcomes["loaded"] + outcomes["refused"] == 300
    assert all(messages)


def test_oom_window_has_entries_before_and_after() -> None:
    def entry(action: str, addr: int, size: int) -> dict[str, Any]:
        return {"action": action, "addr": addr, "size": size, "stream": 0, "frames": []}

    trace = [entry("alloc", a, MIB) for a in range(1, 41)]
    trace.append(entry("oom", 0, 64 * MIB))
    trace += [entry("free_completed", a, MIB) for a in range(1, 11)]
    snap = cuda_snapshot.snapshot_from_data({"segments": [], "device_traces": [trace]})
    table = views.oom_table(snap, before=30, after=5)
    assert table["offset"].tolist() == list(range(-30, 6))
    assert table.loc[table["offset"] == 0, "action"].item() == "oom"


def test_live_tree_hides_cpython_interpreter_frames() -> None:
    frames = [
        {"name": "mm", "filename": "??", "line": 0},
        {"name": "forward", "filename": "/m/model.py", "line": 3},
        {"name": "_PyEval_EvalFrameDefault", "filename": "/src/python-3.10/Python/ceval.c",
         "line": 2003},
        {"name": "_PyEval_EvalFrame", "filename": "/src/python-3.10/Include/internal/x.h",
         "line": 46},
        {"name": "<module>", "filename": "/m/train.py", "line": 9},
    ]  # fmt: skip
    block = {"address": 1, "size": MIB, "requested_size": MIB, "state": "active_allocated"}
    seg = {"device": 0, "address": 1, "total_size": MIB, "blocks": [{**block, "frames": frames}]}
    snap = cuda_snapshot.snapshot_from_data({"segments": [seg], "device_traces": [[]]})

    def path(tree: Any) -> list[str]:
        names, node = [], 0
        while len(tree.children(node)):
            node = int(tree.children(node)[0])
            names.append(tree.name(node))
        return names

    assert path(views.live_tree(snap)) == ["<module>", "forward", "mm"]
    full = path(views.live_tree(snap, hide_interpreter=False))
    assert full == ["<module>", "_PyEval_EvalFrame", "_PyEval_EvalFrameDefault", "forward", "mm"]
