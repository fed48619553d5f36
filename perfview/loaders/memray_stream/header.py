"""The header of memray's record stream (format versions 12 and 13), parsed without memray.

memray writes the header field by field, unpadded and little-endian: the magic `memray\\0`,
int32 version, int32 PY_VERSION_HEX of the traced interpreter, bool native_traces, uint8 file
format (0: every allocation, 1: pre-aggregated by `memray run --aggregate`), the tracker
statistics (uint64 records, uint64 frames, int64 start and end in ms since the epoch), the NUL
terminated command line, int32 pid, uint64 main thread id, uint64 frames to hide on the main
thread, uint8 Python allocator, bool trace_python_allocators, bool track_object_lifetimes.
Version 11 (memray 1.11-1.18) has neither the interpreter's version nor the object lifetime
flag; version 10 (memray 1.7-1.10) not the trace_python_allocators flag either, and version
9 (memray 1.4-1.6) not the file format (always every allocation) either. Version 13
(memray 1.20) appends the traced interpreter's module search paths: libdest, then
site-packages and sys.path, each list ended by an empty string. Version 12 is memray 1.19.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MAGIC = b"memray\x00"
VERSIONS = (9, 10, 11, 12, 13)
ALL_ALLOCATIONS = 0
AGGREGATED = 1
ALLOCATORS = {1: "pymalloc", 2: "pymalloc debug", 3: "malloc", 4: "unknown", 5: "mimalloc"}
ALLOCATORS[6] = "mimalloc debug"


class Truncated(ValueError):
    """The bytes end inside the header."""


@dataclass
class Header:
    """What memray's header says; `size` is where the record stream starts."""

    version: int
    python_version: int
    native_traces: bool
    file_format: int
    n_records: int
    start_ms: int
    end_ms: int
    command_line: str
    pid: int
    main_tid: int
    skipped_frames: int
    python_allocator: str
    size: int
    sys_path: list[str] = field(default_factory=list)


def _string(data: bytes, pos: int) -> tuple[str, int]:
    end = data.find(b"\x00", pos)
    if end < 0:
        raise Truncated("the header ends inside a string")
    return data[pos:end].decode("utf-8", "replace"), end + 1


def _fixed(data: bytes, fmt: str, pos: int) -> tuple[tuple[int, ...], int]:
    size = struct.calcsize(fmt)
    if pos + size > len(data):
        raise Truncated("the header is cut short")
    return struct.unpack_from(fmt, data, pos), pos + size


def parse(data: bytes) -> Header:
    """The header at the start of `data` (the decompressed stream); ValueError when it is not
    one of `VERSIONS`, Truncated when `data` ends inside it."""
    if not data.startswith(MAGIC):
        raise ValueError("no memray magic")
    (version,), pos = _fixed(data, "<i", 7)
    if version not in VERSIONS:
        raise ValueError(f"format version {version}")
    py = 0
    if version >= 12:
        (py,), pos = _fixed(data, "<i", pos)
    fmt = ALL_ALLOCATIONS
    if version >= 10:
        (native, fmt, n, _frames, start, end), pos = _fixed(data, "<BBQQqq", pos)
    else:
        (native, n, _frames, start, end), pos = _fixed(data, "<BQQqq", pos)
    command, pos = _string(data, pos)
    (pid, main_tid, skipped, alloc), pos = _fixed(data, "<iQQB", pos)
    if version >= 11:
        pos += 1  # trace_python_allocators
    if version >= 12:
        pos += 1  # track_object_lifetimes
    paths: list[str] = []
    if version >= 13:
        libdest, pos = _string(data, pos)
        paths.append(libdest)
        for _ in range(2):  # site-packages, then sys.path: each ends with ""
            while True:
                text, pos = _string(data, pos)
                if not text:
                    break
                paths.append(text)
    return Header(
        version=version,
        python_version=py,
        native_traces=bool(native),
        file_format=fmt,
        n_records=n,
        start_ms=start,
        end_ms=end,
        command_line=command,
        pid=pid,
        main_tid=main_tid,
        skipped_frames=skipped,
        python_allocator=ALLOCATORS.get(alloc, "unknown"),
        size=pos,
        sys_path=paths,
    )
