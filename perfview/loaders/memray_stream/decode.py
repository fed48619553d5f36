"""The record loop: decode one record at a time from the buffer and replay it (`kernel`).

Encoding (memray's record_writer.cpp, header versions 12 and 13): the first byte says what
follows. 1xxxxxxx: an allocation (bits 3-6 index a cache of the 15 latest addresses, 15 a
miss followed by the address >> 3 as a zig-zag delta; bits 0-2 the allocator, 0 when a byte
with it follows; then the native frame delta when native traces are on and it is no free,
then the size as a varint unless it is a free). 01xxxxxe: a Python frame pushed (code object
id, instruction offset). 001xxxxc: an object lifetime event (skipped). 0001nnnn: n+1 frames
popped. Else: 1 trailer, 2 memory record (rss, ms since start), 5 native frame, 6 memory
map start, 7 segment header, 10 thread name, 12 context switch (uint64 thread id), 14 code
object; 0 is padding after the end.
"""

from __future__ import annotations

import numpy as np

from perfview.loaders.memray_stream import kernel as K
from perfview.loaders.memray_stream import tables as T


@T.inline
def cached_address(
    buf: np.ndarray, p: int, st: np.ndarray, recent: np.ndarray, idx: int
) -> tuple[int, int]:
    """The address a record names: from the cache, or a delta read after it (a miss)."""
    if idx != 15:
        return int(recent[idx]), p
    d, p = K.svarint(buf, p)
    st[K.LAST_PTR] += d
    for k in range(14, 0, -1):
        recent[k] = recent[k - 1]
    recent[0] = st[K.LAST_PTR] << 3
    return int(recent[0]), p


BATCH = 256  # records between checks that every table has room for that many more


@T.jit
def room(
    st: np.ndarray,
    nodes: np.ndarray,
    ntab: np.ndarray,
    ak: np.ndarray,
    hk: np.ndarray,
    mem: np.ndarray,
    mm: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
) -> int:
    """Which table (if any) could overflow within the next BATCH records: -1 when none.
    (A record adds at most one address, node, memory record, frame; two history rows.)"""
    if 2 * (st[K.N_LIVE] + BATCH) > len(ak):
        return K.G_ADDR
    if 2 * (st[K.N_HIST] + 2 * BATCH + st[K.N_MMAP]) > len(hk):
        return K.G_HIST
    if st[K.N_MEM] + BATCH >= len(mem):
        return K.G_MEM
    if 2 * st[K.N_MMAP] + 2 * BATCH > len(mm):
        return K.G_MMAP
    if st[K.N_NODES] + BATCH >= len(nodes) or 2 * (st[K.N_NODES] + BATCH) > len(ntab):
        return K.G_NODES
    for t in range(st[K.N_THREADS]):
        if tdepth[t] + BATCH >= tstack.shape[1]:
            return K.G_DEPTH
    return -1


