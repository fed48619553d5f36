"""Compiled columns of a CUDA memory snapshot from a walked pickle's graph (numba, GIL-free).

`extract` reads the segments, blocks and trace entries of the graph `pickle_walk` built, with
exactly the rules `cuda_snapshot.snapshot_from_data` applies to the unpickled dicts (a field
a dict lacks is 0 or ""; a later duplicate key wins; non-dict blocks and entries are skipped;
the "repeated references" bound is checked before anything is read). Where those rules would
turn an odd value into something (a float address, a None segment type, a bool size) it says
BAIL instead, and the caller uses the restricted unpickler: this path only has to be right for
what it accepts. `cuda_stacks.intern_stacks` then gives every `frames` list its stack id.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.cuda_snapshot.pickle_walk.kernel import (
    K_DICT,
    K_FLOAT,
    K_INT,
    K_LIST,
    K_MISSING,
    K_NONE,
    K_STR,
    K_TRUE,
)

# The field names `extract` looks up, in this order (their string ids are its `keys`).
KEYS = (
    "device", "address", "total_size", "allocated_size", "active_size", "requested_size",
    "stream", "segment_type", "is_expandable", "frames", "blocks",  # segments: 0-10
    "size", "state",  # blocks (also address, requested_size, frames): 11-12
    "action", "addr", "time_us",  # trace entries (also size, stream, frames): 13-15
    "name", "filename", "line",  # frames: 16-18
)  # fmt: skip
OK, BAIL = 0, 1
_LIMIT_US = 2**53


@njit(cache=True, nogil=True)
def _fields(node, keys, fk, fv, nfirst, rn, rs, rl, ik, iv):  # type: ignore[no-untyped-def]
    """fk/fv[j]: the value of key `keys[j]` in dict `node` (the last one written), or MISSING."""
    for j in range(len(fk)):
        fk[j] = K_MISSING
    r = nfirst[node]
    while r >= 0:
        for p in range(rs[r], rs[r] + rl[r], 2):
            if ik[p] == K_STR:
                for j in range(len(keys)):
                    if iv[p] == keys[j]:
                        fk[j] = ik[p + 1]
                        fv[j] = iv[p + 1]
        r = rn[r]


@njit(cache=True, nogil=True, inline="always")
def _int(k, v):  # type: ignore[no-untyped-def]
    """`cuda_columns._int`: (ok, value); an int is itself, a float is left to the fallback,
    anything else (missing, None, bool, text) is 0."""
    if k == K_INT:
        return True, v
    return k != K_FLOAT, 0


@njit(cache=True, nogil=True, inline="always")
def _column_int(k, v):  # type: ignore[no-untyped-def]
    """`cuda_columns._int_column`'s value where it is exact: ints, and missing/None as 0."""
    if k == K_INT:
        return True, v
    return k in (K_MISSING, K_NONE), 0


@njit(cache=True, nogil=True, inline="always")
def _text(k, v, none_is_empty):  # type: ignore[no-untyped-def]
    """String id of a text field (0: ""), ok False for what str() would spell otherwise."""
    if k == K_STR:
        return True, v
    return k == K_MISSING or (none_is_empty and k == K_NONE), 0


@njit(cache=True, nogil=True)
def _count(keys, seg_node, dt_kind, dt_node, nkind, nfirst, rn, rs, rl, nitems, ik, iv):  # type: ignore[no-untyped-def]
    """(records named, at most this many blocks, trace entries, ok) — `_check_size`'s count."""
    fk = np.empty(len(keys), dtype=np.uint8)
    fv = np.empty(len(keys), dtype=np.int64)
    count = nitems[seg_node]
    blocks = 0
    r = nfirst[seg_node]
    while r >= 0:
        for p in range(rs[r], rs[r] + rl[r]):
            if ik[p] != K_DICT:
                return 0, 0, 0, False
            _fields(iv[p], keys[10:11], fk[:1], fv[:1], nfirst, rn, rs, rl, ik, iv)
            if fk[0] == K_LIST:
                blocks += nitems[fv[0]]
        r = rn[r]
    entries = 0
    if dt_kind == K_LIST:
        r = nfirst[dt_node]
        while r >= 0:
            for p in range(rs[r], rs[r] + rl[r]):
                if ik[p] == K_LIST:
                    entries += nitems[iv[p]]
            r = rn[r]
    return count + blocks + entries, blocks, entries, True


