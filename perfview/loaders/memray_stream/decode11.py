"""The record loop for header versions 9 to 11 (memray 1.5-1.18), replayed as `decode.run`
does (9 and 10 differ from 11 in their headers only).

Encoding (memray 1.18's record_writer.cpp): each record starts with one byte, the record type
in its low 4 bits and flags in its high 4. 0: trailer (flags 1) or padding; 1: allocation
(flags: the allocator; address as a zig-zag delta of the full address, then the size as a
varint unless it is a free); 2: the same with a native frame delta after the size; 3: a
Python frame's id, function, file and line (flags bit 0: not an entry frame); 4: frame push
(frame id delta, shared with 3); 5: native frame; 6: memory map start; 7: segment header;
9: flags+1 frames popped; 10: thread name; 11: memory record (rss, ms since start); 12:
context switch (uint64 thread id). Frames are named in the stream itself, so a stack node's
key is (parent, frame id).
"""

from __future__ import annotations

import numpy as np

from perfview.loaders.memray_stream import decode as D
from perfview.loaders.memray_stream import kernel as K
from perfview.loaders.memray_stream import tables as T


@T.inline
def allocation11(
    buf: np.ndarray,
    p: int,
    typ: int,
    alloc: int,
    st: np.ndarray,
    nodes: np.ndarray,
    ak: np.ndarray,
    av: np.ndarray,
    au: np.ndarray,
    hk: np.ndarray,
    hv: np.ndarray,
    hu: np.ndarray,
    mm: np.ndarray,
    scratch: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
    tcount: np.ndarray,
) -> int:
    """Decode and replay one allocation record; the position after it (-1: damage)."""
    t = st[K.THREAD]
    if t < 0 or alloc < 1:
        return -1
    d, p = K.svarint(buf, p)
    st[K.LAST_PTR] += d
    kind = K.KIND11[alloc]
    size = 0
    if typ == 2 or kind != K.FREE:
        size, p = K.varint(buf, p)
    if typ == 2:
        d, p = K.svarint(buf, p)
        st[K.LAST_NATIVE] += d
    K.replay(
        st,
        nodes,
        ak,
        av,
        au,
        hk,
        hv,
        hu,
        mm,
        scratch,
        tstack,
        tdepth,
        tcount,
        t,
        st[K.LAST_PTR],
        kind,
        size,
    )
    return p


@T.inline
def frame11(
    buf: np.ndarray,
    p: int,
    typ: int,
    flags: int,
    st: np.ndarray,
    nodes: np.ndarray,
    ntab: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
) -> int:
    t = st[K.THREAD]
    if t < 0:
        return -1
    if typ == 4:
        d, p = K.svarint(buf, p)
        st[K.LAST_FRAME] += d
        parent = tstack[t, tdepth[t] - 1] if tdepth[t] > 0 else 0
        node = T.node_get(nodes, ntab, st[K.N_NODES], parent, st[K.LAST_FRAME], 0, 0)
        if node == st[K.N_NODES]:
            st[K.N_NODES] += 1
            nodes[node, T.N_THREAD] = t
        tstack[t, tdepth[t]] = node
        tdepth[t] += 1
    else:
        tdepth[t] = max(tdepth[t] - (flags + 1), 0)
    return p


@T.jit
def run11(
    buf: np.ndarray,
    n: int,
    final: bool,
    st: np.ndarray,
    recent: np.ndarray,
    nodes: np.ndarray,
    ntab: np.ndarray,
    ak: np.ndarray,
    av: np.ndarray,
    au: np.ndarray,
    hk: np.ndarray,
    hv: np.ndarray,
    hu: np.ndarray,
    mem: np.ndarray,
    mm: np.ndarray,
    scratch: np.ndarray,
    tids: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
    tcount: np.ndarray,
) -> int:
    """`decode.run` for version 11 (same arguments and results)."""
    p = st[K.POS]
    budget = 0
    while True:
        st[K.POS] = p
        if p >= n or (not final and p + K.SLACK > n):
            return K.END if final else K.NEED_MORE
        if budget == 0:
            g = D.room(st, nodes, ntab, ak, hk, mem, mm, tstack, tdepth)
            if g >= 0:
                st[K.GROW] = g
                return K.GROW_TABLE
            budget = D.BATCH
        budget -= 1
        b = int(buf[p])
        p += 1
        typ, flags = b & 15, b >> 4
        if typ == 1 or typ == 2:
            p = allocation11(
                buf,
                p,
                typ,
                flags,
                st,
                nodes,
                ak,
                av,
                au,
                hk,
                hv,
                hu,
                mm,
                scratch,
                tstack,
                tdepth,
                tcount,
            )
        elif typ == 4 or typ == 9:
            p = frame11(buf, p, typ, flags, st, nodes, ntab, tstack, tdepth)
        elif typ == 11:
            p = D.memory_record(buf, p, st, mem)
        elif typ == 12:
            if not D.switch(st, tids, K.u64(buf, p)):
                st[K.GROW] = K.G_THREADS
                return K.GROW_TABLE
            p += 8
        elif typ == 5:
            p = D.native_index(buf, p, st)
        elif typ == 6:
            pass
        elif typ == 3 or typ == 7 or typ == 10:
            return K.PY_RECORD
        else:  # 0 with flags 1: trailer; 0: padding; anything else: damage
            return K.END if typ == 0 else K.DAMAGED
        if p < 0 or p > n:
            return K.DAMAGED
