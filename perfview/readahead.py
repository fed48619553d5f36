"""Read (map) a big trace while the interpreter is still importing, and start on it (stdlib only).

`perfview summary BIG.json` spends its first ~0.7 s importing pandas, numba and the loaders,
holding the GIL on one core. The CLI starts the read here first (`start`): a plain file
written more than a few seconds ago is mapped copy-on-write (`map_file`: no copy, 0.5 s of CPU
per GB saved), anything else is read into an anonymous map. On the same thread
the CLI's follow-up (`then`: it scans the file) runs while the main thread finishes its
imports. The trace loader takes the map (`take`) instead of reading again, when it is the
same unchanged file, and what the follow-up made (`followed`).

This module must stay import-cheap (it runs before everything else): the standard library
only. It also holds the reading primitives the trace loader's `read` module uses, so both
read the same way.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

PAD = 8  # spare bytes after the content (the trace loader's `read.PAD`)
READ_PIECE = 64 << 20
MADV_POPULATE_WRITE = 23  # Linux 5.14+; Python 3.11's mmap does not name it
MIN_BYTES = 16_000_000  # the trace loader's SCANNER_MIN_BYTES: smaller files are read later
GZIP_MAGIC = b"\x1f\x8b"
ENV = "PERFVIEW_READAHEAD"
_TRACE_KEY = re.compile(rb'"(ph|ts|traceEvents)"\s*:')  # as the trace loader's sniff

Key = tuple[str, int, int, int]  # (resolved path, size, mtime ns, inode)


def anonymous_map(size: int) -> mmap.mmap:
    """A private anonymous memory map. Private, not Python's default shared: shrinking a
    shared anonymous map unmaps its tail but the pages stay allocated (shmem) until it is
    closed, so the memory a shrink should return would stay in use."""
    try:
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    except (AttributeError, TypeError):  # pragma: no cover - Windows: no flags
        return mmap.mmap(-1, size)


POPULATE_STEP = 4 << 20  # bytes mapped per madvise call (a multiple of the page size)


_MMAP = mmap.mmap  # the type, taken once: tests replace `mmap.mmap` to watch its calls


def is_read_only_map(value: object) -> bool:
    """A map nothing can write (a file's pages, `DiskMap.sealed`, the cache's blobs): its
    pages can be dropped from the process at any time and read again from the file."""
    return isinstance(value, _MMAP) and memoryview(value).readonly


def give_back_read(value: mmap.mmap, start: int, end: int) -> None:
    """Drop the pages of a read-only map between `start` and `end` (rounded inwards to
    pages) once they were read: reading a 3 GB blob whole must not keep it resident."""
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = end // mmap.PAGESIZE * mmap.PAGESIZE
    if last > first and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError, ValueError):
            advise(value, mmap.MADV_DONTNEED, first, last)


def drop_unwritten(mm: mmap.mmap, size: int) -> None:
    """Drop the first `size` bytes' pages of a `map_file` map that nothing has written yet
    (MADV_DONTNEED; Linux): they are the file's pages still, and are read again from the
    page cache where they are touched next. The cache's columns are read whole once to check
    them: kept resident, a reopened 10 GB trace's columns held 2.7 GB of the window's RSS
    though its first page reads a part of them. One call without the GIL (ctypes): dropping
    the page table entries of clean file pages frees nothing to zero. Never call it on a map
    that may have been written: its private copies would be lost."""
    last = size // mmap.PAGESIZE * mmap.PAGESIZE
    if last <= 0 or not sys.platform.startswith("linux") or not is_file_map(mm):
        return
    with contextlib.suppress(OSError, AttributeError, TypeError, ValueError):
        _libc().madvise(_address(mm), last, mmap.MADV_DONTNEED)


@functools.cache
def _libc() -> Any:
    """The C library with the signatures of the calls made on maps here (`map_file`'s mmap,
    `drop_unwritten`'s madvise): ctypes calls leave the GIL, `mmap.madvise` holds it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.c_long,
    ]  # fmt: skip
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


