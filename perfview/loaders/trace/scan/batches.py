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
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from perfview import readahead
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


def new_batch() -> Batch:
    """One batch's three arrays in one anonymous map of their own.

    malloc would serve these 3 MB blocks from its heap, and memory freed there stays with
    the process: the batches freed while `to_columns` copies them out could not be given
    back, and a 1 GB NCCL trace peaked 440 MB higher. A map is returned to the system as
    soon as its last array is dropped."""
    return _batch_in(read_text.anonymous_map(BATCH_ROWS * _ROW_BYTES), BATCH_ROWS)


@dataclass
class Room:
    """A batch with room for all of a range's rows (`reserved_batch`), and its map."""

    mm: mmap.mmap
    batch: Batch
    used: bool = False  # `to_columns` made the columns of its rows

    def release(self, rows: Sequence[tuple[int, int]], count: int) -> None:
        """Give back the pages of `rows` ((array, row): 0 codes, 1 int64, 2 uint8), first
        `count` items, once nothing reads them: the map is freed only with its last column,
        and the rows `assemble` does not keep (the args spans, 82 MB at 1 GB) would
        otherwise stay for the whole build. What is read there afterwards reads as zeros."""
        offsets = np.cumsum([0, *(arr.nbytes for arr in self.batch)])
        for kind, row in rows:
            arr = self.batch[kind]
            start = int(offsets[kind]) + row * arr.strides[0]
            first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages only
            last = (start + count * arr.itemsize) // mmap.PAGESIZE * mmap.PAGESIZE
            if last > first:
                with contextlib.suppress(OSError, ValueError):  # they stay: only memory
                    readahead.advise(self.mm, mmap.MADV_DONTNEED, first, last)


def reserved_batch(nbytes: int) -> Room | None:
    """One batch with room for every event that `nbytes` of the events array can hold, as
    address space only (MAP_NORESERVE: a page exists once a row on it is written), or None
    where that is refused (not Linux, a strict overcommit policy, a limit on address space)
    or not worth it (room for one batch or less).

    Why: the first range's rows then lie in their final columns as the scanner writes them
    (`to_columns` copies only the other ranges' rows after them), instead of being written
    to batches, first-touching their pages, and copied out again: at 1 GB, half of the
    scan's 0.4 GB of batches and of the copy. An event takes at least MIN_EVENT_BYTES of the
    array ('{}' and a comma), so the room never runs out; if it did, the scan would go on
    in batches (FULL), as without it."""
    rows = nbytes // MIN_EVENT_BYTES + 1
    if not RESERVE or not sys.platform.startswith("linux") or rows <= BATCH_ROWS:
        return None
    try:
        mm = mmap.mmap(-1, rows * _ROW_BYTES, flags=mmap.MAP_PRIVATE | MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    return Room(mm, _batch_in(mm, rows))


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
    if room is not None and len(per_range[0]) == 1 and room.batch[0].shape[1] >= total:
        out = [[arr[row, :total] for row in range(len(arr))] for arr in room.batch]
        per_range[0].clear()  # in place: its rows are the columns' first rows
        room.used = True
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

    def copy(first: int, stop: int) -> None:
        for j in range(first, stop):
            batch, jobs[j] = jobs[j], None  # freed once copied
            assert batch is not None
            _copy_batch(batch, out, at[j])
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