@T.inline
def allocation(
    buf: np.ndarray,
    p: int,
    flags: int,
    st: np.ndarray,
    recent: np.ndarray,
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
    """Decode and replay one allocation record; returns the position after it (-1: damage)."""
    t = st[K.THREAD]
    if t < 0:
        return -1
    addr, p = cached_address(buf, p, st, recent, (flags >> 3) & 15)
    alloc = flags & 7
    if alloc == 0:
        alloc = int(buf[p])
        p += 1
    if alloc < 1 or alloc > 15:
        return -1
    kind = K.KIND[alloc]
    if st[K.NATIVE] and kind != K.FREE:
        d, p = K.svarint(buf, p)
        st[K.LAST_NATIVE] += d
    size = 0
    if kind != K.FREE:
        size, p = K.varint(buf, p)
    K.replay(
        st, nodes, ak, av, au, hk, hv, hu, mm, scratch, tstack, tdepth, tcount, t, addr, kind, size
    )
    return p


@T.jit
def switch(
    st: np.ndarray,
    tids: np.ndarray,
    tid: int,
) -> bool:
    """Make `tid` the current thread; False when the thread table is full."""
    n = st[K.N_THREADS]
    for k in range(n):
        if tids[k] == tid:
            st[K.THREAD] = k
            return True
    if n >= len(tids):
        return False
    tids[n] = tid
    st[K.N_THREADS] = n + 1
    st[K.THREAD] = n
    return True


@T.inline
def frame(
    buf: np.ndarray,
    p: int,
    b: int,
    st: np.ndarray,
    nodes: np.ndarray,
    ntab: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
) -> int:
    """A frame push or pop on the current thread's stack; -1: no thread yet."""
    t = st[K.THREAD]
    if t < 0:
        return -1
    if b & 0x40:
        code, p = K.varint(buf, p)
        off, p = K.svarint(buf, p)
        parent = tstack[t, tdepth[t] - 1] if tdepth[t] > 0 else 0
        node = T.node_get(nodes, ntab, st[K.N_NODES], parent, code, off, b & 1)
        if node == st[K.N_NODES]:
            st[K.N_NODES] += 1
            nodes[node, T.N_THREAD] = t
        tstack[t, tdepth[t]] = node
        tdepth[t] += 1
    else:
        tdepth[t] = max(tdepth[t] - ((b & 15) + 1), 0)
    return p


@T.inline
def object_event(buf: np.ndarray, p: int, b: int, st: np.ndarray, recent: np.ndarray) -> int:
    """An object lifetime event: skipped, keeping the address cache and deltas in step."""
    _, p = cached_address(buf, p, st, recent, (b >> 1) & 15)
    if st[K.NATIVE] and b & 1:
        d, p = K.svarint(buf, p)
        st[K.LAST_NATIVE] += d
    return p


@T.inline
def memory_record(buf: np.ndarray, p: int, st: np.ndarray, mem: np.ndarray) -> int:
    """rss and ms since the start: one memory snapshot, with the heap replayed so far."""
    rss, p = K.varint(buf, p)
    ms, p = K.varint(buf, p)
    m = st[K.N_MEM]
    mem[m, 0] = ms + st[K.START_MS]
    mem[m, 1] = rss
    mem[m, 2] = st[K.HEAP]
    st[K.N_MEM] = m + 1
    return p


@T.inline
def native_index(buf: np.ndarray, p: int, st: np.ndarray) -> int:
    """A native frame (instruction pointer, parent index): kept only as delta state."""
    d, p = K.svarint(buf, p)
    st[K.LAST_IP] += d
    d, p = K.svarint(buf, p)
    st[K.LAST_NATIVE] += d
    return p


@T.jit
def run(
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
    """Replay records from st[POS] until the buffer runs short (NEED_MORE), a record for
    Python (PY_RECORD), a full table (GROW_TABLE, which in st[GROW]), the end or damage."""
    p = st[K.POS]
    budget = 0
    while True:
        st[K.POS] = p
        if p >= n or (not final and p + K.SLACK > n):
            return K.END if final else K.NEED_MORE
        if budget == 0:
            g = room(st, nodes, ntab, ak, hk, mem, mm, tstack, tdepth)
            if g >= 0:
                st[K.GROW] = g
                return K.GROW_TABLE
            budget = BATCH
        budget -= 1
        b = int(buf[p])
        p += 1
        if b & 0x80:
            p = allocation(
                buf,
                p,
                b & 0x7F,
                st,
                recent,
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
        elif b & 0x40 or (b & 0x10 and not b & 0x20):
            p = frame(buf, p, b, st, nodes, ntab, tstack, tdepth)
        elif b & 0x20:
            p = object_event(buf, p, b, st, recent)
        elif b == 2:
            p = memory_record(buf, p, st, mem)
        elif b == 12:
            if not switch(st, tids, K.u64(buf, p)):
                st[K.GROW] = K.G_THREADS
                return K.GROW_TABLE
            p += 8
        elif b == 5:
            p = native_index(buf, p, st)
        elif b == 6:
            pass
        elif b == 7 or b == 10 or b == 14:
            return K.PY_RECORD
        else:  # 1: trailer; 0: padding; anything else: damage, where memray stops too
            return K.END if b <= 1 else K.DAMAGED
        if p < 0 or p > n:  # damage, or a record cut off by the end of the file
            return K.DAMAGED
