"""The compiled replay of memray's record stream (every format version: see `decode`).

`run` decodes records from a buffer of the decompressed stream and replays them as memray's
readers do, all in one pass:
- the heap high-water mark, as memray's HighWatermarkFinder (an allocation adds its size, a
  free subtracts the size of the live allocation at that address, ties move the peak later);
- per stack node, the allocations alive now and at the latest peak (memray replays the stream
  up to the peak a second time; here a node saves its counts the first time it changes after
  a new peak, so one pass suffices): these give the peak and leak tables;
- per (snapshot allocated, snapshot freed, thread, node), the allocations freed (temporal view);
- the memory records (rss, heap now) and the per-thread record counts.

Records that carry strings (code objects, thread names, memory maps) are returned to Python
(`PY_RECORD`), which parses them and moves `st[POS]` past them. mmap/munmap ranges live in a
short list, as memray's interval "tree" does.
"""

from __future__ import annotations

import numpy as np

from perfview.loaders.memray.stream import tables as T

# st[] slots
POS, LAST_PTR, LAST_NATIVE, LAST_IP, THREAD, RECORDS, HEAP, PEAK, PENDING, EPOCH = range(10)
N_MEM, N_NODES, N_LIVE, N_HIST, N_MMAP, N_THREADS, GROW, NATIVE, START_MS, MMAP_IDS = range(10, 20)
LAST_LINE, LAST_FRAME = 20, 21
ST_SIZE = 24
# run() results
NEED_MORE, END, PY_RECORD, GROW_TABLE, DAMAGED = range(5)
# what to grow (st[GROW])
G_ADDR, G_NODES, G_HIST, G_MEM, G_MMAP, G_THREADS, G_DEPTH = range(7)
# allocator kinds (memray hooks::allocatorKind), indexed by allocator id
SIMPLE, FREE, RANGED, UNMAP = 1, 2, 3, 4
KIND = np.array(
    [0, FREE, SIMPLE, SIMPLE, SIMPLE, FREE, SIMPLE, SIMPLE] + [SIMPLE] * 6 + [RANGED, UNMAP],
    dtype=np.int64,
)
# version 11 (memray <= 1.18) numbered them otherwise: malloc 1, free 2, ..., mmap 10, munmap
# 11, then pymalloc's malloc, calloc, realloc and free as 12-15
KIND11 = np.array(
    [0, SIMPLE, FREE] + [SIMPLE] * 7 + [RANGED, UNMAP, SIMPLE, SIMPLE, SIMPLE, FREE],
    dtype=np.int64,
)
# address values (size, node, thread, generation); mmap rows
V_SIZE, V_NODE, V_THREAD, V_GEN = range(4)
M_BEGIN, M_END, M_ID, M_NODE, M_THREAD, M_GEN = range(6)
SLACK = 64  # bytes a kernel-decoded record can take at most


@T.inline
def varint(buf: np.ndarray, p: int) -> tuple[int, int]:
    val = 0
    shift = 0
    while True:
        b = int(buf[p])
        p += 1
        val |= (b & 0x7F) << shift
        if b < 0x80 or shift >= 63:
            return val, p
        shift += 7


@T.inline
def svarint(buf: np.ndarray, p: int) -> tuple[int, int]:
    z, p = varint(buf, p)
    return (z >> 1) ^ -(z & 1), p


@T.jit
def u64(buf: np.ndarray, p: int) -> int:
    v = 0
    for k in range(8):
        v |= int(buf[p + k]) << (8 * k)
    return v


@T.inline
def site_add(nodes: np.ndarray, st: np.ndarray, node: int, count: int, size: int) -> None:
    """Change a node's live allocations, first saving them as they were at the latest peak."""
    if nodes[node, T.N_EPOCH] < st[EPOCH]:
        nodes[node, T.N_HCNT] = nodes[node, T.N_CNT]
        nodes[node, T.N_HBYTES] = nodes[node, T.N_BYTES]
        nodes[node, T.N_EPOCH] = st[EPOCH]
    nodes[node, T.N_CNT] += count
    nodes[node, T.N_BYTES] += size


@T.inline
def hist_add(
    hk: np.ndarray,
    hv: np.ndarray,
    hu: np.ndarray,
    st: np.ndarray,
    gen: int,
    thread: int,
    node: int,
    count: int,
    size: int,
) -> None:
    """An allocation made before snapshot `gen` was freed now: memray's lifetime history
    (nothing when it was made and freed between the same two snapshots)."""
    if gen == st[N_MEM]:
        return
    i = T.hist_slot(hk, hu, gen, st[N_MEM], thread, node)
    if i < 0:
        i = -1 - i
        hk[i, 0] = gen
        hk[i, 1] = st[N_MEM]
        hk[i, 2] = thread
        hk[i, 3] = node
        hv[i, 0] = 0
        hv[i, 1] = 0
        hu[i] = 1
        st[N_HIST] += 1
    hv[i, 0] += count
    hv[i, 1] += size


