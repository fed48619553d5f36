"""memray captures (`memray run -o out.bin`), read by perfview's own reader or memray's.

memray's record stream changes with its releases and each memray reads only its own header
version (1.19 writes 12, 1.20 writes 13 and refuses 12). Which reader:
- header versions 9-13 (memray 1.4-1.20): perfview's own reader of
  the record stream (`stream`), always: it needs no memray, reads every version, and replays
  ~250M records in seconds where memray's FileReader takes minutes; its tables equal the
  memray path's (the tests cross-check them on the samples and fixtures). Exceptions go to
  memray's reader when the installed memray reads the file: captures with native frames
  (symbolising them needs memray) and pre-aggregated ones (`memray run --aggregate`);
- other versions: the installed memray's `FileReader` when it reads that version; otherwise
  a LoadError names the memray that wrote the file (`header`), so the user knows which
  one to install. memray is the optional extra `memray` (`pip install 'perfview[memray]'`).

The capture is reduced while it is read, into columns (`MemrayCapture`): the allocation sites
at the high-water mark, the leaked sites, the per-site allocation intervals between memory
snapshots (temporal view), the memory snapshots themselves, and per-thread record counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from operator import attrgetter
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from perfview.core.analysis import memray_views
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.memray_model import MemrayCapture, StackInterner
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import Capabilities, CompiledReader
from perfview.loaders.memray import header as H
from perfview.loaders.memray.isolated import read_isolated
from perfview.loaders.memray.stream import read_stream

NAME: Final = "memray"
DESCRIPTION = "a memray capture (memray run -o FILE)"
EXTENSIONS = (".bin", ".memray")
INSTALL = "pip install 'perfview[memray]'"


def _replay_on_disk() -> bool:
    from perfview.loaders.memray.stream import warm

    return warm.compiled()


def _warm_replay() -> None:
    from perfview.loaders.memray.stream import warm

    warm.warm()


REPLAY = CompiledReader(
    what="memray's record replay",
    min_bytes=0,  # perfview's own reader, compiled, reads captures of every size
    on_disk=_replay_on_disk,
    warm=_warm_replay,
)
# parsed in the caller's process: a capture's tables do not round-trip through the cache's
# entry format, which a child process hands its result back in
CAPABILITIES = Capabilities(compiled=REPLAY)


def sniff(head: bytes, path: Path) -> bool:
    """The raw or LZ4-framed record stream starts with `memray\\0` and a version."""
    return H.header_version(head) is not None


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _installed_memray(version: int | None) -> Any:
    """The memray module when it is installed and reads `version`; else a LoadError saying
    which memray to install. Asked here before a child is spawned to read the file."""
    try:
        import memray
    except ImportError as exc:
        raise LoadError(
            f"it is a memray capture (format version {version}, written by "
            f"{H.writer(version or 0)}); reading it needs memray: {INSTALL}"
        ) from exc
    installed = str(getattr(memray, "__version__", "?"))
    expected = H.version_read_by(installed)
    if version is not None and expected is not None and version != expected:
        raise LoadError(_mismatch(version, installed))
    return memray


def _reader(path: Path, version: int | None) -> Any:
    memray = _installed_memray(version)
    installed = str(getattr(memray, "__version__", "?"))
    try:
        return memray.FileReader(str(path), report_progress=False)
    except Exception as exc:  # memray raises OSError/plain exceptions for versions and damage
        text = str(exc)
        if "incompatible" in text or "version" in text.lower():
            raise LoadError(_mismatch(version, installed)) from exc
        raise LoadError(
            f"memray {installed} could not read it ({text[:160]}); the file says format "
            f"version {version}, written by {H.writer(version or 0)}"
        ) from exc


def _mismatch(version: int | None, installed: str) -> str:
    pin = H.PINS.get(version or 0)
    how = f"pip install {pin}" if pin else "install the memray release that wrote it"
    return (
        f"it was written by {H.writer(version or 0)} (format version {version}) "
        f"and the installed memray {installed} reads another format; to open it: {how}"
    )


def _sites(records: Iterable[Any], intern: StackInterner, native: bool) -> pd.DataFrame:
    """Aggregated records (merged threads) → stack, bytes, count columns."""
    stacks: list[int] = []
    sizes: list[int] = []
    counts: list[int] = []
    for rec in records:
        trace = rec.hybrid_stack_trace() if native else rec.stack_trace()
        stacks.append(intern.stack(trace))
        sizes.append(int(rec.size))
        counts.append(int(rec.n_allocations))
    frame = pd.DataFrame(
        {
            "stack": np.asarray(stacks, dtype=np.int32),
            "size_bytes": np.asarray(sizes, dtype=np.int64),
            "count": np.asarray(counts, dtype=np.int64),
        }
    )
    from perfview.loaders.memray.stream.assemble import group_sites  # numba: not at sniff time

    return group_sites(frame)


def _intervals(
    records: Iterable[Any], intern: StackInterner, native: bool, progress: Progress
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Temporal records, one per thread and site (memray aggregates them in C++) → one row per
    (site, interval): snapshots [start, end), count, bytes; end is -1 for allocations still
    alive when tracking stopped. Also the threads table (tid, name, allocations lasting past
    a memory snapshot; memray's temporal records leave out shorter ones).
    """
    cols: dict[str, list[int]] = {k: [] for k in ("tid", "stack", "start", "end", "count", "bytes")}
    names: dict[int, str] = {}
    for n, rec in enumerate(records, 1):
        sid = intern.stack(rec.hybrid_stack_trace() if native else rec.stack_trace())
        tid = int(rec.tid)
        names.setdefault(tid, str(rec.thread_name or ""))
        for iv in rec.intervals:
            end = iv.deallocated_before_snapshot
            cols["tid"].append(tid)
            cols["stack"].append(sid)
            cols["start"].append(int(iv.allocated_before_snapshot))
            cols["end"].append(-1 if end is None else int(end))
            cols["count"].append(int(iv.n_allocations))
            cols["bytes"].append(int(iv.n_bytes))
        if n % 20000 == 0:
            progress(0.75, f"allocations over time ({n:,} sites)")
    frame = pd.DataFrame({k: np.asarray(v, dtype=np.int64) for k, v in cols.items()})
    from perfview.loaders.memray.stream.assemble import group_intervals

    frame = group_intervals(frame.rename(columns={"bytes": "size_bytes"}))
    per_thread = frame.groupby("tid")["count"].sum()
    threads = pd.DataFrame(
        {
            "tid": per_thread.index.to_numpy(dtype=np.int64),
            "name": pd.Series([names[int(t)] for t in per_thread.index], dtype=object),
            "allocations": per_thread.to_numpy(dtype=np.int64),
        }
    )
    return frame, threads


