"""String tables of the compiled trace scanner: open-addressing hash tables of byte spans.

Each scan thread interns the strings it meets (names, categories, phases, pid/tid values, input
shapes, flow ids) into tables of its own: a code per distinct value, in order of first
appearance, and the value's byte span in the file, which Python decodes once per distinct
value (`assemble`). `Tables` holds one thread's tables; `_intern` is the compiled lookup
the scanner calls per string, `intern_spans` merges spans from several threads' tables.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.trace.scan.byte_ops import load_u64
from perfview.loaders.trace.scan.tokens import leaf, lower_ascii

N_TABLES = 6  # rows of the table arrays: the scanner's T_* tables
FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)


@leaf
def _same(buf: np.ndarray, a: int, b: int, length: int) -> bool:
    """buf[a:a+length] == buf[b:b+length], 8 bytes per step."""
    j = 0
    while j + 8 <= length:
        if load_u64(buf, a + j) != load_u64(buf, b + j):
            return False
        j += 8
    while j < length:
        if buf[a + j] != buf[b + j]:
            return False
        j += 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _intern(
    t: int, buf: np.ndarray, s: int, length: int, lower: bool,
    slots: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lens: np.ndarray, counts: np.ndarray,
) -> int:  # fmt: skip
    """Code of buf[s:s+length] in table t (ASCII-lowercased when `lower`), added when new.

    The hash reads at most the first and last 8 bytes (plus the length): names repeat far
    more than they differ, so a cheap hash and one full comparison on a hit beat hashing every
    byte. Distinct values with a colliding hash only probe further; they never merge.
    """
    h = FNV_OFFSET ^ np.uint64(length)
    if length >= 8 and not lower:  # two word loads, two multiplies
        h = (h ^ load_u64(buf, s)) * FNV_PRIME
        h = (h ^ load_u64(buf, s + length - 8)) * FNV_PRIME
    else:
        head = min(length, 8)
        for j in range(s, s + head):
            c = buf[j]
            if lower:
                c = lower_ascii(c)
            h = (h ^ np.uint64(c)) * FNV_PRIME
        for j in range(max(s + head, s + length - 8), s + length):
            c = buf[j]
            if lower:
                c = lower_ascii(c)
            h = (h ^ np.uint64(c)) * FNV_PRIME
    h ^= h >> np.uint64(29)
    h ^= h >> np.uint64(47)
    mask = slots.shape[1] - 1
    k = np.int64(h & np.uint64(mask))
    while True:
        code: int = slots[t, k] - 1  # a slot holds code + 1: 0 is empty (see `Tables`)
        if code < 0:
            code = counts[t]
            slots[t, k] = code + 1
            hashes[t, code] = h
            starts[t, code] = s
            lens[t, code] = length
            counts[t] = code + 1
            return code
        if hashes[t, code] == h and lens[t, code] == length:
            a = starts[t, code]
            if not lower:
                if _same(buf, a, s, length):
                    return code
                k = (k + 1) & mask
                continue
            same = True
            for j in range(length):
                x = buf[a + j]
                y = buf[s + j]
                if lower:
                    x = lower_ascii(x)
                    y = lower_ascii(y)
                if x != y:
                    same = False
                    break
            if same:
                return code
        k = (k + 1) & mask


@njit(cache=True, nogil=True)
def intern_spans(buf: np.ndarray, starts: np.ndarray, lens: np.ndarray, lower: bool) -> np.ndarray:
    """One code per span (equal bytes, ASCII case ignored when `lower`, share a code), in
    order of first appearance: merges the ranges' own tables of flow ids without Python."""
    n = len(starts)
    size = 1 << 4
    while size < 2 * n:
        size <<= 1
    slots = np.zeros((1, size), dtype=np.int32)
    hashes = np.zeros((1, max(n, 1)), dtype=np.uint64)
    tstarts = np.zeros((1, max(n, 1)), dtype=np.int64)
    tlens = np.zeros((1, max(n, 1)), dtype=np.int64)
    counts = np.zeros(1, dtype=np.int64)
    out = np.empty(n, dtype=np.int32)
    for k in range(n):
        out[k] = _intern(0, buf, starts[k], lens[k], lower, slots, hashes, tstarts, tlens, counts)
    return out


@njit(cache=True, nogil=True)
def rehash(slots: np.ndarray, hashes: np.ndarray, counts: np.ndarray) -> None:
    """Fill fresh (all 0: empty) `slots` from the stored hashes, after the tables grew."""
    mask = slots.shape[1] - 1
    for t in range(slots.shape[0]):
        for code in range(counts[t]):
            k = np.int64(hashes[t, code] & np.uint64(mask))
            while slots[t, k] != 0:
                k = (k + 1) & mask
            slots[t, k] = code + 1


class Tables:
    """The scanner's six open-addressing string tables (see `_intern`).

    The six share one width, set by the biggest (flow ids: ~600k per thread in a 1 GB NCCL
    trace), while the others hold a few thousand values. So a slot holds code + 1, making
    an empty table all zeros, and growing copies only what each table holds: the system
    maps zeroed pages only when written, so the small tables' unused width costs no memory
    (it cost 200 MB in that trace when slots were -1 and every row was copied whole)."""

    def __init__(self, slots: int = 1 << 12) -> None:
        self.slots = np.zeros((N_TABLES, slots), dtype=np.int32)
        cap = slots // 2
        self.hashes = np.zeros((N_TABLES, cap), dtype=np.uint64)
        self.starts = np.zeros((N_TABLES, cap), dtype=np.int64)
        self.lens = np.zeros((N_TABLES, cap), dtype=np.int64)
        self.counts = np.zeros(N_TABLES, dtype=np.int64)

    def args(self) -> tuple[np.ndarray, ...]:
        return self.slots, self.hashes, self.starts, self.lens, self.counts

    def grow(self) -> None:
        """Double every table (the scanner stopped before an event to ask for room)."""
        size = self.slots.shape[1] * 2
        cap = size // 2

        used = self.counts.tolist()

        def wider(a: np.ndarray) -> np.ndarray:
            out = np.zeros((N_TABLES, cap), dtype=a.dtype)
            for t, k in enumerate(used):
                out[t, :k] = a[t, :k]
            return out

        self.hashes, self.starts, self.lens = map(wider, (self.hashes, self.starts, self.lens))
        self.slots = np.zeros((N_TABLES, size), dtype=np.int32)
        rehash(self.slots, self.hashes, self.counts)

    def spans(self, t: int) -> list[tuple[int, int]]:
        k = int(self.counts[t])
        return list(zip(self.starts[t, :k].tolist(), self.lens[t, :k].tolist(), strict=True))


__all__ = ["N_TABLES", "Tables", "intern_spans", "rehash"]
