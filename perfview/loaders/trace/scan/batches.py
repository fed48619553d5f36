"""Where the compiled scanner writes its rows, and how they become the load's columns.

The scanner (`scan.events`) fills one *batch* per call: BATCH_ROWS rows of three 2-D arrays
(int32 codes, int64 numbers, uint8 flags; the row numbers are `scan.events`' C_* / I_* / U_*).
Each range of the file (`scan.parallel`) keeps a list of them, since how many events a range
holds is known only at its end. `to_columns` then copies every range's batches into one
contiguous array per column, on every core, freeing each batch as it goes.

The first range instead writes into one batch with room for every event the file can hold
(`reserved_batch`: address space, not memory), whose rows become the columns themselves:
only the other ranges' rows are copied, after its own.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from perfview import disk_files, readahead
from perfview.loaders.trace import fields
from perfview.loaders.trace import read as read_text
from perfview.loaders.trace.scan import events as ts

Batch = tuple[np.ndarray, np.ndarray, np.ndarray]  # codes, i64, u8: (height, rows) each
Columns3 = tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]  # one array per row

BATCH_ROWS = 1 << 15  # rows per scanner call: ~15 MB of kineto JSON, tens of ms
# the scanner writes these rows for `ts.WHOLE_PHASES` only (the events Python may decode)
SPARSE_I64 = (ts.I_START, ts.I_END)
_WHOLE_PC = fields.phase_table(ts.WHOLE_PHASES)
_BATCH_SHAPES = ((ts.N_CODES, np.int32), (ts.N_I64, np.int64), (ts.N_U8, np.uint8))
_ROW_BYTES = sum(h * np.dtype(t).itemsize for h, t in _BATCH_SHAPES)  # one event's
MAP_NORESERVE = 0x4000  # Linux's value; Python 3.11's mmap does not name it
MIN_EVENT_BYTES = 2  # no event row takes fewer bytes of the array: '{}' plus ',' or ']'
RESERVE = True  # `reserved_batch` is used (tests turn it off to see the batches path)
# a room on disk (`reserved_batch(on_disk=True)`) has blocks reserved for this many rows
# ahead of the scanner at a time (~100 MB of disk): no row is ever written to a page the
# file has no block for (a full disk then raises SIGBUS), and the disk is not reserved for
# the worst case (an event of two bytes: 48x the file)
AHEAD_ROWS = 1 << 20
GIVE_BACK_ROWS = 1 << 16  # a room on disk gives its rows' pages back this many rows at a time


def new_batch() -> Batch:
    """One batch's three arrays in one anonymous map of their own.

    malloc would serve these 3 MB blocks from its heap, and memory freed there stays with
    the process: the batches freed while `to_columns` copies them out could not be given
    back, and a 1 GB NCCL trace peaked 440 MB higher. A map is returned to the system as
    soon as its last array is dropped."""
    return _batch_in(read_text.anonymous_map(BATCH_ROWS * _ROW_BYTES), BATCH_ROWS)


@dataclass
class Room:
    """A batch with room for all of a range's rows (`reserved_batch`), and its map.

    On disk (`on_disk`) the map is a file's, shared: its pages can be given back to the
    system at any time (`give_back`) and are read again from the page cache (or the disk)
    where touched, so the scanner's rows, which become the load's columns, are never all
    resident (a 10 GB trace's are 5 GB). Only the rows the file has blocks for (`backed`)
    may be written (`writable`, `back`)."""

    mm: mmap.mmap
    batch: Batch
    used: bool = False  # `to_columns` made the columns of its rows
    fd: int = -1  # the file of a room on disk (closed once the scan is over), else -1
    backed: int = 0  # rows the file has blocks for (a room in memory: all of them)
    given: int = 0  # rows whose pages were given back (`give_back_rows`)
    on_disk: bool = False  # its map is a file's (shared): pages given back stay there

    def release(self, rows: Sequence[tuple[int, int]], count: int) -> None:
        """Give back the pages of `rows` ((array, row): 0 codes, 1 int64, 2 uint8), first
        `count` items, once nothing reads them: the map is freed only with its last column,
        and the rows `assemble` does not keep (the args spans, 82 MB at 1 GB) would
        otherwise stay for the whole build. What is read there afterwards reads as zeros
        (in memory; on disk it reads as it was)."""
        for kind, row in rows:
            self._advise(kind, row, 0, count)

    def _advise(self, kind: int, row: int, first_item: int, stop_item: int) -> None:
        """MADV_DONTNEED over whole pages of items first_item..stop_item of one row."""
        arr = self.batch[kind]
        start = self._offset(kind) + row * arr.strides[0]
        first = -(-(start + first_item * arr.itemsize) // mmap.PAGESIZE) * mmap.PAGESIZE
        last = (start + stop_item * arr.itemsize) // mmap.PAGESIZE * mmap.PAGESIZE
        if last > first:
            with contextlib.suppress(OSError, ValueError):  # they stay: only memory
                readahead.advise(self.mm, mmap.MADV_DONTNEED, first, last)

    def _offset(self, kind: int) -> int:
        return sum(arr.nbytes for arr in self.batch[:kind])

    def writable(self) -> Batch:
        """The batch cut to the rows that may be written (`backed`)."""
        codes, i64, u8 = self.batch
        k = self.backed
        return codes[:, :k], i64[:, :k], u8[:, :k]

    def back(self, rows: int) -> bool:
        """Make rows 0..rows-1 writable (a room on disk: blocks reserved for every row of
        them, `posix_fallocate`); False where the disk refuses (full) or past the room."""
        rows = min(rows, self.batch[0].shape[1])
        if rows <= self.backed:
            return True
        if self.fd < 0:
            return False
        try:
            for kind, arr in enumerate(self.batch):
                base = self._offset(kind)
                for row in range(arr.shape[0]):
                    at = base + row * arr.strides[0] + self.backed * arr.itemsize
                    os.posix_fallocate(self.fd, at, (rows - self.backed) * arr.itemsize)
        except (OSError, ValueError):
            return False
        self.backed = rows
        return True

    def give_back_rows(self, rows: int, *, every: int | None = None) -> None:
        """Give back the pages of rows `given`..`rows` of every array (a room on disk: the
        values stay in its file), once at least `every` (GIVE_BACK_ROWS) rows were written
        since the last."""
        if not self.on_disk or rows - self.given < (GIVE_BACK_ROWS if every is None else every):
            return
        self.give_back_span(self.given, rows)
        self.given = rows

    def give_back_span(self, first: int, stop: int) -> None:
        """Give back the pages of rows first..stop-1 of every array (a room on disk only)."""
        if not self.on_disk:
            return
        for kind, arr in enumerate(self.batch):
            for row in range(arr.shape[0]):
                self._advise(kind, row, first, stop)

    def give_back(self, rows: int) -> None:
        """Give back every page of the first `rows` rows (a room on disk only: in memory
        that would lose them). Called between a load's stages: what a later stage reads is
        read again from the file's pages in the page cache."""
        if not self.on_disk:
            return
        self.given = 0
        self.give_back_rows(rows, every=1)

    def __del__(self) -> None:
        self.close_file()

    def close_file(self) -> None:
        """The scan is over: no more blocks are reserved (the map keeps the file)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def reserved_batch(nbytes: int, *, on_disk: bool = False) -> Room | None:
    """One batch with room for every event that `nbytes` of the events array can hold, as
    address space only (MAP_NORESERVE: a page exists once a row on it is written), or None
    where that is refused (not Linux, a strict overcommit policy, a limit on address space)
    or not worth it (room for one batch or less).

    Why: the first range's rows then lie in their final columns as the scanner writes them
    (`to_columns` copies only the other ranges' rows after them), instead of being written
    to batches, first-touching their pages, and copied out again: at 1 GB, half of the
    scan's 0.4 GB of batches and of the copy. An event takes at least MIN_EVENT_BYTES of the
    array ('{}' and a comma), so the room never runs out; if it did, the scan would go on
    in batches (FULL), as without it.

    `on_disk`: the room is a sparse file without a name in the parsed-trace cache's folder
    (`disk_files.DiskMap`'s), mapped shared, its blocks reserved AHEAD_ROWS rows at a time
    (`Room.back`); in memory where no such file can be made there."""
    rows = nbytes // MIN_EVENT_BYTES + 1
    if not RESERVE or not sys.platform.startswith("linux") or rows <= BATCH_ROWS:
        return None
    if on_disk:
        room = _room_on_disk(rows)
        if room is not None:
            return room
    try:
        mm = mmap.mmap(-1, rows * _ROW_BYTES, flags=mmap.MAP_PRIVATE | MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    return Room(mm, _batch_in(mm, rows), backed=rows)


def _room_on_disk(rows: int) -> Room | None:
    """`reserved_batch`'s room in a file of its own (see there), or None."""
    disk = disk_files.DiskMap.make(1)
    if disk is None:
        return None
    fd, disk.fd = disk.fd, -1
    try:
        os.ftruncate(fd, rows * _ROW_BYTES)  # sparse: blocks come with `Room.back`
        mm = mmap.mmap(fd, rows * _ROW_BYTES, flags=mmap.MAP_SHARED)
    except (OSError, ValueError, OverflowError):
        os.close(fd)
        return None
    room = Room(mm, _batch_in(mm, rows), fd=fd, on_disk=True)
    if not room.back(min(AHEAD_ROWS, rows)):
        room.close_file()
        return None
    return room


def _batch_in(mm: mmap.mmap, rows: int) -> Batch:
    """The three (height, rows) arrays of a batch, one after another in `mm`."""
    out = []
    offset = 0
    for height, dtype in _BATCH_SHAPES:
        flat = np.frombuffer(mm, dtype=dtype, count=height * rows, offset=offset)
        out.append(flat.reshape(height, rows))
        offset += flat.nbytes
    return out[0], out[1], out[2]


def to_columns(per_range: list[list[Batch]], room: Room | None = None) -> Columns3:
    """Every column as one contiguous array over all ranges (each range's batches in order).

    The batches are copied into their rows of the columns in shares of about equal rows, a
    thread per share (numpy copies without the GIL; most of the cost is first-touching the
    new pages), and each is dropped once copied, so memory peaks at the batches plus about
    one batch per thread. The SPARSE_I64 rows start as zeros and only the rows the scanner
    wrote are copied, so their other pages are never touched.

    `room`: the first range's reserved batch (`reserved_batch`), which holds all its rows:
    when it has room for every row, the columns are its rows (`room.used`), the first
    range's rows are already in place, and only the other ranges are copied after them.
    """
    counts = [sum(b[0].shape[1] for b in batches) for batches in per_range]
    total = sum(counts)
    if (
        room is not None
        and len(per_range[0]) == 1
        and room.batch[0].shape[1] >= total
        and room.back(total)
    ):
        out = [[arr[row, :total] for row in range(len(arr))] for arr in room.batch]
        per_range[0].clear()  # in place: its rows are the columns' first rows
        room.used = True
        room.close_file()
        room.give_back(counts[0])  # the first range's rows (a room on disk: in its file)
    else:
        out = [[np.empty(total, dtype=t) for _ in range(h)] for h, t in _BATCH_SHAPES]
        for row in SPARSE_I64:  # zeros: pages first touched where a row is written
            out[1][row] = np.zeros(total, dtype=np.int64)
    # every batch left to copy and the row it goes to, in shares of about equal rows, one
    # per thread: with the first range in place, the second's copy is split in two too
    jobs: list[Batch | None] = []
    at: list[int] = []  # the first row of each job's batch in the columns
    for k, batches in enumerate(per_range):
        o = sum(counts[:k])
        for batch in batches:
            jobs.append(batch)
            at.append(o)
            o += batch[0].shape[1]
        batches.clear()  # `jobs` holds them now, until each is copied
    if not jobs:
        return out[0], out[1], out[2]
    shares = max(len(per_range), 2)
    ends = np.asarray([*at[1:], total]) - at[0]  # rows copied up to the end of each job
    cuts = [0, *np.searchsorted(ends, [ends[-1] * (j + 1) // shares for j in range(shares - 1)])]
    bounds = [(a, b) for a, b in zip(cuts, [*cuts[1:], len(jobs)], strict=True) if b > a]

    given = room if room is not None and room.used and room.on_disk else None

    def copy(first: int, stop: int) -> None:
        for j in range(first, stop):
            batch, jobs[j] = jobs[j], None  # freed once copied
            assert batch is not None
            _copy_batch(batch, out, at[j])
            if given is not None:  # the rows copied go to the file, not memory
                given.give_back_span(at[j], at[j] + batch[0].shape[1])
            del batch

    with ThreadPoolExecutor(max(len(bounds) - 1, 1), thread_name_prefix="perfview-columns") as pool:
        others = [pool.submit(copy, a, b) for a, b in bounds[1:]]
        copy(*bounds[0])
        for done in others:
            done.result()  # re-raises what the copy raised
    return out[0], out[1], out[2]


def _copy_batch(batch: Batch, out: list[list[np.ndarray]], o: int) -> None:
    """One batch's rows into the columns from row `o` (the SPARSE_I64 rows where written)."""
    m = batch[0].shape[1]
    for kind, rows in enumerate(out):
        for row, column in enumerate(rows):
            if kind != 1 or row not in SPARSE_I64:
                column[o : o + m] = batch[kind][row]
    whole = np.flatnonzero(_WHOLE_PC[batch[2][ts.U_PC]])
    for row in SPARSE_I64:
        out[1][row][o + whole] = batch[1][row][whole]


__all__ = [
    "BATCH_ROWS",
    "SPARSE_I64",
    "Batch",
    "Columns3",
    "Room",
    "new_batch",
    "reserved_batch",
    "to_columns",
]
