"""Cache eviction deletes only perfview's own entries inside PERFVIEW_CACHE_DIR.

A user who points PERFVIEW_CACHE_DIR at a folder holding other things lost folders perfview
never wrote: eviction removed every subfolder, oldest first. An entry of perfview's is a
folder named by its key whose manifest starts with perfview's artifact marker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfview.loaders import trace
from perfview.store import cache_bound, parsed_columns
from tests.loaders.cache_setup import sample_copy, use_cache_dir

NCCL = "kineto_gpu/hta_nccl_data.json.gz"


def test_eviction_leaves_folders_perfview_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = use_cache_dir(tmp_path, monkeypatch, max_mb=100)
    root.mkdir(parents=True, exist_ok=True)
    theirs = root / "photos"
    theirs.mkdir()
    (theirs / "holiday.jpg").write_bytes(b"\xff" * 4096)
    lookalike = root / ("0" * 32)  # named like an entry, but no perfview manifest
    lookalike.mkdir()
    (lookalike / "manifest.json").write_text('{"not": "perfview"}')
    for folder in (theirs, lookalike):
        os.utime(folder, (1, 1))  # older than anything perfview wrote
    path = sample_copy(NCCL, tmp_path)
    entry = parsed_columns.put(path, trace.load(path))
    assert entry is not None
    cache_bound.evict(limit=0)  # evict everything perfview may evict
    assert (theirs / "holiday.jpg").exists()
    assert (lookalike / "manifest.json").exists()
    assert not entry.exists()
