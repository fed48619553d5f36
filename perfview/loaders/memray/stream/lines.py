"""Instruction offset → line number, from the code object's line table as memray stores it.

memray records, per Python frame, a code object id and the instruction offset, and once per
code object its line table (`co_linetable`, or `co_lnotab` before 3.10) and first line; the
layout depends on the traced interpreter (PY_VERSION_HEX in the header). Line 0 when the
offset is not covered, as memray reports it.
"""

from __future__ import annotations


def _varint6(table: bytes, p: int) -> tuple[int, int]:
    b = table[p]
    p += 1
    val, shift = b & 63, 0
    while b & 64:
        b = table[p]
        p += 1
        shift += 6
        val |= (b & 63) << shift
    return val, p


def _svarint6(table: bytes, p: int) -> tuple[int, int]:
    u, p = _varint6(table, p)
    return (-(u >> 1) if u & 1 else u >> 1), p


def line_311(table: bytes, offset: int, first: int) -> int:
    """CPython 3.11+ location table: entries of (code, length in code units)."""
    target = offset // 2  # memray's offsets are bytes; the table counts 2-byte code units
    addr, line, p = 0, first, 0
    while p < len(table) and table[p]:  # memray reads it as a C string: a 0 head ends it
        head = table[p]
        p += 1
        code, length = (head >> 3) & 15, (head & 7) + 1
        if code == 14:  # long form: line delta, end line, columns
            delta, p = _svarint6(table, p)
            line += delta
            for _ in range(3):
                _, p = _varint6(table, p)
        elif code == 13:  # no columns
            delta, p = _svarint6(table, p)
            line += delta
        elif 10 <= code <= 12:  # one line, delta 0-2, two column bytes
            line += code - 10
            p += 2
        elif code != 15:  # short form: one more byte of columns
            p += 1
        if addr <= target < addr + length:
            return line
        addr += length
    return 0


def line_310(table: bytes, offset: int, first: int) -> int:
    """CPython 3.10 co_linetable: (bytecode delta, signed line delta) pairs; -128: no line."""
    line, current, last = first, 0, offset << 1
    for i in range(0, len(table) - 1, 2):
        current += table[i]
        delta = table[i + 1] - 256 if table[i + 1] > 127 else table[i + 1]
        line += 0 if delta == -128 else delta
        if current > last:
            break
    return line


def line_39(table: bytes, offset: int, first: int) -> int:
    """CPython ≤ 3.9 co_lnotab, read with signed chars as memray's x86-64 build does."""
    line, bc = first, 0
    for i in range(0, len(table) - 1, 2):
        step = table[i] - 256 if table[i] > 127 else table[i]
        bc = (bc + step) % (1 << 64)  # a size_t there
        if bc > offset:
            break
        line += table[i + 1] - 256 if table[i + 1] > 127 else table[i + 1]
    return line


def line_number(python_version: int, table: bytes, offset: int, first: int) -> int:
    if not table or offset < 0:
        return 0
    try:
        if python_version >= 0x030B0000:
            return line_311(table, offset, first)
        if python_version >= 0x030A0000:
            return line_310(table, offset, first)
        return line_39(table, offset, first)
    except IndexError:  # a table cut short: memray would read past it; no line
        return 0
