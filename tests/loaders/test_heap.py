"""`trace.heap.reuse_freed`: raises glibc's thresholds for a big build only, restores them when
the last block ends (also on error), and changes nothing for small loads."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from perfview.loaders.trace import heap


def _recorder(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    calls: list[tuple[str, int, int]] = []

    def mallopt(param: int, value: int) -> int:
        calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(pad: int) -> int:
        calls.append(("trim", pad, 0))
        return 1

    monkeypatch.setattr(heap, "_libc", lambda: (mallopt, malloc_trim))
    return calls


def test_a_one_shot_command_keeps_them(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recorder(monkeypatch)
    monkeypatch.setattr(heap, "_keep", False)
    heap.keep_after_blocks()
    with heap.reuse_freed(heap.MIN_EVENTS):
        pass
    assert [c[1] for c in calls] == [heap.M_MMAP_THRESHOLD, heap.M_TRIM_THRESHOLD]


def test_small_loads_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recorder(monkeypatch)
    with heap.reuse_freed(heap.MIN_EVENTS - 1):
        pass
    assert calls == []


def test_thresholds_come_back_after_the_last_block(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recorder(monkeypatch)
    held: list[int] = []

    def fail() -> None:
        with heap.reuse_freed(heap.MIN_EVENTS):
            with heap.reuse_freed(heap.MIN_EVENTS):
                pass
            held.append(len(calls))  # the inner block ended: still held
            raise RuntimeError

    with pytest.raises(RuntimeError):
        fail()
    assert held == [2]
    assert calls == [
        ("mallopt", heap.M_MMAP_THRESHOLD, heap.HELD),
        ("mallopt", heap.M_TRIM_THRESHOLD, heap.TRIM_HELD),
        ("mallopt", heap.M_MMAP_THRESHOLD, heap.AFTER),
        ("mallopt", heap.M_TRIM_THRESHOLD, heap.TRIM_AFTER),
        ("trim", 0, 0),
    ]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_real_glibc_accepts_the_settings() -> None:
    fns = heap._libc()
    assert fns is not None
    mallopt, _trim = fns
    with heap.reuse_freed(heap.MIN_EVENTS):
        a = np.ones(10_000_000)  # 80 MB: from the heap now
        del a
    assert mallopt(heap.M_MMAP_THRESHOLD, heap.AFTER) == 1  # what the block restored
    assert mallopt(heap.M_TRIM_THRESHOLD, heap.TRIM_AFTER) == 1


def test_give_back_trims_unless_a_build_reuses_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recorder(monkeypatch)
    with heap.reuse_freed(heap.MIN_EVENTS):
        heap.give_back()  # a build is running: its freed heap is for it to reuse
    assert calls.count(("trim", 0, 0)) == 1  # the block's own trim only
    heap.give_back()
    assert calls.count(("trim", 0, 0)) == 2


GIVE_BACK = """
import numpy as np, psutil
from perfview.loaders.trace import heap
mallopt = heap._libc()[0]  # the thresholds a window has after its first big load
mallopt(heap.M_MMAP_THRESHOLD, heap.AFTER)
mallopt(heap.M_TRIM_THRESHOLD, heap.TRIM_AFTER)
rss = lambda: psutil.Process().memory_info().rss
# 40 x 8 MB, under the threshold: from the heap; each followed by a kept 1 MB array, so
# their free space is never the heap's top (which free() gives back by itself)
arrays, pins = [], []
for _ in range(40):
    arrays.append(np.ones(1_000_000))
    pins.append(np.ones(125_000))
before = rss(); del arrays
freed = rss(); heap.give_back()
print(before - freed, freed - rss())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_give_back_returns_freed_heap_to_the_system() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", GIVE_BACK], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    kept_after_free, returned = int(out[0]), int(out[1])
    assert kept_after_free < 50 << 20  # freed, but still resident: malloc keeps it
    assert returned > 250 << 20  # of the 320 MB, handed back by give_back
