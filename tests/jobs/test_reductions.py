"""A reopened job reads each rank's reduction back from the cache, checked: the same tables as a
fresh parse, no parse at all, and a damaged entry is parsed again, never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfview.core.analysis.torch.job import Job
from perfview.jobs import open_job, reductions
from tests.jobs.test_job import job_tables, needs_ranks


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(root))
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "100")
    return root


def tables(job: Job) -> dict[str, object]:
    return dict(job_tables(job))


def assert_same(a: Job, b: Job) -> None:
    left, right = tables(a), tables(b)
    for view in left:
        assert left[view].equals(right[view]), view  # type: ignore[attr-defined]
        assert list(left[view].dtypes) == list(right[view].dtypes), view  # type: ignore[attr-defined]


def test_reopen_reads_reductions_without_parsing(
    cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = needs_ranks()[0]
    fresh = open_job([folder], workers=1)
    entries = sorted(cache_env.glob(f"{reductions.PREFIX}*"))
    assert len(entries) == len(fresh.ranks)

    def no_parse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a cached rank was parsed again")

    monkeypatch.setattr("perfview.loaders.load", no_parse)
    assert_same(fresh, open_job([folder], workers=1))


def test_damaged_reduction_is_parsed_again(cache_env: Path) -> None:
    folder = needs_ranks()[0]
    fresh = open_job([folder], workers=1)
    for entry in cache_env.glob(f"{reductions.PREFIX}*"):
        part = next(p for p in entry.iterdir() if p.name.startswith("comms."))
        data = bytearray(part.read_bytes())
        data[len(data) // 2] ^= 0xFF
        part.write_bytes(bytes(data))
    assert_same(fresh, open_job([folder], workers=1))


def test_cache_off_writes_nothing(cache_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    open_job([needs_ranks()[0]], workers=1)
    assert not cache_env.exists() or not list(cache_env.glob(f"{reductions.PREFIX}*"))
