"""Arrays read from a published folder are the process's own: mapped copy-on-write and
read-only, they survive the folder's removal or replacement, and nothing writes to them (so
their pages can be given back once read: `core.model.mapped_pages`)."""

from __future__ import annotations

import mmap
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from perfview import readahead
from perfview.store import artifacts


def _publish(folder: Path, values: np.ndarray, age_s: float = 60.0) -> Path:
    """A published folder whose parts were written `age_s` ago."""
    artifacts.write_folder(folder, {"col": values, "none": values[:0]}, {}, {"n": 1})
    then = time.time() - age_s
    for part in folder.iterdir():
        os.utime(part, (then, then))
    return folder


def _mapped(arr: np.ndarray) -> bool:
    """True when `arr` lies in a map of its file (numpy's base is a view of the map)."""
    return readahead.is_file_map(getattr(arr.base, "obj", arr.base))


def test_arrays_are_read_only_and_outlive_their_folder(tmp_path: Path) -> None:
    values = np.arange(1_000_000, dtype=np.int64) * 3
    folder = _publish(tmp_path / "entry", values)
    arr = artifacts.open_folder(folder).read(["col", "none"], [])["col"]
    assert _mapped(arr)  # the page cache's pages, not a copy
    assert np.array_equal(arr, values)
    assert not arr.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        arr[:10] = -1
    assert not arr[5:].flags.writeable  # nor through a view
    _publish(folder, values[::-1].copy())  # the entry replaced while mapped
    shutil.rmtree(folder)  # then removed
    assert np.array_equal(arr, values)


def test_an_empty_part_reads_as_an_empty_array(tmp_path: Path) -> None:
    folder = _publish(tmp_path / "entry", np.arange(5, dtype=np.int32))
    empty = artifacts.open_folder(folder).array("none")
    assert empty.dtype == np.int32
    assert len(empty) == 0


def test_a_part_just_published_is_mapped_too(tmp_path: Path) -> None:
    """A published part is complete (written, synced, then renamed into place), so the
    read-ahead's guard for files still being written does not apply to it."""
    values = np.arange(100_000, dtype=np.int64)
    folder = _publish(tmp_path / "entry", values, age_s=0.0)
    arr = artifacts.open_folder(folder).array("col")
    assert _mapped(arr)
    assert np.array_equal(arr, values)


def test_a_blob_is_mapped_without_populating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11's mmap() holds the GIL for the whole call: with MAP_POPULATE it paged in
    the whole blob there (82 ms per GB of cached pages, more from disk), a stall of every
    thread, the window's too. The checking threads fault the pages in instead, GIL released."""
    blob = bytes(range(256)) * 40_000
    artifacts.write_folder(tmp_path / "entry", {}, {"blob": blob}, {})
    flags_seen: list[int] = []
    real_mmap = mmap.mmap

    def recording_mmap(fileno: int, length: int, **kwargs: int) -> object:
        flags_seen.append(kwargs.get("flags", 0))
        return real_mmap(fileno, length, **kwargs)

    monkeypatch.setattr(mmap, "mmap", recording_mmap)
    view = artifacts.open_folder(tmp_path / "entry").blob("blob")
    assert bytes(view) == blob
    assert flags_seen
    assert not any(flags & getattr(mmap, "MAP_POPULATE", 0) for flags in flags_seen)


def resident_kb(arr: np.ndarray) -> int:
    """The resident kB of the mapping that holds `arr` (/proc/self/smaps)."""
    address = arr.__array_interface__["data"][0]
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "Rss:":
            return int(line.split()[1])
    raise AssertionError("no mapping holds the array")


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="Linux's smaps")
def test_a_checked_array_gives_its_pages_back_until_it_is_read(tmp_path: Path) -> None:
    """Checking a part reads all of it; its pages then go back to the page cache, so a
    reopened trace's columns are resident only where a page reads them (the values are
    unchanged, the file untouched)."""
    values = np.arange(4_000_000, dtype=np.int64)  # 32 MB
    folder = _publish(tmp_path / "entry", values)
    arr = artifacts.open_folder(folder).read(["col"], [])["col"]
    assert _mapped(arr)
    assert resident_kb(arr) < 4 * 1024  # checked whole, then given back
    assert np.array_equal(arr, values)  # read again from the page cache
    assert resident_kb(arr) >= 30 * 1024
    assert (folder / "col").read_bytes()[:8] == values[:1].tobytes()  # the file is untouched