@njit(cache=True, nogil=True)
def extract(  # type: ignore[no-untyped-def]
    kseg,
    kblk,
    kent,
    seg_node,
    dt_kind,
    dt_node,
    max_items,
    nkind,
    nfirst,
    rn,
    rs,
    rl,
    nitems,
    ik,
    iv,
):
    """Columns of segments, blocks and trace entries, and every `frames` value (refs) in the
    order the interner meets them. Key arrays: kseg = KEYS[0:11]; kblk = address, size,
    requested_size, state, frames; kent = action, addr, size, stream, time_us, frames."""
    e64 = np.zeros((0, 0), dtype=np.int64)
    e1 = np.zeros(0, dtype=np.int64)
    eb = np.zeros(0, dtype=np.bool_)
    ek = np.zeros(0, dtype=np.uint8)
    bad = (BAIL, e64, e1, eb, e64, e1, e64, e1, ek, e1, e1, e1, 0, 0, False)
    count, nblk, nent, ok = _count(kseg, seg_node, dt_kind, dt_node, nkind, nfirst, rn, rs, rl, nitems, ik, iv)  # fmt: skip  # noqa: E501
    if not ok or count > max_items:
        return bad
    nseg = nitems[seg_node]
    seg = np.empty((7, nseg), dtype=np.int64)
    seg_type = np.empty(nseg, dtype=np.int64)
    seg_exp = np.empty(nseg, dtype=np.bool_)
    blk = np.empty((5, nblk), dtype=np.int64)
    blk_state = np.empty(nblk, dtype=np.int64)
    ent = np.empty((6, nent), dtype=np.int64)
    action = np.empty(nent, dtype=np.int64)
    ref_k = np.empty(nseg + nblk + nent, dtype=np.uint8)
    ref_v = np.empty(nseg + nblk + nent, dtype=np.int64)
    seg_ref = np.empty(nseg, dtype=np.int64)
    blk_ref = np.empty(nblk, dtype=np.int64)
    fk = np.empty(len(kseg), dtype=np.uint8)
    fv = np.empty(len(kseg), dtype=np.int64)
    bk = np.empty(len(kblk), dtype=np.uint8)
    bv = np.empty(len(kblk), dtype=np.int64)
    i = b = nref = 0
    r = nfirst[seg_node]
    while r >= 0:
        for p in range(rs[r], rs[r] + rl[r]):
            _fields(iv[p], kseg, fk, fv, nfirst, rn, rs, rl, ik, iv)
            for c in range(7):
                good, seg[c, i] = _int(fk[c], fv[c])
                if not good:
                    return bad
            good, seg_type[i] = _text(fk[7], fv[7], False)
            x = fk[8]
            if not good or not (x in (K_MISSING, K_INT) or x <= K_TRUE):
                return bad
            seg_exp[i] = x == K_TRUE or (x == K_INT and fv[8] != 0)
            seg_ref[i] = nref
            ref_k[nref] = fk[9]
            ref_v[nref] = fv[9]
            nref += 1
            if fk[10] == K_LIST:
                r2 = nfirst[fv[10]]
                while r2 >= 0:
                    for q in range(rs[r2], rs[r2] + rl[r2]):
                        if ik[q] != K_DICT:
                            continue
                        _fields(iv[q], kblk, bk, bv, nfirst, rn, rs, rl, ik, iv)
                        blk[0, b] = i
                        blk[1, b] = seg[0, i]
                        for c in range(3):  # address, size, requested_size
                            good, blk[2 + c, b] = _int(bk[c], bv[c])
                            if not good:
                                return bad
                        good, blk_state[b] = _text(bk[3], bv[3], False)
                        if not good:
                            return bad
                        blk_ref[b] = nref
                        ref_k[nref] = bk[4]
                        ref_v[nref] = bv[4]
                        nref += 1
                        b += 1
                    r2 = rn[r2]
            i += 1
        r = rn[r]
    n, has_time, ok = _entries(kent, dt_kind, dt_node, ent, action, ref_k, ref_v, nref, nfirst, rn, rs, rl, ik, iv)  # fmt: skip  # noqa: E501
    if not ok:
        return bad
    refs = nref + n
    return (OK, seg, seg_type, seg_exp, blk[:, :b], blk_state[:b], ent[:, :n], action[:n],
            ref_k[:refs], ref_v[:refs], seg_ref, blk_ref[:b], nref, n, has_time)  # fmt: skip


@njit(cache=True, nogil=True)
def _entries(kent, dt_kind, dt_node, ent, action, ref_k, ref_v, nref, nfirst, rn, rs, rl, ik, iv):  # type: ignore[no-untyped-def]
    """Trace entries (device, seq, addr, size, stream, ts_ns) and actions; refs after `nref`."""
    fk = np.empty(len(kent), dtype=np.uint8)
    fv = np.empty(len(kent), dtype=np.int64)
    n = 0
    has_time = False
    if dt_kind != K_LIST:
        return 0, False, True
    device = 0
    r = nfirst[dt_node]
    while r >= 0:
        for p in range(rs[r], rs[r] + rl[r]):
            if ik[p] == K_LIST:
                seq = 0
                r2 = nfirst[iv[p]]
                while r2 >= 0:
                    for q in range(rs[r2], rs[r2] + rl[r2]):
                        if ik[q] != K_DICT:
                            continue
                        _fields(iv[q], kent, fk, fv, nfirst, rn, rs, rl, ik, iv)
                        good, action[n] = _text(fk[0], fv[0], True)
                        if not good:
                            return 0, False, False
                        ent[0, n] = device
                        ent[1, n] = seq
                        for c in range(3):  # addr, size, stream
                            good, ent[2 + c, n] = _column_int(fk[1 + c], fv[1 + c])
                            if not good:
                                return 0, False, False
                        t = fv[4]
                        ent[5, n] = -1
                        if fk[4] == K_INT:
                            has_time = True
                            if -_LIMIT_US < t < _LIMIT_US and t >= 0:
                                ent[5, n] = t * 1000
                        ref_k[nref + n] = fk[5]
                        ref_v[nref + n] = fv[5]
                        n += 1
                        seq += 1
                    r2 = rn[r2]
            device += 1
        r = rn[r]
    return n, has_time, True
