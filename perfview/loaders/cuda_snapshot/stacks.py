"""Compiled stack interning for the CUDA snapshot's compiled path (numba, GIL-free).

`intern_stacks` gives every `frames` value that `cuda_walk.extract` collected its stack id,
numbering frames and stacks in the order `cuda_columns._Interner` meets them: a frames list
already seen (the same node, or an equal run the walker shared) costs one lookup.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.cuda_snapshot.pickle_walk.kernel import K_DICT, K_LIST
from perfview.loaders.cuda_snapshot.walk import _fields, _int, _text

_PRIME = np.uint64(0x100000001B3)
_BASIS = np.uint64(0xCBF29CE484222325)


@njit(cache=True, nogil=True, inline="always")
def _mix(h, x):  # type: ignore[no-untyped-def]
    return (h ^ np.uint64(x)) * _PRIME


@njit(cache=True, nogil=True)
def _bigger(a, need):  # type: ignore[no-untyped-def]
    """1-d `a` with room for `need` entries."""
    if len(a) >= need:
        return a
    b = np.empty(max(2 * len(a), need), dtype=a.dtype)
    b[: len(a)] = a
    return b


@njit(cache=True, nogil=True)
def _bigger2(a, need):  # type: ignore[no-untyped-def]
    """2-d `a` with room for `need` columns."""
    if a.shape[1] >= need:
        return a
    b = np.empty((a.shape[0], max(2 * a.shape[1], need)), dtype=a.dtype)
    b[:, : a.shape[1]] = a
    return b


@njit(cache=True, nogil=True)
def _table(hashes, count):  # type: ignore[no-untyped-def]
    """An open-addressing table (power of 2, under half full) of ids 0..count-1."""
    size = 1024
    while size < 4 * count:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)
    mask = size - 1
    for i in range(count):
        slot = np.int64(hashes[i] & np.uint64(mask))
        while table[slot] >= 0:
            slot = (slot + 1) & mask
        table[slot] = i
    return table


@njit(cache=True, nogil=True)
def _frame_id(node, kfr, fk, fv, nfirst, rn, rs, rl, ik, iv, fr, fh, nf, ftab):  # type: ignore[no-untyped-def]
    """(frame id of frame dict `node` (-1: not exact here, BAIL), frames now, fr, fh, ftab)."""
    _fields(node, kfr, fk, fv, nfirst, rn, rs, rl, ik, iv)
    ok1, name = _text(fk[0], fv[0], False)
    ok2, file = _text(fk[1], fv[1], False)
    ok3, line = _int(fk[2], fv[2])
    if not (ok1 and ok2 and ok3):
        return -1, nf, fr, fh, ftab
    h = _mix(_mix(_mix(_BASIS, name), file), line)
    mask = len(ftab) - 1
    slot = np.int64(h & np.uint64(mask))
    while ftab[slot] >= 0:
        f = ftab[slot]
        if fh[f] == h and fr[0, f] == name and fr[1, f] == file and fr[2, f] == line:
            return f, nf, fr, fh, ftab
        slot = (slot + 1) & mask
    fr = _bigger2(fr, nf + 1)
    fh = _bigger(fh, nf + 1)
    fr[0, nf] = name
    fr[1, nf] = file
    fr[2, nf] = line
    fh[nf] = h
    ftab[slot] = nf
    if 2 * (nf + 1) > len(ftab):
        ftab = _table(fh, nf + 1)
    return nf, nf + 1, fr, fh, ftab


@njit(cache=True, nogil=True)
def intern_stacks(ref_k, ref_v, kfr, n_nodes, n_runs, nfirst, nlast, rn, rs, rl, rc, ik, iv):  # type: ignore[no-untyped-def]
    """Stack id of each `frames` value (0: not a list, empty, or no frame dicts), the frames
    (rows name id, filename id, line) and the stacks (offsets, flat frame ids), numbered as
    `cuda_columns._Interner` numbers them. ok False: a frame field it leaves to the fallback."""
    node_stack = np.full(n_nodes, -1, dtype=np.int64)
    run_stack = np.full(n_runs, -1, dtype=np.int64)
    node_frame = np.full(n_nodes, -1, dtype=np.int64)
    fk = np.empty(3, dtype=np.uint8)
    fv = np.empty(3, dtype=np.int64)
    fr = np.empty((3, 1024), dtype=np.int64)
    fh = np.empty(1024, dtype=np.uint64)
    ftab = np.full(2048, -1, dtype=np.int64)
    nf = 0
    soff = np.zeros(1025, dtype=np.int64)  # stack 0: the empty stack
    sh = np.empty(1024, dtype=np.uint64)
    sh[0] = _BASIS
    ns = 1
    stab = _table(sh, 1)
    flat = np.empty(4096, dtype=np.int64)
    tmp = np.empty(256, dtype=np.int64)
    out = np.zeros(len(ref_k), dtype=np.int32)
    for j in range(len(ref_k)):
        if ref_k[j] != K_LIST:
            continue
        node = ref_v[j]
        if node_stack[node] >= 0:
            out[j] = node_stack[node]
            continue
        first = nfirst[node]
        single = first >= 0 and first == nlast[node]
        if single and run_stack[rc[first]] >= 0:
            node_stack[node] = out[j] = run_stack[rc[first]]
            continue
        m = 0
        r = first
        while r >= 0:
            tmp = _bigger(tmp, m + rl[r])
            for q in range(rs[r], rs[r] + rl[r]):
                if ik[q] == K_DICT:
                    f = node_frame[iv[q]]
                    if f < 0:
                        f, nf, fr, fh, ftab = _frame_id(iv[q], kfr, fk, fv, nfirst, rn, rs, rl, ik, iv, fr, fh, nf, ftab)  # fmt: skip  # noqa: E501
                        if f < 0:
                            return False, out, fr[:, :0], soff[:1], flat[:0]
                        node_frame[iv[q]] = f
                    tmp[m] = f
                    m += 1
            r = rn[r]
        h = _BASIS
        for k in range(m):
            h = _mix(h, tmp[k])
        mask = len(stab) - 1
        slot = np.int64(h & np.uint64(mask))
        s = -1
        while stab[slot] >= 0:
            c = stab[slot]
            if sh[c] == h and soff[c + 1] - soff[c] == m:
                same = True
                for k in range(m):
                    if flat[soff[c] + k] != tmp[k]:
                        same = False
                        break
                if same:
                    s = c
                    break
            slot = (slot + 1) & mask
        if s < 0:
            s = ns
            sh = _bigger(sh, ns + 1)
            soff = _bigger(soff, ns + 2)
            flat = _bigger(flat, soff[ns] + m)
            flat[soff[ns] : soff[ns] + m] = tmp[:m]
            soff[ns + 1] = soff[ns] + m
            sh[ns] = h
            stab[slot] = ns
            ns += 1
            if 2 * ns > len(stab):
                stab = _table(sh, ns)
        node_stack[node] = out[j] = s
        if single:
            run_stack[rc[first]] = s
    return True, out, fr[:, :nf], soff[: ns + 1], flat[: soff[ns]]
