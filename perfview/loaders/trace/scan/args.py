"""The args text of a scanned trace: compiled passes over it (numba, cached on disk).

* `compact` turns the file text into the args blob in place, and `ArgsCompaction` runs it on a
  thread of its own while the tables are built;
* `int_args` reads the integer args of memory events, which become the memory table.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
from collections.abc import Callable

import numpy as np
from numba import njit

from perfview import disk_files, readahead
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

Spans = tuple[np.ndarray, np.ndarray]  # starts and lengths of the args objects in the text
SETTLE_SHARE = 0.5  # of a mapped file's args gathered before the build goes on (`settle`)
GATHER_SPANS = 1 << 16  # spans per `gather` call: the source read so far goes back between calls
# args per write to the blob's file (`_gather_to_disk`): a piece's source pages (~3x its
# size in an NCCL trace) stay resident until it is written; 8 MB put ~25 MB more of the
# file into a 1 GB trace's peak, which the gather overlaps (1,030 -> 993-1,028 MB)
GATHER_BYTES = 2 << 20


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


@njit(cache=True, nogil=True)
def gather(src: np.ndarray, dst: np.ndarray, starts: np.ndarray, lens: np.ndarray, o: int) -> int:
    """Copy the spans src[starts[k]:starts[k]+lens[k]] back to back into dst from `o` on;
    returns where the next span goes (`compact` from one array into another)."""
    for k in range(len(starts)):
        m = lens[k]
        dst[o : o + m] = src[starts[k] : starts[k] + m]
        o += m
    return o


def gather_from_file(
    src: mmap.mmap, starts: np.ndarray, lens: np.ndarray,
    done: Callable[[float], object] = lambda share: None,
) -> mmap.mmap:  # fmt: skip
    """The args blob of a mapped file (`readahead.map_file`), mapped read-only from a file
    of its own on disk (`disk_files.DiskMap`), or in memory where no such file can be made.

    Not compacted in place as a copy of the file is: the blob must not share the file's
    mapping, whose pages, even those copied on write, a file cut shorter takes away (a bus
    error when an event's args are shown later). The source pages read so far are given
    back as the copy goes, and the args go to disk through one small buffer, so neither the
    file nor its args are ever resident whole. `done(share)` is told the share of the spans
    copied after each step."""
    total = int(lens.sum())
    disk = disk_files.DiskMap.make(total)
    if disk is None:
        return _gather_in_memory(src, starts, lens, total, done)
    try:
        _gather_to_disk(src, starts, lens, disk, done)
    except OSError:  # the disk filled up meanwhile: in memory, as where there is no file
        disk.close()
        return _gather_in_memory(src, starts, lens, total, done)
    return disk.sealed()


def _gather_to_disk(
    src: mmap.mmap, starts: np.ndarray, lens: np.ndarray, disk: disk_files.DiskMap,
    done: Callable[[float], object],
) -> None:  # fmt: skip
    """The spans gathered GATHER_BYTES at a time into one buffer, each piece written at its
    place in the file (a span bigger than the buffer goes alone, through one of its size)."""
    source = np.frombuffer(src, dtype=np.uint8)
    ends = np.cumsum(lens)
    piece = np.empty(GATHER_BYTES, dtype=np.uint8)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    a = o = released = 0
    while a < len(starts):
        b = max(int(np.searchsorted(ends, o + GATHER_BYTES, side="right")), a + 1)
        size = int(ends[b - 1]) - o
        dst = piece if size <= GATHER_BYTES else np.empty(size, dtype=np.uint8)
        gather(source, dst, starts[a:b], lens[a:b], 0)
        disk.write_at(dst[:size], o)
        o += size
        read_to = (int(starts[b]) if b < len(starts) else len(src)) // mmap.PAGESIZE * mmap.PAGESIZE
        if dontneed is not None and read_to - released >= POPULATE_STEP:
            readahead.advise(src, dontneed, released, read_to)
            released = read_to
        done(b / len(starts))
        a = b


def _gather_in_memory(
    src: mmap.mmap, starts: np.ndarray, lens: np.ndarray, total: int,
    done: Callable[[float], object],
) -> mmap.mmap:  # fmt: skip
    """The blob in an anonymous map of its own, the source's pages given back as it goes."""
    dst = readahead.anonymous_map(total)
    source, target = np.frombuffer(src, dtype=np.uint8), np.frombuffer(dst, dtype=np.uint8)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    populate = readahead.populator(dst)
    o = released = 0
    for a in range(0, len(starts), GATHER_SPANS):
        b = min(a + GATHER_SPANS, len(starts))
        if populate is not None:  # the blob's next pages in a few calls, not a fault each
            # (0.41 -> 0.36 s of CPU for a 1 GB NCCL trace's 0.3 GB of args)
            page = o // mmap.PAGESIZE * mmap.PAGESIZE
            with contextlib.suppress(OSError, ValueError):
                populate(page, min(o + int(lens[a:b].sum()), total) - page)
        o = gather(source, target, starts[a:b], lens[a:b], o)
        read_to = (int(starts[b]) if b < len(starts) else len(src)) // mmap.PAGESIZE * mmap.PAGESIZE
        if dontneed is not None and read_to - released >= POPULATE_STEP:
            readahead.advise(src, dontneed, released, read_to)
            released = read_to
        done(b / len(starts))
    del source, target
    return dst


def gather_early(
    buf: Text, starts: np.ndarray, lens: np.ndarray, pc: np.ndarray, kept: np.ndarray
) -> ArgsCompaction | None:
    """A mapped file's args (`gather_from_file`), gathered on a thread from the end of the
    scan on, beside `assemble`: that copy first-touches the blob's pages (0.3-0.4 s for a
    1 GB NCCL trace), which would otherwise hold up the build. `starts` / `lens` / `pc`: the
    scanner's columns; `kept`: which one-letter phases keep their args (as `assemble`). A
    copy of the file is compacted in place later, which is quick: None then."""
    if not readahead.is_file_map(buf):
        return None

    def spans() -> Spans:
        keep = np.flatnonzero(kept[pc])
        return starts[keep], lens[keep]

    return ArgsCompaction(buf, spans)


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
    readahead.advise(buf, dontneed, -(-total // mmap.PAGESIZE) * mmap.PAGESIZE, len(buf))


def _narrowed(lens: np.ndarray) -> np.ndarray:
    """The lengths as int32 where they fit (an args object under 2 GB: always, but in odd
    files): kept to the end of the load (`finish`), beside the build's peak, they take half
    the bytes. `finish` sums them as int64."""
    if len(lens) and int(lens.max()) < 2**31 and int(lens.min()) >= 0:
        return lens.astype(np.int32)
    return lens


class ArgsCompaction:
    """Turn the file text into the args blob in place, on a thread of its own.

    The kept args are moved back to back, in file order, to the front of `buf` (peak memory
    stays at one copy of the file); the move runs compiled code without the GIL, so it
    overlaps with `build.build`, which does not need the text. `finish` waits for it
    and returns the blob and each kept event's start in it. A mapped file's args are
    gathered into a map of their own instead (`gather_from_file`), and the file's map is
    closed by `shrink`.
    """

    def __init__(self, buf: Text, spans: Spans | Callable[[], Spans]) -> None:
        """`spans`: the kept args' starts in `buf` and their lengths, or what finds them on
        the thread."""
        self.buf = buf
        self.spans = spans
        self.starts = self.lens = np.zeros(0, dtype=np.int64)
        self.found = threading.Event()  # the spans are found (`lengths`)
        self.total = -1
        self.blob: bytes | Text | None = None
        self.error: BaseException | None = None
        self.gathered: mmap.mmap | None = None  # the blob of a mapped file (`gather_from_file`)
        self.settled = threading.Event()  # see `settle`
        self.thread = threading.Thread(target=self._run, name="perfview-args", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            starts, lens = self.spans() if callable(self.spans) else self.spans
            del self.spans  # and what it holds: the columns it read the spans from
            self.starts = np.ascontiguousarray(starts, dtype=np.int64)
            self.lens = np.ascontiguousarray(lens, dtype=np.int64)
            self.found.set()
            del starts, lens
            if readahead.is_file_map(self.buf) and len(self.lens) and self.lens.sum() > 0:
                assert isinstance(self.buf, mmap.mmap)
                self.gathered = gather_from_file(self.buf, self.starts, self.lens, self._done)
                self.total = len(self.gathered)
            else:
                text = np.frombuffer(self.buf, dtype=np.uint8)
                self.total = compact(text, self.starts, self.lens)
            self.starts = np.zeros(0, dtype=np.int64)  # moved: the build's peak is better off
            self.lens = _narrowed(self.lens)
        except BaseException as exc:
            self.error = exc
        finally:
            self.found.set()
            self.settled.set()

    def spans_found(self) -> Spans:
        """The kept args' starts and lengths once found (`assemble` keeps them as its
        columns too: one array of each, not two); the starts are empty once moved."""
        self.found.wait()
        return self.starts, self.lens

    def lengths(self) -> np.ndarray:
        """The kept args' lengths, once found (the loader's too: one array, not two)."""
        self.found.wait()
        return self.lens

    def _done(self, share: float) -> None:
        if share >= SETTLE_SHARE:
            self.settled.set()

    def settle(self) -> None:
        """What the build calls before its bigger tables: a copy of the file is shrunk to
        its args there (`shrink`); a mapped file's gather gives the file's pages back as it
        goes, so the build waits only until SETTLE_SHARE of it is done (waiting for all of
        it was 0.25 s of a 1 GB NCCL trace's build; not waiting at all let the cpu-stack
        trace's build peak at 2.0x the file)."""
        if readahead.is_file_map(self.buf):
            self.settled.wait()
        else:
            self.shrink()

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
        if self.gathered is not None:
            assert isinstance(buf, mmap.mmap)  # only a mapped file is gathered
            with contextlib.suppress(BufferError):  # a view still alive: freed with it
                buf.close()
            self.blob = self.gathered
            return
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

    def cancel(self) -> None:
        """Wait for the thread and drop what it made, leaving the text as it is (the
        general path reads it next)."""
        self.thread.join()
        if self.gathered is not None:
            with contextlib.suppress(BufferError):  # a view still alive: freed with it
                self.gathered.close()
            self.gathered = None

    def finish(self) -> tuple[bytes | Text, np.ndarray]:
        self.shrink()
        assert self.blob is not None
        new = np.zeros(len(self.lens), dtype=np.int64)
        np.cumsum(self.lens[:-1], out=new[1:])
        return self.blob, new


__all__ = [
    "MEM_KEYS", "ArgsCompaction", "compact", "gather", "gather_early", "gather_from_file",
    "int_args",
]  # fmt: skip
