"""Matching an object key against one of the loader's key tables in one probe.

Every key of every event is looked up (ten to fifteen per kineto event), and comparing it with
each word of a table in turn (a length test, then bytes) cost a loop per key. A key table here
is a small hash table instead: a key's first 8 bytes (masked to its length) times a multiplier
chosen when the table is built so that the table's words land in distinct slots, and one
compare of the slot's stored first and last 8 bytes decides. Words are 1-16 bytes long.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from perfview.loaders.trace.scan.byte_ops import load_u64

SLOTS = 64  # rows 0..63: (word index + 1 or 0 if empty, length, head, tail); row 64: multiplier
_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _head(word: bytes) -> int:
    return int.from_bytes(word[:8], "little")


def _slot(head: int, length: int, mult: int) -> int:
    return ((((head * mult) & _MASK64) >> 58) ^ length) & (SLOTS - 1)


def key_table(texts: Sequence[str]) -> np.ndarray:
    """The words `texts` (in order: a match returns the position) as a table for `match_key`."""
    words = [t.encode() for t in texts]
    if not all(0 < len(w) <= 16 for w in words):
        raise ValueError("key words must be 1-16 bytes long")
    for k in range(1, 1 << 16):
        mult = (_GOLDEN * k) & _MASK64 | 1
        table = np.zeros((SLOTS + 1, 4), dtype=np.uint64)
        for index, word in enumerate(words):
            slot = _slot(_head(word), len(word), mult)
            if table[slot, 0]:
                break
            tail = int.from_bytes(word[-8:], "little") if len(word) > 8 else 0
            table[slot] = (index + 1, len(word), _head(word), tail)
        else:
            table[SLOTS, 0] = mult
            return table
    raise ValueError("no collision-free multiplier for these key words")


def table_words(table: np.ndarray) -> list[str]:
    """The words of a key table in their order (for tests)."""
    rows = sorted((int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in table[:SLOTS] if r[0])
    out = []
    for _index, length, head, tail in rows:
        text = head.to_bytes(8, "little")[: min(length, 8)]
        if length > 8:
            text += tail.to_bytes(8, "little")[16 - length :]
        out.append(text.decode())
    return out


@njit(cache=True, nogil=True, inline="always")
def match_key(buf: np.ndarray, s: int, length: int, n: int, table: np.ndarray) -> int:
    """Position in `table`'s words of the key buf[s:s+length] (which ends before n), -1 when
    it is none of them."""
    if length <= 0 or length > 16:
        return -1
    if s + 8 <= n:
        head = load_u64(buf, s)
        if length < 8:
            head &= (np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)
    else:  # the last bytes of the buffer: no 8-byte load past its end
        head = np.uint64(0)
        for j in range(min(length, 8)):
            head |= np.uint64(buf[s + j]) << np.uint64(8 * j)
    slot = ((head * table[SLOTS, 0]) >> np.uint64(58)) ^ np.uint64(length)
    row = table[np.int64(slot & np.uint64(SLOTS - 1))]
    if row[0] == 0 or np.int64(row[1]) != length or row[2] != head:
        return -1
    if length > 8 and load_u64(buf, s + length - 8) != row[3]:
        return -1
    return np.int64(row[0]) - 1  # type: ignore[return-value]  # (uint64 - int is float64)


__all__ = ["SLOTS", "key_table", "match_key", "table_words"]
