"""Verified, durable artifacts: a folder of raw columns published with a manifest of checksums.

Whatever perfview writes for itself and reads back later (the parsed-trace cache now;
workspace files and per-rank columns later) goes through here, because a file on disk can be
damaged (a bad sector, a bit flip, a crash midway, a hand edit, a half-synced copy) and a damaged
number must never be drawn as if it were real. So:

* Writing (`write_folder`): every part goes into a temp folder next to the destination, the
  manifest records each part's dtype, length and xxHash3-128 of its bytes; file contents (all
  at once, see `_sync_files`) and the folder are fsync'ed, then one rename publishes the folder
  and the parent is fsync'ed. A crash at any point leaves the previous folder, or none, or the
  new one complete, plus perhaps a temp folder that `temp_folders.sweep` removes. Single
  files perfview writes for the user (exports, recordings, run records) use
  `perfview.core.atomic`, the same temp + fsync + rename + folder fsync; `fsync_dir` is
  shared from there.
* Reading (`open_folder`): the manifest carries a checksum of its own text; `Folder.array` and
  `Folder.read` check length and checksums of each part before handing it out and raise
  `Damaged` naming the part. xxHash3 runs at ~28 GB/s here (`scripts/bench/bench_hash.py`: 8x crc32,
  30x blake2b) and releases the GIL, so parts are checked synchronously, on several threads
  (a big part in 32 MB blocks): no lazy scheme is needed, and nothing unchecked is handed out
  but what this session's own helper process has just written and checksummed (`vouch`).
* Temp folders are locked (`flock`) by their writer while it lives: `temp_folders.sweep`
  removes those whose writer died (or, where there is no flock, those older than an hour)
  and leaves live ones.

Columns are raw little-endian arrays, not `.npy`: the manifest already holds dtype and length,
and one less header format to trust.
"""

from __future__ import annotations

import collections
import functools
import json
import mmap
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import xxhash

from perfview import disk_files, readahead
from perfview.core.atomic import fsync_dir
from perfview.store.temp_folders import TEMP_PREFIX, locked_temp

FORMAT = 1  # the layout of this module's folders; an older or newer one is not read
MANIFEST = "manifest.json"
MAGIC = b"perfview-artifact"
CHUNK = 64 * 1024 * 1024  # writes go out in chunks (a checkpoint after each: crash tests)
BLOCK = 32 * 1024 * 1024  # one checksum per block (see `block_digests`)


# Called with a step name around every write; a no-op except in crash tests, which make it
# kill the process at a chosen step to show that no step leaves a readable half entry.
def _no_checkpoint(step: str) -> None:
    return None


checkpoint: Callable[[str], None] = _no_checkpoint


class Damaged(Exception):
    """A part is missing, truncated, of another layout, or its checksum differs."""

    def __init__(self, part: str, why: str) -> None:
        super().__init__(f"{part}: {why}")
        self.part = part
        self.why = why


def digest(data: Any) -> str:
    """xxHash3-128 of some bytes, as hex (it releases the GIL: blocks hash in parallel)."""
    return xxhash.xxh3_128_hexdigest(data)


def block_digests(data: memoryview) -> list[str]:
    """The checksums stored for a part: one per BLOCK bytes (the size is stored with them), so
    a big part (the args blob of a 1 GB trace is ~650 MB) is checked on several cores at once."""
    return [digest(data[i : i + BLOCK]) for i in range(0, max(len(data), 1), BLOCK)]


def _bytes_of(value: np.ndarray | bytes | bytearray | memoryview | mmap.mmap) -> memoryview:
    if isinstance(value, np.ndarray):
        value = np.ascontiguousarray(value)
        if value.dtype.byteorder == ">":
            value = value.astype(value.dtype.newbyteorder("<"))
        return _raw(value)
    return memoryview(value).cast("B")


def _raw(arr: np.ndarray) -> memoryview:
    """The bytes of a contiguous array, without a copy."""
    return memoryview(cast(Any, arr.reshape(-1).view(np.uint8)))


