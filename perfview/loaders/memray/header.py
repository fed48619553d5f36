"""memray's capture header, read field by field in one place and without memray installed.

`memray run -o out.bin` writes either the raw record stream, which starts with the header, or
(the default since memray 1.x) that stream inside an LZ4 frame (magic 04 22 4D 18). The first
LZ4 block is decoded here just far enough to see the header's first fields, with a tiny
pure-Python LZ4 block decoder: sniffing, choosing a reader and the "which memray wrote this"
sentence then work without memray or the lz4 package. perfview's own reader (`stream`) parses
the whole header from the decompressed stream with the same `parse`.

memray writes the header unpadded and little-endian: the magic `memray\\0`, int32 version,
int32 PY_VERSION_HEX of the traced interpreter, bool native_traces, uint8 file format (0:
every allocation, 1: pre-aggregated by `memray run --aggregate`), the tracker statistics
(uint64 records, uint64 frames, int64 start and end in ms since the epoch), the NUL
terminated command line, int32 pid, uint64 main thread id, uint64 frames to hide on the main
thread, uint8 Python allocator, bool trace_python_allocators, bool track_object_lifetimes.
Version 11 (memray 1.11-1.18) has neither the interpreter's version nor the object lifetime
flag; version 10 (memray 1.7-1.10) not the trace_python_allocators flag either, and version
9 (memray 1.4-1.6) not the file format (always every allocation) either. Version 13
(memray 1.20) appends the traced interpreter's module search paths: libdest, then
site-packages and sys.path, each list ended by an empty string. Version 12 is memray 1.19.
Each memray reads only its own version.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

LZ4_MAGIC = b"\x04\x22\x4d\x18"
MAGIC = b"memray\x00"
VERSIONS = (9, 10, 11, 12, 13)  # what perfview's own reader (`stream`) reads
ALL_ALLOCATIONS = 0
AGGREGATED = 1
ALLOCATORS = {1: "pymalloc", 2: "pymalloc debug", 3: "malloc", 4: "unknown", 5: "mimalloc"}
ALLOCATORS[6] = "mimalloc debug"
# Header version → the memray releases that write (and so read) it.
WRITERS = {
    7: "memray 1.1",
    8: "memray 1.2-1.3",
    9: "memray 1.4-1.6",
    10: "memray 1.7-1.10",
    11: "memray 1.11-1.18",
    12: "memray 1.19",
    13: "memray 1.20",
}
# Header version → a pip requirement that reads it.
PINS = {
    8: "memray==1.3.1",
    9: "memray==1.6.0",
    10: "memray==1.10.0",
    11: "memray==1.18.0",
    12: "memray==1.19.3",
    13: "memray==1.20.0",
}
# Header version → the memray 1.x minor releases that read it (`version_read_by`).
READERS = {9: (5, 6), 10: (7, 10), 11: (11, 18), 12: (19, 19), 13: (20, 20)}


class Truncated(ValueError):
    """The bytes end inside the header."""


@dataclass
class Leading:
    """The header's fixed-size fields, before the command line: what sniffing and choosing
    a reader need, found in the first bytes of a capture (`inner_head`)."""

    version: int
    python_version: int
    native_traces: bool
    file_format: int
    n_records: int
    start_ms: int
    end_ms: int
    size: int  # where the fields read so far end: here, where the command line starts


@dataclass
class Header(Leading):
    """What memray's header says; `size` is where the record stream starts."""

    command_line: str = ""
    pid: int = 0
    main_tid: int = 0
    skipped_frames: int = 0
    python_allocator: str = "unknown"
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


def _version(data: bytes) -> int:
    """The format version after the magic; ValueError without the magic."""
    if not data.startswith(MAGIC):
        raise ValueError("no memray magic")
    (version,), _ = _fixed(data, "<i", len(MAGIC))
    return int(version)


def leading(data: bytes) -> Leading:
    """The fixed-size fields at the start of `data`; ValueError when it is not one of
    `VERSIONS`, Truncated when `data` ends inside them."""
    version = _version(data)
    if version not in VERSIONS:
        raise ValueError(f"format version {version}")
    pos = len(MAGIC) + 4
    py = 0
    if version >= 12:
        (py,), pos = _fixed(data, "<i", pos)
    fmt = ALL_ALLOCATIONS
    if version >= 10:
        (native, fmt, n, _frames, start, end), pos = _fixed(data, "<BBQQqq", pos)
    else:
        (native, n, _frames, start, end), pos = _fixed(data, "<BQQqq", pos)
    return Leading(version, py, bool(native), fmt, n, start, end, pos)


def parse(data: bytes) -> Header:
    """The whole header at the start of `data` (the decompressed stream); ValueError when it
    is not one of `VERSIONS`, Truncated when `data` ends inside it."""
    lead = leading(data)
    version = lead.version
    command, pos = _string(data, lead.size)
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
        **{**vars(lead), "size": pos},
        command_line=command,
        pid=pid,
        main_tid=main_tid,
        skipped_frames=skipped,
        python_allocator=ALLOCATORS.get(alloc, "unknown"),
        sys_path=paths,
    )


def lz4_block_prefix(src: bytes, want: int) -> bytes:
    """The first `want` bytes (or fewer) that LZ4 block `src` decodes to; stops at damage."""
    out = bytearray()
    i, n = 0, len(src)
    while i < n and len(out) < want:
        token = src[i]
        i += 1
        lit = token >> 4
        if lit == 15:
            while i < n:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        out += src[i : i + lit]
        i += lit
        if i + 2 > n:
            break
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        length = (token & 15) + 4
        if (token & 15) == 15:
            while i < n:
                b = src[i]
                i += 1
                length += b
                if b != 255:
                    break
        if offset == 0 or offset > len(out):
            break
        start = len(out) - offset
        for k in range(length):  # overlapping copies are legal in LZ4
            out.append(out[start + k])
    return bytes(out[:want])


def inner_head(head: bytes, want: int = 64) -> bytes:
    """The start of the record stream: `head` itself, or its LZ4 frame's first block decoded."""
    if head.startswith(MAGIC):
        return head[:want]
    if not head.startswith(LZ4_MAGIC) or len(head) < 11:
        return b""
    flg = head[4]
    pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1  # FLG BD [size] [dict] HC
    if pos + 4 > len(head):
        return b""
    (size,) = struct.unpack_from("<I", head, pos)
    block = head[pos + 4 : pos + 4 + (size & 0x7FFFFFFF)]
    if size & 0x80000000:  # stored uncompressed
        return block[:want]
    return lz4_block_prefix(block, want)


def header_version(head: bytes) -> int | None:
    """The memray format version of a capture, None when `head` is not a memray capture."""
    try:
        return _version(inner_head(head))
    except ValueError:  # no magic, or cut before the version
        return None


def version_read_by(memray_version: str) -> int | None:
    """The one header version a memray release reads (None when this module does not know)."""
    parts = memray_version.split(".")
    if len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit():
        minor = int(parts[1])
        for version, (low, high) in READERS.items():
            if low <= minor <= high:
                return version
    return None


def writer(version: int) -> str:
    """Words for who wrote format `version` ('memray 1.19', or 'a memray of format 14')."""
    return WRITERS.get(version, f"a memray release that writes format version {version}")
