"""The cache's size bound: by default a quarter of the room the cache could have on its disk
(never under 2 GB), and eviction by trace: a trace's columns and the entries derived from
them go together, and writing one of them never evicts the others."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from perfview.loaders import trace
from perfview.store import artifacts, cache_bound, parsed_columns
from tests.loaders.cache_setup import sample_copy, use_cache_dir

NCCL = "kineto_gpu/hta_nccl_data.json.gz"
RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
MB = 1024 * 1024


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_cache_dir(tmp_path, monkeypatch, max_mb=100)


def derived(path: Path, suffix: str) -> Path:
    """A derived entry of `path`'s trace as `derived_entries` names one (key-suffix-code)."""
    entry = parsed_columns.cache_dir() / f"{parsed_columns.key(path)}-{suffix}-0123abcd"
    artifacts.write_folder(entry, {"x": np.arange(1000, dtype=np.int64)}, {}, {"what": suffix})
    return entry


def age(entry: Path, when: float) -> None:
    os.utime(entry / artifacts.MANIFEST, (when, when))


def test_a_derived_entry_never_evicts_its_own_traces_columns(
    tmp_path: Path, cache_root: Path
) -> None:
    a = sample_copy(NCCL, tmp_path)
    columns = parsed_columns.put(a, trace.load(a))
    assert columns is not None
    age(columns, 1)  # the columns were used long before their layout was written
    layout = derived(a, "layout")
    cache_bound.evict(keep=layout, limit=1)  # a bound smaller than anything
    assert columns.is_dir()
    assert layout.is_dir()


def test_the_least_recently_used_trace_goes_with_its_derived_entries(
    tmp_path: Path, cache_root: Path
) -> None:
    a, b = sample_copy(NCCL, tmp_path), sample_copy(RESNET, tmp_path)
    a_columns = parsed_columns.put(a, trace.load(a))
    b_columns = parsed_columns.put(b, trace.load(b))
    assert a_columns is not None
    assert b_columns is not None
    a_layout, b_layout = derived(a, "layout"), derived(b, "layout")
    # a's layout was used recently, its columns long ago: the trace's last use is the later
    age(a_columns, 10)
    age(a_layout, 1000)
    age(b_columns, 500)
    age(b_layout, 500)
    sizes = {e: sum(f.stat().st_size for f in e.iterdir()) for e in cache_root.iterdir()}
    cache_bound.evict(limit=sizes[a_columns] + sizes[a_layout])
    assert a_columns.is_dir()
    assert a_layout.is_dir()
    assert not b_columns.exists()
    assert not b_layout.exists()


def test_the_default_bound_is_a_quarter_of_the_room_and_at_least_2_gb(
    cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PERFVIEW_CACHE_MAX_MB")
    floor = cache_bound.DEFAULT_MAX_MB * MB
    room = shutil.disk_usage(cache_root.parent).free  # the cache folder is not made yet
    held = 40_000 * MB  # what the cache already holds counts as room it could have
    bound = cache_bound.default_max_bytes(held=held)
    assert bound == pytest.approx(max(floor, (room + held) // 4), abs=64 * MB)  # free drifts
    assert cache_bound.default_max_bytes(held=0) >= floor
    assert cache_bound.max_bytes() == pytest.approx(cache_bound.default_max_bytes(), abs=64 * MB)


def test_the_environment_still_sets_the_bound_and_zero_turns_the_cache_off(
    tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "300")
    assert cache_bound.max_bytes() == 300 * MB
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    assert not parsed_columns.enabled(sample_copy(NCCL, tmp_path))
