"""Refuse files whose decoded form would not fit in memory, before decoding starts.

A 30 GB trace on a 16 GB laptop should produce one sentence ("it would need about 38 GB of
memory to open; this machine has 21 GB available"), not minutes of swapping followed by the
kernel's OOM killer taking the whole window, and every other open document, with it.

The estimate is deliberately cheap (no decoding): the decoded size of the file times how much
memory each loader was measured to need per decoded byte, plus a fixed base. For gzip files
the decoded size is the ISIZE trailer, which is only the size mod 2**32; when the trailer is
smaller than the compressed file (impossible for a real size) or the file is over 4 GiB, the
compressed size times a generous compression ratio is used instead.

`PERFVIEW_MEMORY_LIMIT` (bytes) replaces the available memory, so tests and users can impose a
lower ceiling than the machine's.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from perfview import streamed
from perfview.core.model.errors import LoadError

ENV_LIMIT = "PERFVIEW_MEMORY_LIMIT"
# Peak memory per decoded byte, measured on the samples (peak RSS growth / decoded size) and
# rounded up: traces keep the raw buffer while building numpy columns; pstats and the text
# formats build Python objects per record, which cost far more than their bytes.
OVERHEAD = {"trace": 4.0, "pstats": 16.0, "mprof": 12.0, "memprof_text": 12.0}
DEFAULT_OVERHEAD = 16.0
# A plain trace of READ_AHEAD_MIN_BYTES or more is mapped and scanned window by window, its
# pages given back as the scan goes, and its args written to disk (the trace loader's scan):
# what stays is its columns and tables, measured at 1.4-1.5x the file at 1 and 10 GB (GPU
# NCCL shape, the densest in events per byte; `scripts/bench/bench_big_trace.py`)
STREAMED_OVERHEAD = {"trace": 1.6}
# ... and where the memory available is short for the file (`rows_on_disk`),
# its rows go to a file on disk and their pages are given back as the load goes: measured
# at 0.82-0.85x the file at 10 GB; 1.0 leaves a margin for malloc's heap. So a 20 GB trace
# opens on a machine with 22 GB available, where 1.6x refused it.
ON_DISK_OVERHEAD = {"trace": 1.0}
STREAMED_MIN_BYTES = 16_000_000  # the trace loader's SCANNER_MIN_BYTES
BASE_BYTES = 64 * 2**20  # tables, trees and views built after any load
GZIP_RATIO = 32  # JSON traces compress 10-30x (samples: 13x, 30x); assume the high end
GZIP_MAGIC = b"\x1f\x8b"
# The trace scanner's choice (`scan.parallel`), made here where the estimate reads it too:
# a file bigger than 1/DISK_SHARE of the memory available has its rows written to a file on
# disk (`reserved_batch(on_disk=True)`): a 10 GB trace's rows and columns are 5 GB, and given
# back as the load goes they never sit in memory whole (10 GB NCCL replica, peak 9.1 -> 8.2-8.5
# GB). Only where memory is short: the shared file map's page faults cost ~1 s of CPU at
# 1 GB (20 %) for 30-80 MB less peak, and at 10 GB the rows' write-back to disk made the
# load 4-22 s slower (52 s in memory), CPU the same.
DISK_SHARE = 2


def decoded_size(path: Path) -> int:
    """Bytes the file's content takes once decompressed (estimated for gzip, see module doc)."""
    arriving = streamed.pending(path)
    if arriving is not None:  # still downloading, and plain (a gzip one is detected whole)
        return arriving.size
    size = path.stat().st_size
    with open(path, "rb") as fh:
        if fh.read(2) != GZIP_MAGIC or size < 18:
            return size
        fh.seek(-4, os.SEEK_END)
        (isize,) = struct.unpack("<I", fh.read(4))
    if size > 2**32 or isize < size:
        return size * GZIP_RATIO
    return int(isize)


def available_memory() -> int | None:
    """Bytes that can be allocated without swapping (env override first), None if unknown."""
    override = os.environ.get(ENV_LIMIT, "").strip()
    if override:
        try:
            return max(int(float(override)), 0)
        except ValueError:
            pass  # a typo in the variable must not make every file unloadable
    try:
        import psutil  # optional: psutil is not a core dependency

        return int(psutil.virtual_memory().available)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def needed_memory(path: Path, loader_name: str) -> int:
    """Estimated peak bytes to load `path` with the loader called `loader_name`."""
    factor = OVERHEAD.get(loader_name, DEFAULT_OVERHEAD)
    size = decoded_size(path)
    if loader_name in STREAMED_OVERHEAD and size == streamed.size_of(path) >= STREAMED_MIN_BYTES:
        factor = STREAMED_OVERHEAD[loader_name]  # plain, big: streamed (see STREAMED_OVERHEAD)
        if loader_name in ON_DISK_OVERHEAD and rows_on_disk(size):
            factor = ON_DISK_OVERHEAD[loader_name]
    return int(size * factor) + BASE_BYTES


# The window parses a file apart, in a child process whose columns it then maps from disk,
# when the parse would need more than 1/APART_SHARE of the memory available: the build's
# temporaries and the holes they leave in malloc's heap are then the child's, given back
# whole when it ends, and the window holds the columns as clean file pages the kernel may
# drop (a 10 GB trace, its layout mapped from a file too: the window at 2.1 GB once its
# Timeline is drawn, 0.7 GB of it anonymous; parsed in the window, 6.3 GB).
# Smaller files parse in the window's process, a few seconds sooner (no columns written).
APART_SHARE = 4


def parse_apart(path: Path, loader_name: str) -> bool:
    """True when the window should parse `path` in a child process (`APART_SHARE`)."""
    available = available_memory()
    if available is None:
        return False
    try:
        return needed_memory(Path(path), loader_name) * APART_SHARE > available
    except OSError:
        return False


def rows_on_disk(nbytes: int) -> bool:
    """True when the scanner's rows of an `nbytes` file go to a file on disk (`DISK_SHARE`):
    the memory available now (`MemAvailable`, Linux; elsewhere never) is under DISK_SHARE
    times the file."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024 < DISK_SHARE * nbytes
    except (OSError, ValueError, IndexError):
        pass
    return False


def human(n: float) -> str:
    """Decimal units, rounded the way people say them: '38 GB', '2.5 GB', '700 MB'."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{n:.0f} bytes"


def check(path: Path, loader_name: str) -> None:
    """Raise LoadError when loading `path` would need more memory than is available."""
    available = available_memory()
    if available is None:
        return
    try:
        needed = needed_memory(Path(path), loader_name)
    except OSError:
        return  # unreadable: the loader reports that with its own message
    if needed <= available:
        return
    where = (
        f"the limit set by {ENV_LIMIT} is {human(available)}"
        if os.environ.get(ENV_LIMIT, "").strip()
        else f"this machine has {human(available)} available"
    )
    raise LoadError(f"it would need about {human(needed)} of memory to open; {where}")


__all__ = [
    "ENV_LIMIT",
    "available_memory",
    "check",
    "decoded_size",
    "human",
    "needed_memory",
    "rows_on_disk",
]
