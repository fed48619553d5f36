"""The compiled snapshot reader equals the restricted unpickler's path on every input."""

from __future__ import annotations

import gzip
import os
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import noop
from perfview.loaders.cuda_snapshot import fast as cuda_snapshot_fast
from perfview.loaders.cuda_snapshot import loader as cuda_snapshot
from perfview.loaders.cuda_snapshot.pickle_walk import Unsupported
from tests.conftest import SAMPLES

SAMPLE_DIR = SAMPLES / "cuda_memory_snapshot"
REAL = sorted(SAMPLE_DIR.glob("*.pickle")) if SAMPLE_DIR.is_dir() else []
FIXTURES = ("cuda_snapshot_new.pickle", "cuda_snapshot_old.pickle.gz")


def assert_same(a: CudaSnapshot, b: CudaSnapshot) -> None:
    for name in ("segments", "blocks", "trace", "frames"):
        x, y = getattr(a, name), getattr(b, name)
        pd.testing.assert_frame_equal(x, y, check_exact=True)
        assert list(x.dtypes) == list(y.dtypes), name
    for name in ("stack_offsets", "stack_frames"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y), name
    assert (a.has_time, a.keys, a.allocator_settings) == (b.has_time, b.keys, b.allocator_settings)


def outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except LoadError as exc:
        return "refused", str(exc)


def both(path: Path) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """(restricted unpickler's outcome, the compiled path's — or the same when it declines)."""
    want = outcome(lambda: cuda_snapshot._unpickled(path, noop))

    def fast() -> CudaSnapshot:
        try:
            return cuda_snapshot_fast.load_snapshot(path)[0]
        except Unsupported:
            return cuda_snapshot._unpickled(path, noop)

    return want, outcome(fast)


def check(path: Path, must_be_fast: bool = True) -> None:
    if must_be_fast:
        cuda_snapshot_fast.load_snapshot(path)  # read by the compiled path, not declined
    want, got = both(path)
    assert want[0] == got[0], (want, got)
    if want[0] == "ok":
        assert_same(want[1], got[1])
    else:
        assert want[1] == got[1]


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_real_samples(path: Path) -> None:
    check(path)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures(data_dir: Path, name: str) -> None:
    check(data_dir / name)


@pytest.mark.parametrize("protocol", [2, 3, 5])
def test_other_protocols_and_gzip(tmp_path: Path, protocol: int) -> None:
    if not REAL:
        pytest.skip(f"real samples folder {SAMPLE_DIR} is absent")
    data = cuda_snapshot.restricted_loads(max(REAL, key=lambda p: p.stat().st_size).read_bytes())
    raw = pickle.dumps(data, protocol=protocol)
    (tmp_path / "s.pickle").write_bytes(raw)
    (tmp_path / "s.pickle.gz").write_bytes(gzip.compress(raw))
    check(tmp_path / "s.pickle")
    check(tmp_path / "s.pickle.gz")


def _frames(line: int) -> list[dict[str, Any]]:
    return [
        {"name": "mm", "filename": "??", "line": 0},
        {"name": "f", "filename": "m.py", "line": line},
    ]


ODD: list[dict[str, Any]] = [
    {"segments": [], "device_traces": []},
    {"segments": [], "device_traces": None, "allocator_settings": {"a": [1, (2, 3)], "b": 1.5}},
    {"segments": [{"device": 1, "blocks": [1, {"size": 5}], "frames": "not a list"}]},
    {"segments": [{"address": 1.0}]},  # a float field: left to the unpickler's path
    {"segments": [{"segment_type": None}]},
    {"segments": [{"is_expandable": 1, "stream": True}], "device_traces": [[{"size": None}]]},
    {"segments": [], "device_traces": [[{"size": True}]]},  # np.asarray makes True 1
    {"segments": [], "device_traces": [[{"action": 5}]]},
    {"segments": [], "device_traces": [[{"time_us": 1.5}, {"time_us": -3}, {"time_us": 2**60}]]},
    {"segments": [], "device_traces": [7, [{"addr": 1}, "x", {"addr": 2}], []]},
    {"segments": [], "device_traces": [[{"frames": [{"name": None}]}]]},
    {"segments": [], "device_traces": [[{"frames": [{"line": 2.0}]}]]},
    {"segments": [], "device_traces": [[{"frames": [1, {"name": "a"}, []]}, {"frames": []}]]},
    {"segments": [], "device_traces": [[{"addr": 2**70}]]},
    {"segments": [], "device_traces": {"not": "a list"}},
    {"segments": "nope"},
    {"segments": [1]},
    {"device_traces": []},
    [1, 2],
    {1: "int key", "segments": []},
]