def _address(mm: mmap.mmap) -> int:
    """Where `mm` starts in memory (its buffer exported for a moment only: the map can be
    closed and resized again)."""
    import ctypes

    anchor = ctypes.c_char.from_buffer(mm)
    addr = ctypes.addressof(anchor)
    del anchor
    return addr


def advise(mm: mmap.mmap, advice: int, start: int, end: int) -> None:
    """madvise(advice) over mm[start:end] (`start` on a page boundary) in POPULATE_STEP
    calls, not one: Python's `mmap.madvise` holds the GIL, and 64 MB took 20-60 ms, a stall
    of the window's GUI thread (100+ ms on a busy machine); 4 MB takes 1-4 ms. The system's
    refusal (an older kernel without the advice) is raised to the caller."""
    for at in range(start, end, POPULATE_STEP):
        mm.madvise(advice, at, min(POPULATE_STEP, end - at))


def populator(mm: mmap.mmap) -> Callable[[int, int], object] | None:
    """Map a piece's pages before it is read into (Linux): faulting them in one by one from
    the copy cost 0.55 s of system time for 1 GB here, this 0.41-0.45 s (`advise` steps)."""
    if not sys.platform.startswith("linux") or not hasattr(mm, "madvise"):
        return None

    def populate(start: int, length: int) -> None:
        advise(mm, MADV_POPULATE_WRITE, start, start + length)

    return populate


MAP_FIXED = 0x10  # POSIX's value on Linux
FRESH_S = 3.0  # a file changed this recently may still be written: copied, never mapped
_mapped_files: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


def map_file(fd: int, size: int, *, complete: bool = False) -> mmap.mmap | None:
    """A plain file's `size` bytes mapped copy-on-write, in a map of size + PAD, or None
    where that cannot be done (not Linux, a file changed in the last FRESH_S seconds unless
    the caller knows it `complete`, or the system refused): the caller then reads a copy.

    Why: copying 1 GB from the page cache into fresh anonymous pages cost 0.50 s of CPU here
    (244k page faults, every page zeroed then overwritten); mapping the cached pages costs
    next to nothing, and reading them ~15k faults. The map is private, so the scanner's
    in-place edits and the args compaction copy only the pages they write, and the file is
    never written. The PAD spare bytes after the content lie past the file's end, where no
    page of it may be mapped: the file is mapped over the start of an anonymous map of
    size + PAD (MAP_FIXED), whose own pages hold the PAD where the file's last page has no
    room for it.

    The cost of a map: a file cut shorter while it is mapped makes reading its lost pages
    a bus error, so a file changed in the last FRESH_S seconds (being written) is copied;
    the loader copies what it keeps out of the map before the load returns.
    """
    if not sys.platform.startswith("linux") or size <= 0:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size != size or (not complete and time.time() - st.st_mtime < FRESH_S):
            return None
        mm = anonymous_map(size + PAD)
    except (OSError, ValueError):
        return None
    try:
        addr = _address(mm)
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        got = _libc().mmap(addr, size, prot, mmap.MAP_PRIVATE | MAP_FIXED, fd, 0)
    except (OSError, AttributeError, TypeError, ValueError):
        got = None
    if got != addr or os.fstat(fd).st_size != size:  # refused, or cut meanwhile
        mm.close()  # unmaps the whole range, whatever is mapped in it
        return None
    _mapped_files.add(mm)
    # not populated (MADV_POPULATE_READ, 22): the reader's own faults map the pages, 16 at a
    # time and on every thread that reads; populating first was ~0.05 s slower at 1 GB,
    # and held the CLI's scan-ahead back by ~0.1 s
    return mm


def is_file_map(mm: object) -> bool:
    """True for a map made by `map_file` (its pages may still be the file's)."""
    return isinstance(mm, mmap.mmap) and mm in _mapped_files


