"""The compiled walker's stores (numba, cached on disk, GIL-free): interned strings, runs.

A string's id comes from a hash table over its bytes (`_intern`); a list run equal to an
earlier one shares its items (`_list_run`); `_add_run` links a run to its container. The
walker (`kernel.walk`) calls them; `rehash` refills a grown table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.core import numba_registries

numba_registries.load()  # before any of this package compiles or loads code
# Value kinds.
K_NONE, K_FALSE, K_TRUE, K_INT, K_FLOAT, K_STR, K_BYTES, K_DICT, K_LIST, K_TUPLE = range(10)
K_MISSING = 255  # a memo slot never written; a field a dict lacks (extraction)
_PRIME = np.uint64(0x100000001B3)
_BASIS = np.uint64(0xCBF29CE484222325)


@njit(cache=True, nogil=True, inline="always")
def _mix(h: np.uint64, x: np.uint64) -> np.uint64:
    return (h ^ x) * _PRIME


@njit(cache=True, nogil=True)
def _intern(buf, lo, n, is_str, soff, slen, shash, sisstr, strtab, nstr):  # type: ignore[no-untyped-def]
    """Id of the bytes buf[lo:lo+n] in the string table (a new id when first seen)."""
    h = _BASIS
    for j in range(lo, lo + n):
        h = _mix(h, np.uint64(buf[j]))
    mask = len(strtab) - 1
    slot = np.int64(h & np.uint64(mask))
    while True:
        sid = strtab[slot]
        if sid < 0:
            break
        if shash[sid] == h and slen[sid] == n:
            o = soff[sid]
            same = True
            for j in range(n):
                if buf[o + j] != buf[lo + j]:
                    same = False
                    break
            if same:
                if is_str:
                    sisstr[sid] = 1
                return sid, nstr
        slot = (slot + 1) & mask
    sid = nstr
    strtab[slot] = sid
    soff[sid] = lo
    slen[sid] = n
    shash[sid] = h
    sisstr[sid] = 1 if is_str else 0
    return sid, nstr + 1


@njit(cache=True, nogil=True)
def _list_run(sk, sv, a, b, rstart, rhash, rlen, runtab, ik, iv, nitems_total, r):  # type: ignore[no-untyped-def]
    """Store stack[a:b] as list run `r`, sharing the items of an equal earlier run.
    Returns (canonical run, items used after)."""
    n = b - a
    h = _BASIS
    for j in range(a, b):  # a short dependency chain: the multiplies run side by side
        x = (np.uint64(sv[j]) ^ (np.uint64(sk[j]) << np.uint64(58))) * _PRIME
        h = ((h << np.uint64(7)) | (h >> np.uint64(57))) ^ x
    h = _mix(h, np.uint64(n))
    mask = len(runtab) - 1
    slot = np.int64(h & np.uint64(mask))
    while True:
        c = runtab[slot]
        if c < 0:
            break
        if rhash[c] == h and rlen[c] == n:
            o = rstart[c]
            same = True
            for j in range(n):
                if ik[o + j] != sk[a + j] or iv[o + j] != sv[a + j]:
                    same = False
                    break
            if same:
                rstart[r] = o
                return c, nitems_total
        slot = (slot + 1) & mask
    runtab[slot] = r
    rhash[r] = h
    rstart[r] = nitems_total
    for j in range(n):
        ik[nitems_total + j] = sk[a + j]
        iv[nitems_total + j] = sv[a + j]
    return r, nitems_total + n


@njit(cache=True, nogil=True)
def rehash(table: np.ndarray, hashes: np.ndarray, ids: np.ndarray) -> None:
    """Insert `ids` (by their stored hashes) into an emptied, larger table."""
    mask = len(table) - 1
    for i in ids:
        slot = np.int64(hashes[i] & np.uint64(mask))
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = i


@njit(cache=True, nogil=True, inline="always")
def _uint(buf, p, k):  # type: ignore[no-untyped-def]
    """k bytes at p, little-endian, unsigned (k <= 8; k == 8 may come out negative)."""
    v = np.uint64(0)
    for j in range(k):
        v |= np.uint64(buf[p + j]) << np.uint64(8 * j)
    return np.int64(v)


@njit(cache=True, nogil=True)
def _add_run(  # type: ignore[no-untyped-def]
    node, a, b, is_list, nr, ni, nlr, sk, sv, nfirst, nlast, nitems, rs, rl, rn, rc, rh, rt, ik, iv
):
    """Append stack[a:b] to `node` as run `nr` (a list run shares an equal one's items).
    Returns the run, item and list-run counts after."""
    n = b - a
    if is_list:
        c, ni = _list_run(sk, sv, a, b, rs, rh, rl, rt, ik, iv, ni, nr)
        rc[nr] = c
        if c == nr:
            nlr += 1
    else:
        rs[nr] = ni
        ik[ni : ni + n] = sk[a:b]
        iv[ni : ni + n] = sv[a:b]
        ni += n
        rc[nr] = -1
    rl[nr] = n
    rn[nr] = -1
    if nfirst[node] < 0:
        nfirst[node] = nr
    else:
        rn[nlast[node]] = nr
    nlast[node] = nr
    nitems[node] += n
    return nr + 1, ni, nlr