def _all_threads(threads: pd.DataFrame, tids: set[int]) -> pd.DataFrame:
    """Add the threads that only made short-lived allocations or only freed (no intervals)."""
    missing = sorted(tids - set(threads["tid"].tolist()))
    if not missing:
        return threads
    extra = pd.DataFrame(
        {
            "tid": np.asarray(missing, dtype=np.int64),
            "name": pd.Series([""] * len(missing), dtype=object),
            "allocations": np.zeros(len(missing), dtype=np.int64),
        }
    )
    return pd.concat([threads, extra], ignore_index=True)


def _thread_ids(reader: Any, total: int, progress: Progress) -> set[int]:
    """Every thread id in the record stream (frees included), read at C speed in chunks."""
    records = reader.get_allocation_records()
    tids: set[int] = set()
    get_tid = attrgetter("tid")
    done = 0
    while True:
        chunk = set(map(get_tid, islice(records, 500_000)))
        if not chunk:
            return tids
        tids |= chunk
        done += 500_000
        progress(0.5 + 0.4 * min(done / max(total, 1), 1.0), "threads")


def _aggregated(meta: Any) -> bool:
    return "AGGREGATED" in str(getattr(getattr(meta, "file_format", None), "name", ""))


def _memory(reader: Any) -> pd.DataFrame:
    snaps = list(reader.get_memory_snapshots())
    return pd.DataFrame(
        {
            "ts_ns": np.asarray([s.time for s in snaps], dtype=np.int64) * 1_000_000,
            "rss_bytes": np.asarray([s.rss for s in snaps], dtype=np.int64),
            "heap_bytes": np.asarray([s.heap for s in snaps], dtype=np.int64),
        }
    )


def _memray_reads(version: int) -> bool:
    try:
        import memray
    except ImportError:
        return False
    return H.version_read_by(str(getattr(memray, "__version__", ""))) == version


def choose_reader(head: bytes, version: int) -> str:
    """'own' or 'memray' (see the module docstring)."""
    try:
        lead = H.leading(H.inner_head(head))
    except H.Truncated:  # the file ends inside the header: the own reader says so
        return "own"
    except ValueError:  # a format version the own reader does not read
        return "memray"
    aggregated = lead.file_format != H.ALL_ALLOCATIONS
    if (lead.native_traces or aggregated) and _memray_reads(version):
        return "memray"
    return "own"


