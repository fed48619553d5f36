"""Open-addressing hash tables in numpy arrays, for the compiled record replay (`kernel`).

Three tables, all linear probing over a power-of-two capacity, grown by the caller (the
kernel asks for it before a record that could fill one past half):
- addresses: int64 address → row of `vals` (size, stack node, thread, generation), with
  backward-shift deletion, so frees leave no tombstones behind;
- stack nodes: (parent node, code object, instruction offset, entry flag) → node id, the
  call tree memray's FRAME_PUSH records walk (node 0 is the empty stack);
- history: (allocated before snapshot, freed before snapshot, thread, node) → count, bytes.
numba compiles them once and caches them on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numba import njit

from perfview.core import numba_registries

numba_registries.load()  # before any of this package compiles or loads code
MIX = np.uint64(0x9E3779B97F4A7C15)
# node table columns: the key, then the site's live count and bytes now and at the last peak
# and the thread slot that first pushed it (memray hides the launcher's frames on the main
# thread, also in thread-merged tables, by the thread of a record there)
N_PARENT, N_CODE, N_OFF, N_ENTRY, N_CNT, N_BYTES, N_HCNT, N_HBYTES, N_EPOCH, N_THREAD = range(10)
NODE_COLS = 10
OPTS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}
F = TypeVar("F", bound=Callable[..., Any])


def jit(fn: F) -> F:
    """numba-compiled, cached on disk, GIL-free and without reference counting: nothing here
    allocates, and counting the arrays passed to every call cost 4x the whole replay."""
    compiled: F = njit(**OPTS)(fn)
    return compiled


def inline(fn: F) -> F:
    """`jit`, inlined into its callers by numba (a call with ~20 arrays is no cheap call)."""
    compiled: F = njit(inline="always", **OPTS)(fn)
    return compiled


@jit
def copy_row(dst: np.ndarray, i: int, src: np.ndarray, j: int) -> None:
    """dst[i] = src[j] for 2-d arrays, without the row views that need numba's refcounts."""
    for c in range(src.shape[1]):
        dst[i, c] = src[j, c]


@inline
def slot_of(h: np.uint64, mask: int) -> int:
    """A slot from a 64-bit key: the top bits of a multiplicative hash."""
    return int((h * MIX) >> np.uint64(40)) & mask


@inline
def addr_find(keys: np.ndarray, used: np.ndarray, addr: int) -> int:
    """The slot holding `addr`, or -1 - (the empty slot where it would go)."""
    mask = len(keys) - 1
    i = slot_of(np.uint64(addr >> 3), mask)
    while used[i]:
        if keys[i] == addr:
            return i
        i = (i + 1) & mask
    return -1 - i


@inline
def addr_delete(keys: np.ndarray, vals: np.ndarray, used: np.ndarray, i: int) -> None:
    """Empty slot `i`, shifting later members of its probe run back (no tombstones)."""
    mask = len(keys) - 1
    j = i
    while True:
        used[i] = 0
        while True:
            j = (j + 1) & mask
            if not used[j]:
                return
            home = slot_of(np.uint64(keys[j] >> 3), mask)
            # j's entry may move to i when its home is not in the cyclic range (i, j]
            if (i <= j and (home <= i or home > j)) or (i > j and home <= i and home > j):
                break
        keys[i] = keys[j]
        copy_row(vals, i, vals, j)
        used[i] = 1
        i = j


@jit
def addr_rehash(
    keys: np.ndarray,
    vals: np.ndarray,
    used: np.ndarray,
    nk: np.ndarray,
    nv: np.ndarray,
    nu: np.ndarray,
) -> None:
    for i in range(len(keys)):
        if used[i]:
            j = -1 - addr_find(nk, nu, keys[i])
            nk[j] = keys[i]
            copy_row(nv, j, vals, i)
            nu[j] = 1


@jit
def node_hash(parent: int, code: int, off: int, entry: int) -> np.uint64:
    h = np.uint64(parent) * np.uint64(0xFF51AFD7ED558CCD)
    h ^= np.uint64(code) * np.uint64(0xC4CEB9FE1A85EC53)
    h ^= np.uint64(off + 7) * np.uint64(0x9FB21C651E98DF25) + np.uint64(entry)
    return h ^ (h >> np.uint64(29))


@jit
def node_get(
    nodes: np.ndarray, ntab: np.ndarray, n_nodes: int, parent: int, code: int, off: int, entry: int
) -> int:
    """The node for a frame pushed on `parent`; a new one (id `n_nodes`) when unseen."""
    mask = len(ntab) - 1
    i = slot_of(node_hash(parent, code, off, entry), mask)
    while ntab[i]:
        n = ntab[i]
        if (
            nodes[n, N_PARENT] == parent
            and nodes[n, N_CODE] == code
            and nodes[n, N_OFF] == off
            and nodes[n, N_ENTRY] == entry
        ):
            return int(n)
        i = (i + 1) & mask
    ntab[i] = n_nodes
    for c in range(nodes.shape[1]):
        nodes[n_nodes, c] = 0
    nodes[n_nodes, N_PARENT] = parent
    nodes[n_nodes, N_CODE] = code
    nodes[n_nodes, N_OFF] = off
    nodes[n_nodes, N_ENTRY] = entry
    return n_nodes


@jit
def node_rehash(nodes: np.ndarray, n_nodes: int, ntab: np.ndarray) -> None:
    mask = len(ntab) - 1
    for n in range(1, n_nodes):
        h = node_hash(nodes[n, N_PARENT], nodes[n, N_CODE], nodes[n, N_OFF], nodes[n, N_ENTRY])
        i = slot_of(h, mask)
        while ntab[i]:
            i = (i + 1) & mask
        ntab[i] = n


@inline
def hist_slot(hkeys: np.ndarray, hused: np.ndarray, a: int, b: int, c: int, d: int) -> int:
    """The slot of key (a, b, c, d), claimed (zeroed counts) when new; -1 - slot when new."""
    mask = len(hkeys) - 1
    h = np.uint64(a) * np.uint64(0xFF51AFD7ED558CCD) ^ np.uint64(b) * np.uint64(0xC4CEB9FE1A85EC53)
    h ^= np.uint64(c) * np.uint64(0x9FB21C651E98DF25) ^ np.uint64(d)
    i = slot_of(h ^ (h >> np.uint64(29)), mask)
    while hused[i]:
        if hkeys[i, 0] == a and hkeys[i, 1] == b and hkeys[i, 2] == c and hkeys[i, 3] == d:
            return i
        i = (i + 1) & mask
    return -1 - i


@jit
def hist_rehash(
    hkeys: np.ndarray,
    hvals: np.ndarray,
    hused: np.ndarray,
    nk: np.ndarray,
    nv: np.ndarray,
    nu: np.ndarray,
) -> None:
    for i in range(len(hkeys)):
        if hused[i]:
            j = -1 - hist_slot(nk, nu, hkeys[i, 0], hkeys[i, 1], hkeys[i, 2], hkeys[i, 3])
            copy_row(nk, j, hkeys, i)
            copy_row(nv, j, hvals, i)
            nu[j] = 1
