"""Hostile CUDA memory snapshots: bounded work, one sentence, no silent clamping.

- A 1.3 KB pickle whose frame `name` is a shared-reference "billion laughs" list hung the
  loader (`str()` of it never returns).
- Sizes above int64 were clamped to the int64 limit (a negative `used_bytes` after sums) and
  NaN became 0, silently.
"""

from __future__ import annotations

import math
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

from perfview.core.model.errors import LoadError
from perfview.loaders import load


def _laughs(depth: int = 40) -> list[Any]:
    item: list[Any] = ["lol"]
    for _ in range(depth):
        item = [item, item]  # pickled once per level: 2**depth leaves in ~1 KB
    return item


def _snapshot(frame: dict[str, Any], size: Any = 512, n_entries: int = 1) -> dict[str, Any]:
    frames = [frame]
    block = {"address": 4096, "size": size, "requested_size": 512, "state": "active_allocated",
             "frames": frames}  # fmt: skip
    segment = {"device": 0, "address": 4096, "total_size": 2**21, "allocated_size": 512,
               "active_size": 512, "requested_size": 512, "stream": 0,
               "segment_type": "large", "blocks": [block]}  # fmt: skip
    entry = {"action": "alloc", "addr": 4096, "size": size, "stream": 0, "time_us": 1,
             "frames": frames}  # fmt: skip
    return {"segments": [segment], "device_traces": [[entry] * n_entries]}


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps(data, protocol=4))
    return path


def _refused_quickly(path: Path) -> str:
    start = time.perf_counter()
    with pytest.raises(LoadError) as info:
        load(path)
    assert time.perf_counter() - start < 10.0
    message = str(info.value)
    assert "\n" not in message
    return message


def test_billion_laughs_frame_name_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _snapshot({"name": _laughs(), "filename": "a.py", "line": 1}))
    assert path.stat().st_size < 4096
    assert "not text" in _refused_quickly(path)


@pytest.mark.parametrize("size", [2**64, -(2**64), math.nan, math.inf, 1e30])
def test_sizes_outside_int64_or_not_numbers_are_refused(tmp_path: Path, size: Any) -> None:
    path = _write(tmp_path, _snapshot({"name": "f", "filename": "a.py", "line": 1}, size=size))
    assert "int64" in _refused_quickly(path)


def test_a_normal_small_snapshot_still_loads(tmp_path: Path) -> None:
    bundle = load(_write(tmp_path, _snapshot({"name": "f", "filename": "a.py", "line": 1})))
    assert bundle.cuda_snapshot is not None
    assert int(bundle.cuda_snapshot.trace["size_bytes"].iat[0]) == 512