def read_parallel(
    fd: int, view: memoryview, size: int, populate: Callable[[int, int], object] | None = None,
    piece: int = READ_PIECE, workers: int = 0,
) -> int:  # fmt: skip
    """Read `size` bytes of `fd` into `view` with a thread per core (each its own pieces):
    copying from the page cache and faulting the map's pages in costs CPU, and two cores
    halve it (0.8 s -> 0.4 s for 1 GB here). `populate(start, length)` maps a piece's pages
    first (pieces start at page boundaries); `workers`: threads (0: a thread per core, at
    most 4). Returns the bytes read (less when it shrank)."""
    pieces = [(a, min(a + piece, size)) for a in range(0, size, piece)]
    got = [0] * len(pieces)

    def read(k: int) -> None:
        a, b = pieces[k]
        if populate is not None:
            with contextlib.suppress(OSError, ValueError):  # an older kernel: fault as read
                populate(a, b - a)
        off = a
        while off < b:
            n = os.preadv(fd, [view[off:b]], off)
            if n <= 0:
                break
            off += n
        got[k] = off - a

    if workers <= 0:
        workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 4)
    if workers < 2 or len(pieces) < 2 or not hasattr(os, "preadv"):
        for k in range(len(pieces)):
            read(k)
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="perfview-read") as pool:
            list(pool.map(read, range(len(pieces))))
    total = 0
    for (a, b), n in zip(pieces, got, strict=True):
        total += n
        if n < b - a:  # a short piece: the file ends there
            break
    return total


def read_plain(
    fd: int, size: int, piece: int = READ_PIECE, workers: int = 0
) -> tuple[mmap.mmap, int]:
    """A plain file's first `size` bytes in a new map of size + PAD, and how many were read
    (`piece`: bytes per reader task, a multiple of the page size; `workers` as in
    `read_parallel`)."""
    mm = anonymous_map(size + PAD)
    view = memoryview(mm)
    try:
        got = read_parallel(fd, view, size, populator(mm), piece, workers)
    finally:
        view.release()
    return mm, got


# ------------------------------------------------------------------------ the CLI's read-ahead


class _Ahead:
    def __init__(self, key: Key, then: Callable[[mmap.mmap], object] | None) -> None:
        self.key = key
        self.then = then
        self.result: tuple[mmap.mmap, int] | None = None
        self.read = threading.Event()
        self.followed: tuple[bool, object] = (False, None)  # (ran, what `then` returned)
        self.thread = threading.Thread(target=self._run, name="perfview-readahead", daemon=True)

    def _run(self) -> None:
        try:
            self._read()
        finally:
            self.read.set()
        if self.then is not None and self.result is not None:
            try:
                self.followed = (True, self.then(self.result[0]))
            except Exception:  # only a head start: the loader does the work itself then
                self.followed = (False, None)

    def _read(self) -> None:
        # any failure: the loader reads the file itself and meets the error there
        with contextlib.suppress(OSError, ValueError, MemoryError), open(self.key[0], "rb") as fh:
            # one reader: the imports it runs beside hold the GIL on the other core, and
            # take about as long (~0.7 s) as one thread needs for 1 GB
            mapped = map_file(fh.fileno(), self.key[1])
            if mapped is not None:
                self.result = (mapped, self.key[1])
            else:
                self.result = read_plain(fh.fileno(), self.key[1], workers=1)
            mm, got = self.result
            mm[got : got + PAD] = b" " * PAD  # as the loader's `read_mapped` leaves it


_ahead: _Ahead | None = None
_lock = threading.Lock()


def file_key(path: str | os.PathLike[str]) -> Key | None:
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    return real, st.st_size, st.st_mtime_ns, st.st_ino


def worth_it(path: str) -> bool:
    """A plain (not gzip) file of MIN_BYTES or more whose head looks like trace JSON: what
    the loader would read with `read_plain`. PERFVIEW_READAHEAD=0 turns the read-ahead off
    (to compare)."""
    if os.environ.get(ENV) == "0":
        return False
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < MIN_BYTES:
            return False
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)  # as the loaders' sniffing (`base.HEAD_BYTES`)
    except OSError:
        return False
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return text[:1] in (b"{", b"[") and _TRACE_KEY.search(text) is not None