@T.inline
def simple_alloc(
    st: np.ndarray,
    nodes: np.ndarray,
    ak: np.ndarray,
    av: np.ndarray,
    au: np.ndarray,
    addr: int,
    size: int,
    node: int,
    thread: int,
) -> None:
    i = T.addr_find(ak, au, addr)
    if i >= 0:  # a second allocation at a live address replaces it (memray does the same)
        site_add(nodes, st, av[i, V_NODE], -1, -av[i, V_SIZE])
    else:
        i = -1 - i
        ak[i] = addr
        au[i] = 1
        st[N_LIVE] += 1
    av[i, V_SIZE] = size
    av[i, V_NODE] = node
    av[i, V_THREAD] = thread
    av[i, V_GEN] = st[N_MEM]
    st[HEAP] += size
    site_add(nodes, st, node, 1, size)


@T.inline
def simple_free(
    st: np.ndarray,
    nodes: np.ndarray,
    ak: np.ndarray,
    av: np.ndarray,
    au: np.ndarray,
    hk: np.ndarray,
    hv: np.ndarray,
    hu: np.ndarray,
    addr: int,
) -> None:
    i = T.addr_find(ak, au, addr)
    if i < 0:
        return
    size = av[i, V_SIZE]
    node = av[i, V_NODE]
    st[HEAP] -= size
    site_add(nodes, st, node, -1, -size)
    hist_add(hk, hv, hu, st, av[i, V_GEN], av[i, V_THREAD], node, 1, size)
    T.addr_delete(ak, av, au, i)
    st[N_LIVE] -= 1


@T.jit
def unmap(
    st: np.ndarray,
    nodes: np.ndarray,
    mm: np.ndarray,
    scratch: np.ndarray,
    hk: np.ndarray,
    hv: np.ndarray,
    hu: np.ndarray,
    start: int,
    size: int,
) -> None:
    """munmap: cut [start, start + size) out of the mapped ranges, as memray's interval tree
    does (a range freed whole, shrunk at one end, or split in two)."""
    if size <= 0:
        return
    end = start + size
    n = st[N_MMAP]
    kept = 0
    removed = 0
    for i in range(n):
        b, e = mm[i, M_BEGIN], mm[i, M_END]
        lo, hi = max(b, start), min(e, end)
        if hi <= lo:
            T.copy_row(scratch, n + kept, mm, i)
            kept += 1
            continue
        st[HEAP] -= hi - lo
        T.copy_row(scratch, removed, mm, i)
        scratch[removed, M_BEGIN] = hi - lo  # bytes freed from this range
        if lo == b and hi == e:
            scratch[removed, M_END] = -1  # one range fewer
        elif lo > b and hi < e:
            scratch[removed, M_END] = 1  # one range more
            T.copy_row(scratch, n + kept, mm, i)
            scratch[n + kept, M_END] = lo
            kept += 1
            T.copy_row(scratch, n + kept, mm, i)
            scratch[n + kept, M_BEGIN] = hi
            kept += 1
        else:
            scratch[removed, M_END] = 0
            T.copy_row(scratch, n + kept, mm, i)
            if lo == b:
                scratch[n + kept, M_BEGIN] = hi
            else:
                scratch[n + kept, M_END] = lo
            kept += 1
        removed += 1
    for r in range(removed):
        rid = scratch[r, M_ID]
        site_add(nodes, st, scratch[r, M_NODE], scratch[r, M_END], -scratch[r, M_BEGIN])
        refs = 0  # memray counts the free only when this removal holds the last reference
        for k in range(removed):
            refs += scratch[k, M_ID] == rid
        for k in range(kept):
            refs += scratch[n + k, M_ID] == rid
        hist_add(
            hk,
            hv,
            hu,
            st,
            scratch[r, M_GEN],
            scratch[r, M_THREAD],
            scratch[r, M_NODE],
            1 if refs == 1 else 0,
            scratch[r, M_BEGIN],
        )
    for k in range(kept):
        T.copy_row(mm, k, scratch, n + k)
    st[N_MMAP] = kept


@T.inline
def replay(
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
    t: int,
    addr: int,
    kind: int,
    size: int,
) -> None:
    """Replay one decoded allocation record (any format version) of thread slot `t`."""
    if st[PENDING]:  # the state before this record was the highest yet: a new peak
        st[EPOCH] += 1
        st[PENDING] = 0
    node = tstack[t, tdepth[t] - 1] if tdepth[t] > 0 else 0
    if kind == SIMPLE:
        simple_alloc(st, nodes, ak, av, au, addr, size, node, t)
    elif kind == FREE:
        simple_free(st, nodes, ak, av, au, hk, hv, hu, addr)
    elif kind == RANGED:
        st[HEAP] += size
        if size > 0:
            n = st[N_MMAP]
            mm[n, M_BEGIN] = addr
            mm[n, M_END] = addr + size
            mm[n, M_ID] = st[MMAP_IDS]
            mm[n, M_NODE] = node
            mm[n, M_THREAD] = t
            mm[n, M_GEN] = st[N_MEM]
            st[N_MMAP] = n + 1
            st[MMAP_IDS] += 1
            site_add(nodes, st, node, 1, size)
    else:
        unmap(st, nodes, mm, scratch, hk, hv, hu, addr, size)
    if st[HEAP] >= st[PEAK]:
        st[PEAK] = st[HEAP]
        st[PENDING] = 1
    st[RECORDS] += 1
    tcount[t] += 1
