"""Give back the resident pages of a table's columns that are maps of the cache's files.

A trace opened from the parsed-trace cache has its columns mapped from the entry's files
(`store.artifacts`: copy-on-write maps, marked read-only). An analysis that reads a column
whole (the critical path's per-slice context, a finding's masks) leaves every page it read
resident and counted in the process's RSS: after the window's background analyses of a
10 GB trace, 2.2 GB of pages that no page draws from. Dropping them frees nothing to zero
(they stay in the page cache) and the next reader maps them again, a minor fault per 16
pages. So an analysis that has read the columns it needs calls `give_back`, and the
window's memory is what it holds, not what it once read.
"""

from __future__ import annotations

import mmap
from typing import cast

import numpy as np
import pandas as pd

from perfview import readahead
from perfview.disk_files import DiskMap


def give_back(frame: pd.DataFrame) -> int:
    """Drop the resident pages of every column of `frame` that is a map of a file nothing
    writes (`give_back_arrays`); returns the bytes those maps span."""
    columns = [
        values.codes if isinstance(values := series.array, pd.Categorical) else series.to_numpy()
        for _, series in frame.items()
    ]
    return give_back_arrays(*columns)


def on_disk(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """`arrays` copied into one file of their own on disk (`disk_files.DiskMap`) and mapped
    read-only: an analysis's per-slice working arrays of a huge trace (the critical path's
    context: 15 bytes a slice, 1 GB at 20 GB) are then resident only where a batch reads
    them, and `give_back_arrays` lets those pages go. Where no such file can be made (no
    disk space, not Linux) the arrays are returned as they are."""
    offsets = np.cumsum([0, *(_padded(a.nbytes) for a in arrays)])
    disk = DiskMap.make(int(offsets[-1]))
    if disk is None:
        return arrays
    try:
        for arr, at in zip(arrays, offsets.tolist(), strict=False):
            disk.write_at(np.ascontiguousarray(arr), at)
    except OSError:
        disk.close()
        return arrays
    sealed = disk.sealed()
    mapped = [
        np.frombuffer(sealed, dtype=a.dtype, count=a.size, offset=at)
        for a, at in zip(arrays, offsets.tolist(), strict=False)
    ]
    return [m if a.ndim == 1 else m.reshape(a.shape) for m, a in zip(mapped, arrays, strict=True)]


def give_back_arrays(*arrays: np.ndarray) -> int:
    """Drop the resident pages of the maps under `arrays` that nothing writes: a cache
    entry's read-only columns (`readahead.drop_unwritten`) and the files of `on_disk`
    (`readahead.give_back_read`); returns the bytes those maps span. An array in memory, or
    in a map that can be written (a private map's written pages are the only copy), is
    left."""
    seen: set[int] = set()
    spanned = 0
    for arr in arrays:
        root, owner = _owner(arr)
        if id(owner) in seen:
            continue
        seen.add(id(owner))
        if readahead.is_read_only_map(owner):
            mm = cast(mmap.mmap, owner)
            readahead.give_back_read(mm, 0, len(mm))
            spanned += len(mm)
        elif readahead.is_file_map(owner) and not root.flags.writeable:
            readahead.drop_unwritten(cast(mmap.mmap, owner), root.nbytes)
            spanned += root.nbytes
    return spanned


def _padded(nbytes: int) -> int:
    return -(-nbytes // 64) * 64  # each array starts on a 64-byte boundary


def _owner(arr: np.ndarray) -> tuple[np.ndarray, object]:
    """The array that owns `arr`'s memory, and what that array's memory is (a map, bytes,
    or None for numpy's own)."""
    root = arr
    base: object = arr.base
    while isinstance(base, np.ndarray):
        root, base = base, base.base
    return root, base.obj if isinstance(base, memoryview) else base


__all__ = ["give_back", "give_back_arrays", "on_disk"]
