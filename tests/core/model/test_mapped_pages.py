"""`mapped_pages.give_back`: the pages an analysis read of a stored trace's columns leave the
process (Linux's smaps says so) and the values read again are the same; columns in memory,
or a map that could have been written, are left as they are."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.model import mapped_pages
from perfview.store import artifacts
from tests.loaders.test_artifacts import resident_kb

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="file maps and smaps are Linux's"
)

N = 1 << 20


def _stored(folder: Path) -> dict[str, np.ndarray]:
    """Two columns of a published entry, read back as the cache reads them (mapped)."""
    ts = np.arange(N, dtype=np.int64) * 7
    codes = (np.arange(N) % 3).astype(np.int8)
    artifacts.write_folder(folder, {"ts": ts, "codes": codes}, {}, {"n": N})
    return artifacts.open_folder(folder).read(["ts", "codes"], [])


def test_read_pages_are_given_back_and_read_again(tmp_path: Path) -> None:
    parts = _stored(tmp_path / "entry")
    frame = pd.DataFrame(
        {
            "ts": parts["ts"],
            "name": pd.Categorical.from_codes(parts["codes"], ["a", "b", "c"], validate=False),
            "in_memory": np.ones(N, dtype=np.int64),
        },
        copy=False,
    )
    total = int(frame["ts"].sum())  # an analysis reads the columns whole
    assert frame["name"].value_counts()["c"] == N // 3
    assert resident_kb(parts["ts"]) >= N * 8 // 1024 * 9 // 10
    before = time.perf_counter()
    spanned = mapped_pages.give_back(frame)
    assert time.perf_counter() - before < 1.0
    assert spanned == N * 8 + N  # the two mapped columns, not the one in memory
    assert resident_kb(parts["ts"]) <= 4  # at most the last, partial page
    assert resident_kb(parts["codes"]) <= 4
    assert int(frame["ts"].sum()) == total  # read again from the page cache
    assert frame["in_memory"].sum() == N


def test_a_column_that_can_be_written_is_kept(tmp_path: Path) -> None:
    """A private map's written pages are the only copy: dropping them would lose the
    writes, so a map whose array is writable is never given back."""
    ts = _stored(tmp_path / "entry")["ts"]
    writable = np.frombuffer(ts.base, dtype=np.int64)  # the same map, writable
    writable[:4] = -1
    assert mapped_pages.give_back(pd.DataFrame({"ts": writable}, copy=False)) == 0
    assert writable[:4].tolist() == [-1] * 4
    assert mapped_pages.give_back(pd.DataFrame({"x": np.arange(10)})) == 0


def test_arrays_on_disk_read_the_same_and_give_their_pages_back() -> None:
    ends = np.arange(N, dtype=np.int64) * 3 + 1
    mask = np.arange(N) % 5 == 0
    grid = np.arange(12, dtype=np.int32).reshape(3, 4)
    on_disk = mapped_pages.on_disk([ends, mask, grid])
    for got, want in zip(on_disk, (ends, mask, grid), strict=True):
        assert np.array_equal(got, want)
        assert got.dtype == want.dtype
        assert not got.flags.writeable
    assert resident_kb(on_disk[0]) >= N * 8 // 1024 * 9 // 10  # read by the comparison
    mapped_pages.give_back_arrays(*on_disk)
    assert resident_kb(on_disk[0]) <= 4
    assert int(on_disk[0].sum()) == int(ends.sum())  # read again from the file
    assert on_disk[1].sum() == mask.sum()
