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

from perfview.loaders.trace.scan.byte_ops import HIGHS, LOW7, load_u64, prefetch

N_TABLES = 6  # rows of the table arrays: the scanner's T_* tables
FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)
AT_LEAST_A = np.uint64(0x3F3F3F3F3F3F3F3F)  # + a 7-bit byte: high bit set when >= 'A' (0x41)
ABOVE_Z = np.uint64(0x2525252525252525)  # high bit set when > 'Z' (0x5A)


@njit(cache=True, nogil=True, inline="always")
def lower_word(w: np.uint64) -> np.uint64:
    """`w` with each of its 8 bytes in A-Z lowercased, every other byte kept (as
    `lower_ascii`): a byte is upper when ASCII, >= 'A' and not > 'Z', each test the high bit
    of its 7 low bits plus a constant (no carry leaves a byte)."""
    low7 = w & LOW7
    upper = (low7 + AT_LEAST_A) & ~(low7 + ABOVE_Z) & ~w & HIGHS
    return w | (upper >> np.uint64(2))


@njit(cache=True, nogil=True, inline="always")
def _word(buf: np.ndarray, s: int, length: int) -> np.uint64:
    """The first min(length, 8) bytes at buf[s], zero-padded, as a little-endian word."""
    w: np.uint64
    if s + 8 <= len(buf):
        w = load_u64(buf, s)
        if length < 8:
            w &= (np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)
        return w
    w = np.uint64(0)
    for j in range(min(length, 8)):
        w |= np.uint64(buf[s + j]) << np.uint64(8 * j)
    return w


@njit(cache=True, nogil=True, inline="always")
def _same(buf: np.ndarray, a: int, b: int, length: int, lower: bool) -> bool:
    """buf[a:a+length] == buf[b:b+length] (ASCII case ignored when `lower`), 8 bytes per
    step: the last step re-reads bytes already compared rather than going byte by byte."""
    if length < 8:
        x, y = _word(buf, a, length), _word(buf, b, length)
        return bool(lower_word(x) == lower_word(y)) if lower else bool(x == y)
    j = 0
    while True:
        if j > length - 8:
            j = length - 8
        x, y = load_u64(buf, a + j), load_u64(buf, b + j)
        if (lower_word(x) != lower_word(y)) if lower else (x != y):
            return False
        if j == length - 8:
            return True
        j += 8


@njit(cache=True, nogil=True, inline="always")
def hash_span(buf: np.ndarray, s: int, length: int, lower: bool) -> np.uint64:
    """Hash of buf[s:s+length] (ASCII-lowercased when `lower`) for `_intern`.

    It reads only the first and last 8 bytes (plus the length): names repeat far more than
    they differ, so a cheap hash and one full comparison on a hit beat hashing every byte.
    Distinct values with a colliding hash only probe further; they never merge."""
    head = _word(buf, s, length)
    tail = load_u64(buf, s + length - 8) if length > 8 else np.uint64(0)
    if lower:
        head, tail = lower_word(head), lower_word(tail)
    h = ((FNV_OFFSET ^ np.uint64(length)) ^ head) * FNV_PRIME
    h = (h ^ tail) * FNV_PRIME
    h ^= h >> np.uint64(29)
    h ^= h >> np.uint64(47)
    return h


@njit(cache=True, nogil=True, inline="always")
def prefetch_slot(t: int, h: np.uint64, slots: np.ndarray) -> None:
    """Ask for the cache line of the slot where `_intern` will look up hash h in table t: in a
    big table (a 1 GB trace's flow ids) that slot is a cache miss, which the scanner can wait
    for while it reads the rest of the event."""
    prefetch(slots, t * slots.shape[1] + np.int64(h & np.uint64(slots.shape[1] - 1)))


@njit(cache=True, nogil=True, inline="always")
def _intern(
    t: int, buf: np.ndarray, s: int, length: int, lower: bool,
    slots: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lens: np.ndarray, counts: np.ndarray,
) -> int:  # fmt: skip
    """Code of buf[s:s+length] in table t (ASCII-lowercased when `lower`), added when new."""
    h = hash_span(buf, s, length, lower)
    return _intern_hashed(t, h, buf, s, length, lower, slots, hashes, starts, lens, counts)


@njit(cache=True, nogil=True, inline="always")
def _intern_hashed(
    t: int, h: np.uint64, buf: np.ndarray, s: int, length: int, lower: bool,
    slots: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lens: np.ndarray, counts: np.ndarray,
) -> int:  # fmt: skip
    """`_intern` with the span's `hash_span` already computed."""
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
        same = hashes[t, code] == h and lens[t, code] == length
        if same and (length == 0 or _same(buf, starts[t, code], s, length, lower)):
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


__all__ = ["N_TABLES", "Tables", "hash_span", "intern_spans", "prefetch_slot", "rehash"]
