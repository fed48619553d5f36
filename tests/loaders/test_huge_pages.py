"""`huge_pages`: numpy's huge-page advice is off once the loaders are imported, on only while a
file of `BIG` bytes or more loads (nested and concurrent blocks counted), and a trace loaded
with it on has the same tables."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from perfview.loaders import huge_pages
from perfview.loaders.trace import loader as trace_loader
from perfview.loaders.trace.scan import parallel  # noqa: F401  (its import turns it off)
from tests.conftest import sample

pytestmark = pytest.mark.skipif(
    "NUMPY_MADVISE_HUGEPAGE" in os.environ, reason="the user's NUMPY_MADVISE_HUGEPAGE stands"
)


def _advised() -> bool:
    core = getattr(np, "_core", None) or np.core
    return bool(core.multiarray._get_madvise_hugepage())


def test_the_loaders_turn_the_advice_off() -> None:
    assert not _advised()


def test_a_big_file_turns_it_on_for_its_block_only() -> None:
    with huge_pages.for_big_file(huge_pages.BIG - 1):
        assert not _advised()
    with huge_pages.for_big_file(huge_pages.BIG):
        assert _advised()
        with huge_pages.for_big_file(huge_pages.BIG):  # nested: still on after the inner
            pass
        assert _advised()
    assert not _advised()


def test_it_goes_off_when_the_last_of_two_threads_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with huge_pages.for_big_file(huge_pages.BIG):
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with huge_pages.for_big_file(huge_pages.BIG):
        pass
    assert _advised()  # the other load still runs
    release.set()
    thread.join(10)
    assert not _advised()


def test_it_goes_off_when_the_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError), huge_pages.for_big_file(huge_pages.BIG):
        raise RuntimeError("a load that failed")
    assert not _advised()


def test_a_trace_loaded_with_the_advice_has_the_same_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = sample("kineto_gpu/hta_nccl_data.json.gz")
    plain = trace_loader.load(path, compiled=True).timeline
    seen: list[bool] = []
    build = trace_loader.build

    def build_noting(*args: object, **kwargs: object) -> object:
        seen.append(_advised())
        return build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(huge_pages, "BIG", 1)  # this small file counts as big
    monkeypatch.setattr(trace_loader, "build", build_noting)
    advised = trace_loader.load(path, compiled=True).timeline
    assert seen == [True]
    assert not _advised()
    assert plain is not None
    assert advised is not None
    for name in ("events", "lanes", "instants", "counters", "flows"):
        a, b = getattr(plain, name), getattr(advised, name)
        assert a.equals(b), name