@pytest.mark.parametrize("index", range(len(ODD)))
def test_odd_structures_answer_as_the_unpickler_path(tmp_path: Path, index: int) -> None:
    path = tmp_path / "odd.pickle"
    path.write_bytes(pickle.dumps(ODD[index], protocol=4))
    check(path, must_be_fast=False)


def test_shared_frames_lists_and_dicts(tmp_path: Path) -> None:
    """Stacks shared by list, by frame dict, and equal but distinct: one stack each."""
    shared = _frames(1)
    stacks = [shared, shared, _frames(1), list(shared), _frames(2), []]
    entries = [{"action": "alloc", "addr": i, "size": 1, "frames": f} for i, f in enumerate(stacks)]
    block = {"address": 1, "size": 8, "state": "active_allocated", "frames": _frames(3)}
    seg = {"device": 0, "address": 1, "total_size": 8, "frames": shared, "blocks": [block]}
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps({"segments": [seg], "device_traces": [entries]}, protocol=4))
    check(path)
    snap = cuda_snapshot_fast.load_snapshot(path)[0]
    assert snap.trace["stack"].tolist() == [1, 1, 1, 1, 3, 0]
    assert len(snap.stack_offsets) == 5  # (), f1, f3, f2


def test_load_uses_it_for_big_files_and_refuses_code(tmp_path: Path, monkeypatch: Any) -> None:
    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps({"segments": [Evil()], "device_traces": [[]]}, protocol=4))
    with pytest.raises(LoadError, match=r"asks to import (posix|nt)\.system"):
        cuda_snapshot.load(path, compiled=True)
    assert not (tmp_path / "pwned").exists()
    bomb_entry = {"action": "alloc", "addr": 1, "size": 1, "stream": 0, "frames": []}
    bomb = {"segments": [], "device_traces": [[bomb_entry] * 100_000] * 1000}
    path.write_bytes(pickle.dumps(bomb, protocol=4))
    with pytest.raises(LoadError, match="repeated references"):
        cuda_snapshot.load(path, compiled=True)


def test_truncated_and_mutated_snapshots(data_dir: Path, tmp_path: Path) -> None:
    """Cut or byte-flipped: both paths load the same snapshot or say the same sentence."""
    raw = (data_dir / "cuda_snapshot_new.pickle").read_bytes()
    rng = random.Random(17)
    path = tmp_path / "mutant.pickle"
    for i in range(150):
        data = bytearray(raw)
        if i % 3 == 0:
            data = data[: rng.randrange(3, len(data))]
        for _ in range(rng.randrange(0 if i % 3 == 0 else 1, 8)):
            data[rng.randrange(2, len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        check(path, must_be_fast=False)


def test_gzip_damaged_after_the_pickle_is_refused_as_before(data_dir: Path, tmp_path: Path) -> None:
    """A bad CRC sits after the pickle's STOP: the walker still reads the stream to its end."""
    raw = pickle.dumps(
        cuda_snapshot.restricted_loads((data_dir / "cuda_snapshot_new.pickle").read_bytes())
    )
    packed = bytearray(gzip.compress(raw))
    packed[-8] ^= 0xFF  # the CRC-32 of the trailer
    path = tmp_path / "bad_crc.pickle.gz"
    path.write_bytes(bytes(packed))
    check(path, must_be_fast=False)
    assert "gzip" in outcome(lambda: cuda_snapshot._unpickled(path, noop))[1]


def test_load_takes_the_compiled_path_from_the_size_up(data_dir: Path, monkeypatch: Any) -> None:
    path = data_dir / "cuda_snapshot_new.pickle"
    want = cuda_snapshot.load(path).counts

    def no_unpickling(path: Path, progress: Any) -> Any:
        raise AssertionError("the restricted unpickler's path was taken")

    monkeypatch.setattr(cuda_snapshot, "_unpickled", no_unpickling)
    assert cuda_snapshot.load(path, compiled=True).counts == want
    assert path.stat().st_size < cuda_snapshot.WALKER.min_bytes  # by size: the unpickler
    with pytest.raises(AssertionError, match="unpickler's path"):
        cuda_snapshot.load(path)
    with pytest.raises(AssertionError, match="unpickler's path"):
        cuda_snapshot.load(path, compiled=False)


def test_warm_compiles_everything_and_compiled_says_so() -> None:
    cuda_snapshot_fast.warm()
    assert cuda_snapshot_fast.compiled()