def _write_part(folder: Path, name: str, data: memoryview) -> None:
    checkpoint(f"open {name}")
    with open(folder / name, "wb") as fh:
        for start in range(0, len(data), CHUNK):
            fh.write(data[start : start + CHUNK])
            checkpoint(f"wrote {name}@{start}")
    checkpoint(f"closed {name}")


def _write_blob(folder: Path, name: str, blob: Any, data: memoryview) -> list[str]:
    """`_write_part` then `block_digests`; a read-only map's pages (a trace's args kept on
    disk, `disk_files.DiskMap`) are given back after each chunk written and each block
    hashed, so storing a 10 GB trace's 3 GB of args never holds them in memory. A blob whose
    file has no name yet (`disk_files.SealedFile`) is given the part's name instead of being
    copied: 3.0 GB less written to disk when a 10 GB trace is stored."""
    if not readahead.is_read_only_map(blob):
        _write_part(folder, name, data)
        return block_digests(data)
    if isinstance(blob, disk_files.SealedFile) and blob.link_to(folder / name):
        checkpoint(f"linked {name}")  # the blob's own file, named: no copy of its bytes
    else:
        checkpoint(f"open {name}")
        with open(folder / name, "wb") as fh:
            for start in range(0, len(data), CHUNK):
                fh.write(data[start : start + CHUNK])
                readahead.give_back_read(blob, start, min(start + CHUNK, len(data)))
                checkpoint(f"wrote {name}@{start}")
        checkpoint(f"closed {name}")
    digests = []
    for start in range(0, max(len(data), 1), BLOCK):
        digests.append(digest(data[start : start + BLOCK]))
        readahead.give_back_read(blob, start, min(start + BLOCK, len(data)))
    return digests


def _sync_files(paths: list[Path]) -> None:
    """fsync every file at once: sequentially, each fsync waits for its own journal commit
    (~5 ms here, 0.35 s for an entry's ~50 files); concurrent ones share commits (~50 ms)."""

    def sync(path: Path) -> None:
        with open(path, "rb+") as fh:
            os.fsync(fh.fileno())

    run_parallel([functools.partial(sync, path) for path in paths], 16)


