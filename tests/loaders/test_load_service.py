"""The load service: where a parse runs is the caller's explicit choice, a child process hands
back the same Bundle as an in-process parse, with or without the cache, and errors and
Cancel cross the process boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.loaders import FRESH, LoadOptions, Where, load, service, trace
from tests.conftest import sample
from tests.loaders.test_cache import NCCL, assert_same

GIL_FREE = LoadOptions(where=Where.GIL_FREE, child_min_bytes=0)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child path must work with the cache off: it never goes through the cache."""
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")


def _copy(rel: str, tmp_path: Path) -> Path:
    src = sample(rel)
    dst = tmp_path / src.name
    dst.write_bytes(src.read_bytes())
    return dst


def test_child_process_parse_equals_in_process(tmp_path: Path) -> None:
    path = _copy(NCCL, tmp_path)
    seen: list[float] = []
    bundle = load(path, progress=lambda f, m: seen.append(f), options=LoadOptions(Where.CHILD))
    assert_same(trace.load(path), bundle)
    assert seen
    assert seen == sorted(seen)
    assert not list(tmp_path.glob("perfview-child-*"))


def test_child_reports_the_loaders_refusal(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": []}')
    with pytest.raises(LoadError, match="no events"):
        service.in_child(bad)


def test_cancel_kills_the_child(tmp_path: Path) -> None:
    path = _copy(NCCL, tmp_path)

    def cancel(_fraction: float, _message: str) -> None:
        raise LoadCancelled()

    with pytest.raises(LoadCancelled):
        service.in_child(path, cancel)


def test_gil_free_scans_here_and_sends_the_rest_to_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled scanner leaves the GIL free, so a background load uses it in-process;
    only files it refuses (odd values) go to a child for the general path. Until its code is
    compiled (right after an install), every big trace goes to the child."""
    from perfview.loaders.trace.scan import parallel as trace_parallel

    trace_parallel.warm()  # compiles it on a fresh clone: CI's first test may get here first
    assert trace_parallel.compiled()
    children: list[Path] = []
    real = service.child_load

    def child(path: Path, progress: Any = None, *rest: Any, **options: Any) -> tuple[Bundle, bool]:
        children.append(path)
        return real(path, progress, *rest, **options)

    monkeypatch.setattr(service, "child_load", child)
    plain = tmp_path / "plain.json"
    plain.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}')
    assert load(plain, options=GIL_FREE).counts["slices"] == 1
    assert children == []
    odd = tmp_path / "odd.json"
    odd.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1","dur":2}]}')
    assert load(odd, options=GIL_FREE).counts["slices"] == 1
    assert children == [odd]
    monkeypatch.setattr(trace_parallel, "compiled", lambda: False)
    fresh = tmp_path / "fresh.json"
    fresh.write_bytes(plain.read_bytes())
    assert load(fresh, options=GIL_FREE).counts["slices"] == 1
    assert children == [odd, fresh]


def test_small_files_and_other_formats_parse_here(tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1","dur":2}]}')
    options = LoadOptions(where=Where.GIL_FREE)  # default threshold: 64 MB
    assert load(small, options=options).counts["slices"] == 1
    prof = sample("pstats/gprof2dot_print1.pstats")
    assert load(prof, options=LoadOptions(where=Where.CHILD)).format == "pstats"
    assert load(prof, options=FRESH).format == "pstats"
