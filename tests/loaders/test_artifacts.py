"""Arrays read from a published folder are the process's own: mapped copy-on-write, they
survive the folder's removal or replacement, and writing to them never reaches the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from perfview.loaders import artifacts


def _publish(folder: Path, values: np.ndarray) -> Path:
    return artifacts.write_folder(folder, {"col": values, "none": values[:0]}, {}, {"n": 1})


def test_arrays_are_private_and_outlive_their_folder(tmp_path: Path) -> None:
    values = np.arange(1_000_000, dtype=np.int64) * 3
    folder = _publish(tmp_path / "entry", values)
    arr = artifacts.open_folder(folder).read(["col", "none"], [])["col"]
    assert np.array_equal(arr, values)
    assert arr.flags.writeable
    arr[:10] = -1  # the process's own copy of those pages
    again = artifacts.open_folder(folder).array("col")
    assert np.array_equal(again, values)
    assert np.array_equal(np.fromfile(folder / "col", dtype=np.int64), values)
    _publish(folder, values[::-1].copy())  # the entry replaced while mapped
    shutil.rmtree(folder)  # then removed
    assert arr[:10].tolist() == [-1] * 10
    assert np.array_equal(arr[10:], values[10:])
    assert np.array_equal(again, values)


def test_an_empty_part_reads_as_an_empty_array(tmp_path: Path) -> None:
    folder = _publish(tmp_path / "entry", np.arange(5, dtype=np.int32))
    empty = artifacts.open_folder(folder).array("none")
    assert empty.dtype == np.int32
    assert len(empty) == 0