def cache_root() -> str:
    """Where the parsed-trace cache keeps its entries: `perfview.store.parsed_columns.cache_dir`
    (which imports pandas), repeated with the standard library; a test checks they agree."""
    env = os.environ.get("PERFVIEW_CACHE_DIR")
    if env:
        return env
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        base = os.path.join(home, "Library", "Caches")
    elif sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(base, "perfview", "traces")


def maybe_cached(path: str) -> bool:
    """False only when the parsed-trace cache surely has no entry for `path`: it is off
    (PERFVIEW_CACHE_MAX_MB=0), or none of its entries was written after the file last
    changed (an entry is written after the file is parsed). Reading ahead a file the cache
    then serves would cost a core and the file's size in memory for nothing."""
    try:
        if float(os.environ.get("PERFVIEW_CACHE_MAX_MB", "2048")) <= 0:
            return False
    except ValueError:
        pass
    try:
        changed = os.stat(path).st_mtime_ns
        with os.scandir(cache_root()) as entries:
            for entry in entries:
                manifest = os.path.join(entry.path, "manifest.json")
                with contextlib.suppress(OSError):
                    if os.stat(manifest).st_mtime_ns >= changed:
                        return True
    except FileNotFoundError:
        return False  # no cache folder yet
    except OSError:
        return True
    return False


def start(path: str, then: Callable[[mmap.mmap], object] | None = None) -> bool:
    """Start reading `path` on a thread (at most one read-ahead per process); True when it
    started. The caller decides it is worth it (`worth_it`, and no cached copy). `then(map)`
    runs on that thread after the read, and the loader that takes the map gets what it
    returned (`followed`): the CLI scans the file there while its imports finish."""
    global _ahead
    key = file_key(path)
    with _lock:
        if key is None or _ahead is not None:
            return False
        _ahead = _Ahead(key, then)
        _ahead.thread.start()
    return True


def discard() -> None:
    """Give up a read-ahead nobody took (the file was another format, or came from the
    cache): its map is freed once its thread ends."""
    global _ahead
    with _lock:
        _ahead = None


def take(path: str | os.PathLike[str]) -> tuple[mmap.mmap, int] | None:
    """The read-ahead's (map, bytes read) when it read this same, unchanged file (waiting for
    it to finish), else None; the read-ahead is given up either way."""
    global _ahead
    with _lock:
        ahead, _ahead = _ahead, None
    if ahead is None:
        return None
    ahead.read.wait()
    if ahead.result is None:
        return None
    if file_key(path) != ahead.key:  # another file, or it changed meanwhile: read it again
        ahead.thread.join()  # its follow-up reads the map too
        with contextlib.suppress(BufferError):
            ahead.result[0].close()
        return None
    if ahead.then is not None:
        with _lock:
            _following[id(ahead.result[0])] = ahead
    return ahead.result


_following: dict[int, _Ahead] = {}  # taken maps whose follow-up may still run, by id


def followed(mm: object) -> tuple[bool, object]:
    """For a map `take` handed out: (True, what `then` returned) once it has run, waiting
    for it; (False, None) for any other map, or when `then` failed (the caller then does
    the work itself). Asked once per map."""
    with _lock:
        ahead = _following.pop(id(mm), None)
    if ahead is None or ahead.result is None or ahead.result[0] is not mm:
        return False, None
    ahead.thread.join()
    return ahead.followed


__all__ = [
    "PAD",
    "advise",
    "anonymous_map",
    "cache_root",
    "discard",
    "file_key",
    "followed",
    "give_back_read",
    "is_file_map",
    "is_read_only_map",
    "map_file",
    "maybe_cached",
    "populator",
    "read_parallel",
    "read_plain",
    "start",
    "take",
    "worth_it",
]
