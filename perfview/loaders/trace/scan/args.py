"""The args text of a scanned trace: compiled passes over it (numba, cached on disk).

* `compact` turns the file text into the args blob in place, and `ArgsCompaction` runs it on a
  thread of its own while the tables are built;
* `int_args` reads the integer args of memory events, which become the memory table.
"""

from __future__ import annotations

import mmap
import threading

import numpy as np
from numba import njit

from perfview.loaders.trace import fields
from perfview.loaders.trace.read import Text
from perfview.loaders.trace.scan.byte_ops import move_bytes
from perfview.loaders.trace.scan.digits import number
from perfview.loaders.trace.scan.keys import key_table, match_key
from perfview.loaders.trace.scan.tokens import (
    MAX_DEPTH,
    literal,
    skip_value,
    skip_ws,
    string,
)
from perfview.readahead import POPULATE_STEP


@njit(cache=True, nogil=True)
def compact(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> int:
    """Move the spans buf[starts[k]:starts[k]+lens[k]] (ascending, disjoint) to the front of
    `buf`, back to back, in place; returns their total length.

    A span only ever moves left, onto bytes already read, so moving them in order never
    overwrites one before it is moved.
    """
    o = 0
    for k in range(len(starts)):
        m = lens[k]
        if o != starts[k]:
            move_bytes(buf, o, starts[k], m)
        o += m
    return o


MEM_KEYS = key_table([f.key for f in fields.MEMORY_ARGS])


@njit(cache=True, nogil=True)
def int_args(
    buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, values: np.ndarray, ok: np.ndarray
) -> bool:
    """Integer args of memory events: values[k, w] / ok[k, w] for each MEM_KEYS word w of the
    args object buf[starts[k]:starts[k]+lens[k]]. False when a key holds anything but an
    integer literal or null (or is repeated), so the caller uses the general path."""
    stack = np.empty(MAX_DEPTH, dtype=np.uint8)
    for k in range(len(starts)):
        i = starts[k]
        n = i + lens[k]
        if lens[k] == 0:
            continue
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            continue
        while i < n:
            if buf[i] != 34:
                return False
            ks = i + 1
            i, kf = string(buf, i, n)
            if i < 0 or kf & 1:
                return False
            w = match_key(buf, ks, i - 1 - ks, n, MEM_KEYS)
            i = skip_ws(buf, i, n)
            if i >= n or buf[i] != 58:
                return False
            i = skip_ws(buf, i + 1, n)
            if i >= n:
                return False
            c = buf[i]
            if w >= 0:
                if ok[k, w]:
                    return False
                if c == 110:
                    i = literal(buf, i, n)
                elif c == 45 or 48 <= c <= 57:
                    i, kind, value = number(buf, i, n, 0)
                    if kind != 1:
                        return False
                    values[k, w] = value
                    ok[k, w] = True
                else:
                    return False
            else:
                i = skip_value(buf, i, n, stack)
            if i < 0:
                return False
            i = skip_ws(buf, i, n)
            if i < n and buf[i] == 44:
                i = skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                break
            return False
    return True


def _release_tail(buf: mmap.mmap, total: int) -> None:
    """Give the map's pages past `total` back in POPULATE_STEP pieces before it is resized:
    `mmap.resize` holds the GIL while the system frees them, 60 ms for the 0.7 GB past a 1 GB
    NCCL trace's args (140-180 ms on a busy machine), a stall of the window's GUI thread;
    each piece here holds it 1-4 ms. Nothing to do where madvise is missing."""
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    if dontneed is None or not hasattr(buf, "madvise"):
        return
    start = -(-total // mmap.PAGESIZE) * mmap.PAGESIZE
    for at in range(start, len(buf), POPULATE_STEP):
        buf.madvise(dontneed, at, min(POPULATE_STEP, len(buf) - at))


class ArgsCompaction:
    """Turn the file text into the args blob in place, on a thread of its own.

    The kept args are moved back to back, in file order, to the front of `buf` (peak memory
    stays at one copy of the file); the move runs compiled code without the GIL, so it
    overlaps with `build.build`, which does not need the text. `finish` waits for it
    and returns the blob and each kept event's start in it.
    """

    def __init__(self, buf: Text, starts: np.ndarray, lens: np.ndarray) -> None:
        self.buf = buf
        self.starts = np.ascontiguousarray(starts, dtype=np.int64)
        self.lens = np.ascontiguousarray(lens, dtype=np.int64)
        self.total = -1
        self.blob: bytes | Text | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="perfview-args", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.total = compact(np.frombuffer(self.buf, dtype=np.uint8), self.starts, self.lens)
        except BaseException as exc:
            self.error = exc

    def shrink(self) -> None:
        """Wait for the move and give the text beyond the args back (idempotent). The loader
        calls it before building its biggest tables, when the move has long finished."""
        if self.blob is not None:
            return
        self.thread.join()
        if self.error is not None:
            raise self.error
        buf, total = self.buf, self.total
        del self.buf
        try:
            if isinstance(buf, mmap.mmap):
                if total == 0:
                    raise ValueError("a map cannot be empty")
                _release_tail(buf, total)
                buf.resize(total)  # the pages past the args go back to the system
            else:
                del buf[total:]  # CPython reallocates only when less than half stays
            self.blob = buf
        except (BufferError, ValueError, OSError):  # a view is still alive somewhere
            self.blob = bytes(memoryview(buf)[:total])

    def finish(self) -> tuple[bytes | Text, np.ndarray]:
        self.shrink()
        assert self.blob is not None
        new = np.zeros(len(self.lens), dtype=np.int64)
        np.cumsum(self.lens[:-1], out=new[1:])
        return self.blob, new


__all__ = ["MEM_KEYS", "ArgsCompaction", "compact", "int_args"]
