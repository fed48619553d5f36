"""Recognise memray captures and read their header version without memray installed.

`memray run -o out.bin` writes either the raw record stream, which starts with `memray\\0`
and a little-endian int32 format version, or (the default since memray 1.x) that stream inside
an LZ4 frame (magic 04 22 4D 18). The first LZ4 block is decoded here just far enough to see
the inner magic and version, with a tiny pure-Python LZ4 block decoder: sniffing and the
"which memray wrote this" sentence then work without memray or the lz4 package.

Versions: memray 1.4-1.6 write header version 9, 1.7-1.10 write 10, 1.11-1.18 write 11,
1.19 writes 12 and 1.20 writes 13; each memray reads only its own version.
"""

from __future__ import annotations

import struct

LZ4_MAGIC = b"\x04\x22\x4d\x18"
MEMRAY_MAGIC = b"memray\x00"
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
    if head.startswith(MEMRAY_MAGIC):
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
    inner = inner_head(head)
    if not inner.startswith(MEMRAY_MAGIC) or len(inner) < len(MEMRAY_MAGIC) + 4:
        return None
    (version,) = struct.unpack_from("<i", inner, len(MEMRAY_MAGIC))
    return int(version)


def version_read_by(memray_version: str) -> int | None:
    """The one header version a memray release reads (None when this module does not know)."""
    parts = memray_version.split(".")
    if len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit():
        minor = int(parts[1])
        for version, low, high in (
            (9, 5, 6),
            (10, 7, 10),
            (11, 11, 18),
            (12, 19, 19),
            (13, 20, 20),
        ):
            if low <= minor <= high:
                return version
    return None


def writer(version: int) -> str:
    """Words for who wrote format `version` ('memray 1.19', or 'a memray of format 14')."""
    return WRITERS.get(version, f"a memray release that writes format version {version}")