def run_parallel(tasks: list[Callable[[], Any]], workers: int) -> list[Any]:
    """Run `tasks` on up to `workers` threads; their results in order, or the first error
    (in task order) raised once all have ended.

    Plain threads, not concurrent.futures: the CLI's cache write (`cache.put_later`) often
    finishes while the interpreter exits, and an executor refuses new work once exit began
    ("cannot schedule new futures after interpreter shutdown"); plain threads still start."""
    results: list[Any] = [None] * len(tasks)
    errors: list[BaseException | None] = [None] * len(tasks)
    order = iter(range(len(tasks)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                i = next(order, None)
            if i is None:
                return
            try:
                results[i] = tasks[i]()
            except BaseException as exc:  # handed to the caller below
                errors[i] = exc

    threads = [
        threading.Thread(target=worker, name="perfview-artifacts", daemon=True)
        for _ in range(max(1, min(workers, len(tasks))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results


def write_folder(
    dest: Path,
    arrays: Mapping[str, np.ndarray],
    blobs: Mapping[str, Any],
    meta: Mapping[str, Any],
) -> Path:
    """Publish `dest` atomically and durably: parts (raw arrays, raw byte blobs) and `meta`
    (JSON) with their checksums. An existing `dest` is replaced. Raises OSError (disk full,
    permissions), TypeError/ValueError (meta not JSON)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    parts: dict[str, dict[str, Any]] = {}
    with locked_temp(dest.parent) as tmp:
        for name, arr in arrays.items():
            data = _bytes_of(arr)
            _write_part(tmp, name, data)
            dtype = (
                np.dtype(arr.dtype).newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
            )
            parts[name] = {"dtype": dtype.str, "length": len(arr), "bytes": len(data)}
            parts[name].update(block=BLOCK, xxh3=block_digests(data))
        for name, blob in blobs.items():
            data = _bytes_of(blob)
            digests = _write_blob(tmp, name, blob, data)
            parts[name] = {"dtype": "blob", "length": len(data), "bytes": len(data)}
            parts[name].update(block=BLOCK, xxh3=digests)
        body = json.dumps({"format": FORMAT, "parts": parts, "meta": meta}).encode()
        manifest = digest(body)
        header = MAGIC + b" %d %s\n" % (FORMAT, manifest.encode())
        _write_part(tmp, MANIFEST, memoryview(header + body))
        _sync_files([tmp / name for name in [*parts, MANIFEST]])
        checkpoint("synced")
        fsync_dir(tmp)
        checkpoint("before publish")
        _publish(tmp, dest)
        checkpoint("published")
        fsync_dir(dest.parent)
    with _VOUCH_LOCK:
        _PUBLISHED.append((_where(dest), manifest))
    return dest


# Vouching: a helper process that parses a big trace for the window writes its entries
# (checksumming every block as it writes) and names them to the window (`published` there,
# `vouch` here); the window then opens exactly those manifests without checking their blocks
# again. The checks guard against what befalls a file between its writing and its reading
# (a bad sector, a crash midway, another build or a hand edit since); for an entry published
# seconds ago by this session's own helper they would re-read 2-4 GB at 10 GB while the tab
# is built, on the cores the GUI thread needs. An entry replaced since has another manifest
# and is checked as any other; a later session checks everything.
_VOUCH_LOCK = threading.Lock()
_PUBLISHED: collections.deque[tuple[str, str]] = collections.deque(maxlen=64)
_VOUCHED: dict[str, str] = {}


def _where(path: Path) -> str:
    return os.path.abspath(path)


def published() -> list[tuple[str, str]]:
    """(folder, manifest checksum) of the folders this process published lately, oldest first."""
    with _VOUCH_LOCK:
        return list(_PUBLISHED)


def vouch(folder: str, manifest_digest: str) -> None:
    """Open `folder` without checking its blocks while its manifest has `manifest_digest`
    (a helper process of this session wrote and checksummed it: see above)."""
    with _VOUCH_LOCK:
        _VOUCHED[_where(Path(folder))] = manifest_digest


def _publish(tmp: Path, dest: Path) -> None:
    """Rename `tmp` to `dest`; a folder cannot be renamed over a non-empty one, so an existing
    `dest` is first renamed aside (a temp name `sweep` knows) and removed afterwards."""
    old: Path | None = None
    if dest.exists():
        old = dest.parent / f"{TEMP_PREFIX}old-{dest.name}-{os.getpid()}-{time.monotonic_ns()}"
        os.replace(dest, old)
        checkpoint("moved old aside")
    os.replace(tmp, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@dataclass
class Folder:
    """A published folder whose manifest was read and checked; parts are checked when read."""

    path: Path
    meta: dict[str, Any]
    parts: dict[str, dict[str, Any]]
    verify: bool = True  # check the parts' blocks as they are read
    vouched: bool = False  # written and checksummed by this session's helper (`vouch`)

    def _info(self, name: str) -> dict[str, Any]:
        info = self.parts.get(name)
        if not isinstance(info, dict) or not isinstance(info.get("xxh3"), list):
            raise Damaged(name, "not in the manifest")
        return info

    def _check_block(self, name: str, data: memoryview, info: dict[str, Any], k: int) -> None:
        block = info["block"]
        if digest(data[k * block : (k + 1) * block]) != info["xxh3"][k]:
            raise Damaged(name, "checksum differs")

    def _check_mapped(self, name: str, view: Any, info: dict[str, Any], k: int) -> None:
        """A block of a mapped blob checked, then its pages given back: checking a 3 GB
        blob must not leave it resident (its args are read again when a slice is shown)."""
        self._check_block(name, memoryview(view), info, k)
        if readahead.is_read_only_map(view):
            block = info["block"]
            readahead.give_back_read(view, k * block, min((k + 1) * block, len(view)))

    def _blocks(self, data: memoryview, info: dict[str, Any], name: str) -> range:
        block = info.get("block")
        if not isinstance(block, int) or block <= 0:
            raise Damaged(name, "odd block size in the manifest")
        n = len(range(0, max(len(data), 1), block))
        if n != len(info["xxh3"]):
            raise Damaged(name, "block count differs")
        return range(n) if self.verify else range(0)

    def array(self, name: str) -> np.ndarray:
        """The part `name` as an array of its own (a read-only map of the file, where the
        platform has them), after checking its size and checksums."""
        info = self._info(name)
        try:
            dtype = np.dtype(info["dtype"])
            length = int(info["length"])
            with open(self.path / name, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size != length * dtype.itemsize or size != info["bytes"]:
                    raise Damaged(name, f"{size} bytes, the manifest says {info['bytes']}")
                arr = _private_array(fh, dtype, length)
        except FileNotFoundError as exc:
            raise Damaged(name, "missing") from exc
        except (TypeError, KeyError, ValueError) as exc:
            raise Damaged(name, f"odd manifest entry ({exc})") from exc
        if arr is None:
            raise Damaged(name, "short read")
        data = _raw(arr)
        checks = self._blocks(data, info, name)
        for k in checks:
            self._check_block(name, data, info, k)
        mapped = arr.base.obj if isinstance(arr.base, memoryview) else arr.base
        if len(checks) and isinstance(mapped, mmap.mmap):
            # read whole to be checked, not yet written by anyone: its pages go back to the
            # page cache, and come again where a page reads them (`drop_unwritten`)
            readahead.drop_unwritten(mapped, arr.nbytes)
        return arr

    def _map(self, name: str) -> tuple[bytes | mmap.mmap, dict[str, Any]]:
        """The byte part `name` memory-mapped (read-only), its size checked, not its bytes."""
        info = self._info(name)
        try:
            with open(self.path / name, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size != info["bytes"]:
                    raise Damaged(name, f"{size} bytes, the manifest says {info['bytes']}")
                if size == 0:
                    return b"", info
                # not MAP_POPULATE: Python 3.11's mmap() holds the GIL, and populating made it
                # 82 ms per GB of cached pages (438 ms where some came from disk), a stall of
                # every thread, the window's included; the checking threads fault the pages
                # in with the GIL released, no slower (309 MB args blob: 8-15 ms either way)
                # ACCESS_READ: shared and read-only on POSIX, and its buffer says read-only,
                # so its pages may be given back once read (`readahead.is_read_only_map`)
                return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), info
        except FileNotFoundError as exc:
            raise Damaged(name, "missing") from exc
        except (TypeError, KeyError) as exc:
            raise Damaged(name, f"odd manifest entry ({exc})") from exc

    def read(self, arrays: list[str], blobs: list[str]) -> dict[str, Any]:
        """Arrays (fresh) and blobs (memory-mapped), all checked, read on several threads:
        reading and xxHash3 both release the GIL, so columns and the blocks of a big blob
        are checked side by side. Raises Damaged for the first failing part in list order."""
        mapped = {name: self._map(name) for name in blobs}
        checks = [
            functools.partial(self._check_mapped, name, view, info, k)
            for name, (view, info) in mapped.items()
            for k in self._blocks(memoryview(view), info, name)
        ]
        reads = [functools.partial(self.array, name) for name in arrays]
        values = run_parallel([*reads, *checks], max(1, min(8, os.cpu_count() or 1)))
        out: dict[str, Any] = dict(zip(arrays, values, strict=False))
        for name, (view, _) in mapped.items():
            out[name] = view
        return out

    def blob(self, name: str) -> bytes | mmap.mmap:
        """The byte part `name`, memory-mapped (read-only), after checking its checksums."""
        return cast("bytes | mmap.mmap", self.read([], [name])[name])

    def blob_checked_when_read(self, name: str) -> tuple[bytes | mmap.mmap, BlockCheck | None]:
        """The byte part `name`, memory-mapped (read-only), its size checked now and its
        blocks where they are read (`BlockCheck`; None when this folder is not verified)."""
        view, info = self._map(name)
        blocks = self._blocks(memoryview(view), info, name)
        return view, (BlockCheck(self, name, view, info) if len(blocks) else None)


class BlockCheck:
    """A mapped blob's checksums checked block by block as its spans are read, each block
    once, its pages given back after (`check(starts, ends)`; raises Damaged). Reading the
    args of one slice checks one block (32 MB) instead of the whole blob on every open."""

    def __init__(self, folder: Folder, name: str, view: Any, info: dict[str, Any]) -> None:
        self._folder, self._name, self._view, self._info = folder, name, view, info
        self._block = int(info["block"])
        self._checked = np.zeros(len(info["xxh3"]), dtype=bool)
        self._lock = threading.Lock()

    def __call__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        spans = ends > starts
        if not spans.any():
            return
        n = len(self._checked)
        first = np.clip(starts[spans] // self._block, 0, n)
        after = np.clip((ends[spans] - 1) // self._block + 1, 0, n)
        # the blocks some span covers: +1 where a span starts, -1 past where it ends (work
        # bounded by the spans and the blocks, however long a span is)
        cover = np.cumsum(np.bincount(first, minlength=n + 1) - np.bincount(after, minlength=n + 1))
        todo = np.flatnonzero((cover[:n] > 0) & ~self._checked)
        if not len(todo):
            return
        with self._lock:  # two readers of one block check it once
            for k in todo.tolist():
                if not self._checked[k]:
                    self._folder._check_mapped(self._name, self._view, self._info, k)
                    self._checked[k] = True


def _private_array(fh: Any, dtype: np.dtype[Any], length: int) -> np.ndarray | None:
    """The file's `length` items mapped copy-on-write (`readahead.map_file`) and marked
    read-only: the page cache's pages themselves, not a copy into fresh memory (a 1 GB
    trace's cached columns, 390 MB: 0.1 s of copying on reopen). Safe because a published
    part is never rewritten in place: a new entry is a new folder, and a removed one stays
    readable while mapped. map_file keeps no file descriptor open per array (Python 3.11's
    mmap would: one per column of every open document). Where the platform has no such
    maps, the part is read into a fresh array instead (None: the read came up short)."""
    if length == 0:
        return np.empty(0, dtype=dtype)
    size = length * dtype.itemsize
    view = readahead.map_file(fh.fileno(), size, complete=True)  # published: never rewritten
    if view is not None:
        mapped = np.frombuffer(view, dtype=dtype, count=length)
        # read-only: so its pages may be given back once read (`core.model.mapped_pages`)
        mapped.flags.writeable = False
        return mapped
    arr = np.empty(length, dtype=dtype)
    return arr if fh.readinto(_raw(arr)) == size else None


def open_folder(path: Path, *, verify: bool = True) -> Folder:
    """Read and check the manifest of a published folder (raises Damaged)."""
    path = Path(path)
    try:
        raw = (path / MANIFEST).read_bytes()
    except FileNotFoundError as exc:
        raise Damaged(MANIFEST, "missing") from exc
    head, _, body = raw.partition(b"\n")
    fields = head.split(b" ")
    if len(fields) != 3 or fields[0] != MAGIC:
        raise Damaged(MANIFEST, "not a perfview manifest")
    if fields[1] != str(FORMAT).encode():
        raise Damaged(MANIFEST, f"layout {fields[1]!r}, this perfview reads {FORMAT}")
    if fields[2] != digest(body).encode():
        raise Damaged(MANIFEST, "checksum differs")
    with _VOUCH_LOCK:
        vouched = _VOUCHED.get(_where(path)) == fields[2].decode()
    try:
        doc = json.loads(body)
        return Folder(path, dict(doc["meta"]), dict(doc["parts"]), verify and not vouched, vouched)
    except (ValueError, KeyError, TypeError) as exc:  # only a writer's bug gets here
        raise Damaged(MANIFEST, f"unreadable ({exc})") from exc


__all__ = [
    "FORMAT",
    "MANIFEST",
    "BlockCheck",
    "Damaged",
    "Folder",
    "digest",
    "open_folder",
    "published",
    "vouch",
    "write_folder",
]
