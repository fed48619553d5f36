"""Drive the compiled scanner (`scan.events`) over a whole trace, on several threads at once.

The events array is cut into byte ranges, one per core. Only the first range's start is known
to be an event boundary; the others start at a guess (the next `},{` after an even cut) and are
checked afterwards: the range before must have stopped exactly there, having parsed every byte
up to it in context. A wrong guess (a `},{` inside a string or nested args) is detected that
way and the range before simply carries on, so results never depend on the number of threads.

Each range interns strings into its own hash tables (`scan.intern`); `assemble` then
decodes each distinct value once and maps every range's codes onto one set of `Interner`s in
first-appearance order, which is what the general path (`general.decode_events`) builds
too. The result is the same `Columns` the general path gives, except that the args stay in the
file (`arg_starts`): `scan.args.ArgsCompaction` later moves them, in place, into the blob
(a mapped file's are copied out into a blob of their own, from the end of the scan on).

A file that ends inside the events array keeps its complete events, with the general path's
warning. `scan` returns None whenever the file needs the general path (odd values, invalid
JSON); the caller then parses it there.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import msgspec
import numpy as np

from perfview import readahead
from perfview.core.analysis import ancestors, nesting
from perfview.core.model.errors import truncated_after
from perfview.loaders import huge_pages
from perfview.loaders.limits import rows_on_disk
from perfview.loaders.trace import idmerge
from perfview.loaders.trace import kernels as build_kernels
from perfview.loaders.trace.assemble import ARG_PC, assemble
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.read import Text
from perfview.loaders.trace.scan import args as scan_args
from perfview.loaders.trace.scan import arrival
from perfview.loaders.trace.scan import events as ts
from perfview.loaders.trace.scan import top as top_level
from perfview.loaders.trace.scan.batches import (
    AHEAD_ROWS,
    Batch,
    Room,
    new_batch,
    reserved_batch,
    to_columns,
)
from perfview.loaders.trace.scan.intern import Tables, intern_spans, rehash

if TYPE_CHECKING:  # not at run time: the scanner's imports stay free of pandas
    from perfview.core.model.progress import Progress
    from perfview.streamed import Arriving

MIN_RANGE_BYTES = 16 << 20  # a range smaller than this is not worth a thread
# the scan stops every WINDOW bytes of the file (at the next event) and gives the mapped
# file's pages read so far back (`_Range.give_back`): the file is read window by window,
# never resident whole (a 10 GB trace on a 24 GB machine). A multiple of the page size.
WINDOW = 32 << 20
MAX_THREADS = 8
MAX_MEMBERS = 256  # top-level keys; more is not a trace we know (general path)
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
# the scanner's rows that no column of `assemble` keeps: read by it and by the args' spans
UNKEPT_ROWS = ((1, ts.I_START), (1, ts.I_END), (1, ts.I_ARGS), (1, ts.I_ARGLEN), (2, ts.U_PC))
# the scanner's rows that `assemble` makes columns of, by column name: the build lets each
# go once read (`Scanned.let_go`)
COLUMN_ROWS = {
    "pid": (0, ts.C_PID), "tid": (0, ts.C_TID), "shape": (0, ts.C_DIMS), "fid": (0, ts.C_ID),
    "ts": (1, ts.I_TS), "dur": (1, ts.I_DUR), "corr": (1, ts.I_CORR), "ext": (1, ts.I_EXT),
    "dur_ok": (2, ts.U_DUROK), "bp_e": (2, ts.U_BPE), "scope": (2, ts.U_SCOPE),
}  # fmt: skip
_SCAN_EVENTS: Any = ts.scan_events  # numba's Dispatcher type hides the real signature
_WS = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


@dataclass
class _Range:
    """One thread's share: where it starts, where it must stop, and what it produced."""

    start: int
    first: bool  # start is the array's '[' (else an event's '{')
    stop_at: int  # -1: run to the end of the array
    tables: Tables = field(default_factory=Tables)
    batches: list[Batch] = field(default_factory=list)
    status: int = -1
    pos: int = 0
    done_bytes: int = 0
    error: BaseException | None = None
    room: Room | None = None  # its reserved batch, while that holds all its rows
    window: int = 0  # stop every `window` bytes (0: never; `WINDOW`)
    text: Text | None = None  # the file map whose read pages go back at each stop, or None
    given_back: int = 0  # where the pages given back end
    arriving: Arriving | None = None  # the file still downloading into `buf` (`streamed`)

    def run(self, buf: np.ndarray, stop: threading.Event) -> None:
        try:
            self._run(buf, stop)
        except BaseException as exc:
            self.error = exc

    def _run(self, buf: np.ndarray, stop: threading.Event) -> None:
        pos, first = self.start, self.first
        # the first range reserves room for all its rows (`to_columns` then copies only the
        # others'); a range run again after a failed guess (batches already) takes batches
        reserved = (
            reserved_batch(len(buf) - pos, on_disk=self.window > 0 and rows_on_disk(len(buf)))
            if self.first and not self.batches
            else None
        )
        codes, i64, u8 = reserved.writable() if reserved is not None else new_batch()
        self.room = reserved
        m = 0
        while not stop.is_set():
            until = self._until(pos)
            arriving = self.arriving
            have = arriving.have if arriving is not None else len(buf)
            partial = arriving is not None and have < arriving.size
            view = buf[:have] if partial else buf
            status, pos, m = _SCAN_EVENTS(
                view, pos, first, until, *self.tables.args(), codes, i64, u8, m
            )
            if partial and status in (ts.TRUNC, ts.ODD):  # the end of what arrived, so far
                assert arriving is not None
                status, pos, first = arrival.resume(buf, have, arriving, status, pos, first)
                if status == arrival.MORE:
                    self.done_bytes = pos - self.start
                    continue
            first = False
            self.done_bytes = pos - self.start
            if status == ts.STOPPED and until != self.stop_at:  # a window's end: read on
                self.give_back(pos)
                if self.room is not None:  # a room on disk: its rows to its file
                    self.room.give_back_rows(m)
                continue
            room = self.room
            more = status == ts.FULL and room is not None and room.back(m + AHEAD_ROWS)
            if more and room is not None and room.backed > m:  # on disk: blocks for more rows
                codes, i64, u8 = room.writable()
                continue
            if status == ts.FULL:
                self.batches.append((codes, i64, u8))
                codes, i64, u8 = new_batch()
                if room is not None:
                    room.close_file()
                self.room = None
                m = 0
            elif status == ts.GROW:
                self.tables.grow()
            else:
                break
        else:
            status = ts.ODD  # cancelled: the caller raises
        self.batches.append((codes[:, :m], i64[:, :m], u8[:, :m]))
        self.status, self.pos = status, pos

    def _until(self, pos: int) -> int:
        """Where this call stops: the end of the window after `pos`, or the range's own
        stop when that comes first. The scanner stops at the first event starting there or
        later, so a window's end inside an event, a string or an escape changes nothing."""
        if self.window <= 0:
            return self.stop_at
        # windows from the range's start, not from `pos`: the scanner also returns to
        # grow its tables or change batches, and a window counted from there never ended
        end = self.start + ((pos - self.start) // self.window + 1) * self.window
        return end if self.stop_at < 0 or end < self.stop_at else self.stop_at

    def give_back(self, pos: int) -> None:
        """Give the file's pages this range read before `pos` back to the system (they stay
        in the page cache: what reads them again, the args' gather, the strings' decode,
        maps them again from there). Only for a private map of an unchanged file
        (`readahead.is_file_map`), whose pages are the file's, never for a copy. The first
        page is never given back: the scan may have blanked a byte-order mark on it."""
        if self.text is None:
            return
        page = mmap.PAGESIZE
        first = max(self.given_back, -(-max(self.start, page) // page) * page)
        last = pos // page * page
        if last - first < self.window:
            return
        with contextlib.suppress(OSError, ValueError):  # they stay: only memory
            readahead.advise(cast(mmap.mmap, self.text), mmap.MADV_DONTNEED, first, last)
        self.given_back = last

    def rows(self) -> int:
        return sum(b[0].shape[1] for b in self.batches)

    def take_batches(self) -> list[Batch]:
        """The batches, handed over: `to_columns` frees each once it is copied."""
        batches, self.batches = self.batches, []
        return batches


@dataclass
class Scanned:
    """What `scan` hands back: the columns and the decoded top-level members."""

    cols: Columns
    top: dict[str, msgspec.Raw]
    warnings: list[str] = field(default_factory=list)  # a truncated file
    args: scan_args.ArgsCompaction | None = None  # a mapped file's args, copied out early
    # gives back the scanner's rows `assemble` does not keep (`UNKEPT_ROWS`), once the args'
    # spans were read from them (`args.lengths()`); None when they are arrays of their own
    release_unkept: Callable[[], None] | None = None
    # gives back every page of the columns where they lie in a file (`Room.on_disk`): called
    # between the load's stages, so the columns are never all resident; None in memory
    give_back: Callable[[], None] | None = None
    # gives back the pages of the named columns (`COLUMN_ROWS`) once the build has read them
    # for the last time: in memory they read as zeros after; None when they are arrays of
    # their own (freed with their last reference)
    let_go: Callable[[Sequence[str]], None] | None = None


huge_pages.no_advice()  # see there: compaction stalls on a 1 GB load


def warm(*, scan_only: bool = False) -> None:
    """Load the compiled code now (numba's first call initialises its JIT, ~0.3 s): run on a
    thread while the file is read, so the two overlap. `scan_only`: just what the scan
    itself runs (the CLI's scan-ahead, which waits for it; the loader's warm-up thread
    loads the rest during the scan, ~45 ms)."""
    tiny = np.frombuffer(bytearray(b'{"traceEvents":[{"ph":"X","name":"a","ts":1}]}  '), np.uint8)
    out = np.zeros((4, 4), dtype=np.int64)
    _status, pos, _count = top_level.members(tiny, 0, True, out)
    codes, i64, u8 = new_batch()
    tables = Tables()
    _SCAN_EVENTS(tiny, pos, True, -1, *tables.args(), codes, i64, u8, 0)
    tables.grow()  # rehash
    if scan_only:
        return
    one = np.zeros(1, dtype=np.int64)
    intern_spans(tiny, one, one, True)
    scan_args.int_args(tiny, one, one, np.zeros((1, 6), np.int64), np.zeros((1, 6), np.bool_))
    scan_args.compact(np.frombuffer(bytearray(4), np.uint8), one, one)
    scan_args.gather(tiny, np.zeros(4, np.uint8), one, one, 0)
    nesting.warm()
    ancestors.warm()
    idmerge.warm()
    build_kernels.warm()


def compiled() -> bool:
    """True when the scanner's compiled code is on disk already: loading it then takes ~0.4 s,
    mostly outside the GIL, while compiling it takes ~20 s of CPU, mostly holding the GIL."""
    try:
        kernels: tuple[Any, ...] = (
            ts.scan_events, top_level.members, rehash, intern_spans, scan_args.int_args,
            scan_args.compact, scan_args.gather, *nesting.kernels(), *ancestors.kernels(),
            *idmerge.kernels(), *build_kernels.kernels(),
        )  # fmt: skip
        return all(os.path.exists(k._cache._cache_file._index_path) for k in kernels)
    except Exception:  # numba's cache layout is not an API: assume it is there
        return True


def threads_for(nbytes: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS, nbytes // MIN_RANGE_BYTES))


def scan(
    buf: Text, progress: Progress, lo: float, hi: float, threads: int | None = None,
    window: int = WINDOW, arriving: Arriving | None = None,
) -> Scanned | None:  # fmt: skip
    """Columns of every event in `buf` (the whole file), or None for the general path.
    `window`: the bytes read between stops (`WINDOW`; tests make it tiny: the columns
    never depend on it). `arriving`: the download still filling `buf` (`perfview.streamed`):
    the events are scanned on one thread as they arrive (`scan.arrival`), and the rest once
    the file is whole."""
    if arriving is not None:
        arriving.wait(len(_BOM))
    if buf[:3] == _BOM:
        buf[:3] = b"   "
    arr = np.frombuffer(buf, dtype=np.uint8)
    i = 0
    n = len(buf)
    while i < n and buf[i] in _WS:
        i += 1
    if i >= n:
        return None
    out = np.zeros((MAX_MEMBERS, 4), dtype=np.int64)
    members: list[tuple[int, int, int, int]] = []
    if buf[i] == ord("{"):
        status, pos, count = arrival.members(arr, i, out, arriving)
        members += [tuple(r) for r in out[:count].tolist()]  # type: ignore[misc]
        if status != top_level.TOP_FOUND:
            return None
        start = pos
    elif buf[i] == ord("["):
        start = i
    else:
        return None
    if arriving is None:
        ranges = _split(buf, start, threads or threads_for(n - start))
    else:  # one range: the byte ranges of other threads have not arrived yet
        ranges = [_Range(start, True, -1, arriving=arriving)]
    for r in ranges:
        r.window = window
        r.text = buf if readahead.is_file_map(buf) and hasattr(mmap, "MADV_DONTNEED") else None
    end = _run(arr, ranges, progress, lo, hi)
    if arriving is not None:
        arriving.whole()  # what follows the events, and the args, read the whole file
    if end is None:
        return None
    accepted, end_pos, status = end
    warnings: list[str] = []
    if status == ts.TRUNC:
        warning = _truncation(buf, accepted, end_pos)
        if warning is None:
            return None
        warnings.append(warning)
    elif buf[i] == ord("{"):
        status, pos, count = top_level.members(arr, end_pos, False, out)
        members += [tuple(r) for r in out[:count].tolist()]  # type: ignore[misc]
        if status != top_level.TOP_DONE:
            return None
    elif bytes(buf[end_pos:]).strip(_WS):
        return None
    del arr
    bounds = np.cumsum([0] + [r.rows() for r in accepted])
    room, accepted[0].room = accepted[0].room, None
    columns = to_columns([r.take_batches() for r in accepted], room)
    _codes, i64, u8 = columns
    early = scan_args.gather_early(buf, i64[ts.I_ARGS], i64[ts.I_ARGLEN], u8[ts.U_PC], ARG_PC)
    cols = assemble(
        buf, [r.tables for r in accepted], bounds, columns,
        early.spans_found if early is not None else None,
    )  # fmt: skip
    if cols is None:
        if early is not None:
            early.cancel()  # the general path copies the map: the gather must let go first
        return None
    top = {
        bytes(buf[ks:ke]).decode("utf-8", "replace"): msgspec.Raw(bytes(buf[vs:ve]))
        for ks, ke, vs, ve in members
    }
    release = give_back = let_go = None
    if room is not None and room.used:
        release = functools.partial(room.release, UNKEPT_ROWS, int(bounds[-1]))
        let_go = functools.partial(_let_go, room, int(bounds[-1]))
        if room.on_disk:
            give_back = functools.partial(room.give_back, int(bounds[-1]))
            give_back()  # what assemble wrote (the codes, in place)
    return Scanned(cols, top, warnings, early, release, give_back, let_go)


def _let_go(room: Room, count: int, names: Sequence[str]) -> None:
    """`Scanned.let_go`: the pages of the named columns' rows of `room` given back."""
    room.release([COLUMN_ROWS[name] for name in names if name in COLUMN_ROWS], count)


def _truncation(buf: Text, ranges: list[_Range], stop: int) -> str | None:
    """The warning for a file that ends inside the events array (as the general path words
    it), or None when not one event is complete (the general path reports that). `stop`:
    where the scanner stopped, at the start of the incomplete event or at the end."""
    n = sum(r.rows() for r in ranges)
    if n == 0:
        return None
    tail = bytes(buf[stop:]).strip(_WS + b",")
    if not tail:
        return "the event array is not closed (chrome://tracing accepts this)"
    return truncated_after(n)


def _split(buf: Text, start: int, threads: int) -> list[_Range]:
    """Ranges of the events array: the first from '[', the others from a guessed '{'."""
    starts = [start]
    length = len(buf) - start
    for k in range(1, threads):
        m = _BOUNDARY.search(buf, start + length * k // threads)
        if m is None:
            break
        guess = m.end() - 1
        if guess > starts[-1]:
            starts.append(guess)
    stops = [*starts[1:], -1]
    return [_Range(s, k == 0, e) for k, (s, e) in enumerate(zip(starts, stops, strict=True))]


def _run(
    arr: np.ndarray, ranges: list[_Range], progress: Progress, lo: float, hi: float
) -> tuple[list[_Range], int, int] | None:
    """Scan every range (threads), then keep the chain of ranges whose guesses held.

    Returns the ranges, the position after the array and the last range's status: END, or
    TRUNC when the file ends inside the array (the events read so far are all complete)."""
    stop = threading.Event()
    workers = [
        threading.Thread(target=r.run, args=(arr, stop), name=f"perfview-scan-{k}", daemon=True)
        for k, r in enumerate(ranges[1:], start=1)
    ]
    for w in workers:
        w.start()
    total = max(len(arr) - ranges[0].start, 1)
    try:
        _run_first(arr, ranges[0], stop, lambda: _report(ranges, total, progress, lo, hi))
        for w in workers:
            while w.is_alive():
                w.join(0.05)
                _report(ranges, total, progress, lo, hi)
    except BaseException:
        stop.set()
        for w in workers:
            w.join()
        raise
    for r in ranges:
        if r.error is not None:
            raise r.error
    accepted = [ranges[0]]
    for r in ranges[1:]:
        last = accepted[-1]
        if last.status == ts.STOPPED and last.pos == r.start:
            accepted.append(r)
            continue
        if last.status == ts.STOPPED:  # the guess was inside a value: carry on to the end
            last.stop_at = -1
            last.start, last.first = last.pos, False
            last.run(arr, stop)
            if last.error is not None:
                raise last.error
        break
    last = accepted[-1]
    if any(r.status != ts.STOPPED for r in accepted[:-1]) or last.status not in (ts.END, ts.TRUNC):
        return None
    return accepted, last.pos, last.status


def _run_first(arr: np.ndarray, r: _Range, stop: threading.Event, tick: Callable[[], None]) -> None:
    """The first range runs on the calling thread, reporting progress between batches."""
    done = threading.Event()

    def work() -> None:
        r.run(arr, stop)
        done.set()

    t = threading.Thread(target=work, name="perfview-scan-0", daemon=True)
    t.start()
    try:
        tick()  # at once, so a Cancel pressed before the scan started stops it here
        while not done.wait(0.05):
            tick()
    finally:
        if not done.is_set():
            stop.set()
            if r.arriving is not None:  # waiting for the network: not for a cancelled load
                r.arriving.wake()
            t.join()
    t.join()


def _report(ranges: list[_Range], total: int, progress: Progress, lo: float, hi: float) -> None:
    done = sum(max(r.done_bytes, 0) for r in ranges)
    progress(lo + (hi - lo) * min(done / total, 1.0), f"scanned {done / 1e6:,.0f} MB")


__all__ = ["Scanned", "compiled", "scan", "threads_for", "warm"]
