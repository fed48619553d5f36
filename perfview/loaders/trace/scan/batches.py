"""Where the compiled scanner writes its rows, and how they become the load's columns.

The scanner (`scan.events`) fills one *batch* per call: BATCH_ROWS rows of three 2-D arrays
(int32 codes, int64 numbers, uint8 flags; the row numbers are `scan.events`' C_* / I_* / U_*).
Each range of the file (`scan.parallel`) keeps a list of them, since how many events a range
holds is known only at its end. `to_columns` then copies every range's batches into one
contiguous array per column, a thread per range, freeing each batch as it goes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

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
_BATCH_BYTES = [h * BATCH_ROWS * np.dtype(t).itemsize for h, t in _BATCH_SHAPES]


def new_batch() -> Batch:
    """One batch's three arrays in one anonymous map of their own.

    malloc would serve these 3 MB blocks from its heap, and memory freed there stays with
    the process: the batches freed while `to_columns` copies them out could not be given
    back, and a 1 GB NCCL trace peaked 440 MB higher. A map is returned to the system as
    soon as its last array is dropped."""
    mm = read_text.anonymous_map(sum(_BATCH_BYTES))
    out = []
    offset = 0
    for (height, dtype), nbytes in zip(_BATCH_SHAPES, _BATCH_BYTES, strict=True):
        flat = np.frombuffer(mm, dtype=dtype, count=height * BATCH_ROWS, offset=offset)
        out.append(flat.reshape(height, BATCH_ROWS))
        offset += nbytes
    return out[0], out[1], out[2]


def to_columns(per_range: list[list[Batch]]) -> Columns3:
    """Every column as one contiguous array over all ranges (each range's batches in order).

    Each range copies its batches into its rows of the columns on a thread of its own (numpy
    copies without the GIL; most of the cost is first-touching the new pages) and drops every
    batch once copied (the lists are emptied), so memory peaks at the batches plus about one
    batch per range. The SPARSE_I64 rows start as zeros and only the rows the scanner wrote
    are copied, so their other pages are never touched.
    """
    counts = [sum(b[0].shape[1] for b in batches) for batches in per_range]
    total = sum(counts)
    out = [[np.empty(total, dtype=dtype) for _ in range(height)] for height, dtype in _BATCH_SHAPES]
    for row in SPARSE_I64:  # zeros: pages first touched where a row is written
        out[1][row] = np.zeros(total, dtype=np.int64)
    firsts = np.cumsum([0, *counts])

    def copy(k: int) -> None:
        batches = per_range[k]
        o = int(firsts[k])
        while batches:
            batch = batches.pop(0)
            m = batch[0].shape[1]
            for kind, rows in enumerate(out):
                for row, column in enumerate(rows):
                    if kind != 1 or row not in SPARSE_I64:
                        column[o : o + m] = batch[kind][row]
            at = np.flatnonzero(_WHOLE_PC[batch[2][ts.U_PC]])
            for row in SPARSE_I64:
                out[1][row][o + at] = batch[1][row][at]
            o += m
            del batch

    workers = max(len(per_range) - 1, 1)
    with ThreadPoolExecutor(workers, thread_name_prefix="perfview-columns") as pool:
        others = [pool.submit(copy, k) for k in range(1, len(per_range))]
        copy(0)
        for done in others:
            done.result()  # re-raises what the copy raised
    return out[0], out[1], out[2]


__all__ = ["BATCH_ROWS", "SPARSE_I64", "Batch", "Columns3", "new_batch", "to_columns"]