def read_capture(path: Path, progress: Progress = noop, reader: str = "auto") -> MemrayCapture:
    """Read and reduce a capture (LoadError when it cannot); `reader`: 'auto' (see the module
    docstring), 'own' or 'memray' (benchmarks and cross-checks)."""
    with open(path, "rb") as fh:
        head = fh.read(64 * 1024)
    version = H.header_version(head)
    if version is None:
        raise LoadError("it is not a memray capture (no memray header, raw or LZ4-framed)")
    if reader == "auto":
        reader = choose_reader(head, version)
    if reader == "own":
        return read_stream(path, progress)
    return _read_with_memray(path, version, progress)


def _read_with_memray(path: Path, version: int, progress: Progress) -> MemrayCapture:
    """memray's reader, in a child process (`isolated`): native code that trusts the file."""
    progress(0.02, "opening the capture with memray")
    _installed_memray(version)
    cap: MemrayCapture = read_isolated(_read_in_child, path, progress)
    return cap


def _read_in_child(path: Path) -> MemrayCapture:
    """`_read_with_memray_here` in the child, the version read again from the file."""
    with open(path, "rb") as fh:
        version = H.header_version(fh.read(64 * 1024))
    if version is None:
        raise LoadError("it is not a memray capture (no memray header, raw or LZ4-framed)")
    return _read_with_memray_here(path, version, noop)


def _read_with_memray_here(path: Path, version: int, progress: Progress) -> MemrayCapture:
    reader = _reader(path, version)
    try:
        meta = reader.metadata
        native = bool(meta.has_native_traces)
        intern = StackInterner()
        progress(0.1, "high-water mark")
        peak = _sites(reader.get_high_watermark_allocation_records(True), intern, native)
        progress(0.3, "leaks")
        leaks = _sites(reader.get_leaked_allocation_records(True), intern, native)
        progress(0.5, "allocations over time")
        if _aggregated(meta):  # `memray run --aggregate` keeps no history: no temporal view
            intervals, threads = _intervals([], intern, native, progress)
        else:
            temporal = reader.get_temporal_allocation_records(merge_threads=False)
            intervals, threads = _intervals(temporal, intern, native, progress)
            tids = _thread_ids(reader, int(meta.total_allocations), progress)
            threads = _all_threads(threads, tids)
        memory = _memory(reader)
    except LoadError:
        raise
    except Exception as exc:  # damage inside the stream surfaces here, not at open
        raise LoadError(f"memray could not read the capture ({str(exc)[:200]})") from exc
    finally:
        reader.close()
    frames, offsets, flat = intern.arrays()
    return MemrayCapture(
        peak=peak,
        leaks=leaks,
        intervals=intervals,
        frames=frames,
        stack_offsets=offsets,
        stack_frames=flat,
        memory=memory,
        threads=threads,
        meta={
            "version": version,
            "records": int(meta.total_allocations),
            "peak_bytes": int(meta.peak_memory),
            "command_line": str(meta.command_line),
            "pid": int(meta.pid),
            "python_allocator": str(meta.python_allocator),
            "native_traces": native,
            "start_ns": int(meta.start_time.timestamp() * 1e9),
            "end_ns": int(meta.end_time.timestamp() * 1e9),
            "reader": "memray",
        },
    )


READERS = {None: "auto", True: "own", False: "memray"}  # a load's `compiled` → `reader`


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Load a capture; `compiled`: perfview's own (compiled) reader (True), memray's (False),
    or as `choose_reader` decides (None)."""
    path = Path(path)
    cap = read_capture(path, progress, READERS[compiled])
    progress(0.9, "building the flame graph")
    bundle = Bundle(format=NAME, path=path, counts=memray_views.counts(cap))
    bundle.memray = cap
    bundle.tree = memray_views.site_tree(cap, cap.peak)
    bundle.duration_ns = max(cap.meta["end_ns"] - cap.meta["start_ns"], 0)
    if cap.meta["native_traces"] and cap.meta.get("reader") == "perfview":
        bundle.warnings.append(
            "recorded with native traces, read without memray: the stacks show Python frames "
            f"only (install {H.PINS.get(cap.meta['version'], 'memray')} to see "
            "native frames)"
        )
    if cap.meta["python_allocator"] == "pymalloc":
        bundle.warnings.append(
            "recorded with pymalloc: small Python objects come from arenas memray sees only "
            "in bulk, so leaks may be over- or under-reported (record with PYTHONMALLOC=malloc)"
        )
    progress(1.0, "done")
    return bundle
