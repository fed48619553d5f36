"""The set-up every cache test shares: a private cache folder, and samples copied beside it
(a cache entry is keyed on the file's path and stamp, so each test loads its own copy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfview.core.model import Bundle
from perfview.loaders import load
from perfview.store import parsed_columns
from tests.conftest import sample


def use_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_mb: int) -> Path:
    """Point the user cache at a fresh folder that caches even the small samples."""
    root = tmp_path / "cache"
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(root))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")  # cache even the small samples
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", str(max_mb))
    return root


def sample_copy(rel: str, tmp_path: Path) -> Path:
    """A copy of sample `rel` in `tmp_path`."""
    src = sample(rel)
    dst = tmp_path / src.name
    dst.write_bytes(src.read_bytes())
    return dst


def loaded_copy(rel: str, tmp_path: Path) -> Bundle:
    """A copy of sample `rel`, loaded, its column-cache entry written."""
    bundle = load(sample_copy(rel, tmp_path))
    parsed_columns.flush()
    return bundle
