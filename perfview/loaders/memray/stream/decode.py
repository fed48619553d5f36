"""The record loop: decode one record at a time from the buffer and replay it (`kernel`),
for every format version, as the table `ENCODINGS` describes each one.

memray changed its record encoding with format version 12 (memray 1.19); the loop, the
tables it fills and most records are the same, so one compiled `run` reads them all, given
the version's `Encoding`: which record each first byte starts (`first_byte`), how its
allocator ids map to allocation kinds (`kinds`), and whether allocations and frame pushes
use the compact encoding of 12+ (`compact`), whose decoders differ from 9-11's.

Versions 12 and 13 (memray's record_writer.cpp): the first byte says what follows.
1xxxxxxx: an allocation (bits 3-6 index a cache of the 15 latest addresses, 15 a miss
followed by the address >> 3 as a zig-zag delta; bits 0-2 the allocator, 0 when a byte with
it follows; then the native frame delta when native traces are on and it is no free, then
the size as a varint unless it is a free). 01xxxxxe: a Python frame pushed (code object id,
instruction offset). 001xxxxc: an object lifetime event (skipped). 0001nnnn: n+1 frames
popped. Else: 1 trailer, 2 memory record (rss, ms since start), 5 native frame, 6 memory map
start, 7 segment header, 10 thread name, 12 context switch (uint64 thread id), 14 code
object; 0 is padding after the end.

Versions 9 to 11 (memray 1.4-1.18; 9 and 10 differ from 11 in their headers only): each
record starts with one byte, the record type in its low 4 bits and flags in its high 4.
0: trailer (flags 1) or padding; 1: allocation (flags: the allocator; address as a zig-zag
delta of the full address, then the size as a varint unless it is a free); 2: the same with
a native frame delta after the size; 3: a Python frame's id, function, file and line (flags
bit 0: not an entry frame); 4: frame push (frame id delta, shared with 3); 5: native frame;
6: memory map start; 7: segment header; 9: flags+1 frames popped; 10: thread name; 11:
memory record (rss, ms since start); 12: context switch (uint64 thread id). Frames are named
in the stream itself, so a stack node's key is (parent, frame id).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfview.loaders.memray.stream import kernel as K
from perfview.loaders.memray.stream import tables as T

# What a record's first byte starts, as the loop dispatches it.
(
    R_DAMAGED,  # no record of this version: the stream is damaged (memray stops there too)
    R_END,  # the trailer, or the padding after it
    R_ALLOCATION,
    R_FRAME,  # a frame push or pop
    R_OBJECT,  # an object lifetime event (12+), skipped
    R_MEMORY,  # rss and time: a memory snapshot
    R_SWITCH,  # the thread that the next records belong to
    R_NATIVE,  # a native frame: delta state only
    R_MMAP,  # a memory map starts: nothing to read
    R_PYTHON,  # carries strings: parsed in Python (`replay.py_record`)
) = range(10)


def _first_byte_12() -> np.ndarray:
    table = np.full(256, R_DAMAGED, np.int8)
    other = {0: R_END, 1: R_END, 2: R_MEMORY, 5: R_NATIVE, 6: R_MMAP, 12: R_SWITCH}
    other |= {7: R_PYTHON, 10: R_PYTHON, 14: R_PYTHON}
    for b in range(256):
        if b & 0x80:
            table[b] = R_ALLOCATION
        elif b & 0x40 or (b & 0x10 and not b & 0x20):
            table[b] = R_FRAME
        elif b & 0x20:
            table[b] = R_OBJECT
        else:
            table[b] = other.get(b, R_DAMAGED)
    return table


def _first_byte_11() -> np.ndarray:
    by_type = {0: R_END, 1: R_ALLOCATION, 2: R_ALLOCATION, 4: R_FRAME, 9: R_FRAME}
    by_type |= {5: R_NATIVE, 6: R_MMAP, 11: R_MEMORY, 12: R_SWITCH}
    by_type |= {3: R_PYTHON, 7: R_PYTHON, 10: R_PYTHON}
    return np.array([by_type.get(b & 15, R_DAMAGED) for b in range(256)], np.int8)


@dataclass(frozen=True)
class Encoding:
    """How one format version encodes its records (see the module docstring)."""

    first_byte: np.ndarray  # the record kind (R_*) each first byte starts
    kinds: np.ndarray  # allocator id → allocation kind (`kernel.KIND`, `kernel.KIND11`)
    compact: bool  # 12+: cached addresses, allocator in the first byte, code-object frames


COMPACT = Encoding(first_byte=_first_byte_12(), kinds=K.KIND, compact=True)
BY_TYPE = Encoding(first_byte=_first_byte_11(), kinds=K.KIND11, compact=False)
ENCODINGS = {9: BY_TYPE, 10: BY_TYPE, 11: BY_TYPE, 12: COMPACT, 13: COMPACT}


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
    buf: np.ndarray, p: int, flags: int, kinds: np.ndarray, st: np.ndarray, recent: np.ndarray
) -> tuple[int, int, int, int]:
    """Decode one allocation record of 12+: (the position after it, address, allocation
    kind, size); the position is -1 for damage."""
    addr, p = cached_address(buf, p, st, recent, (flags >> 3) & 15)
    alloc = flags & 7
    if alloc == 0:
        alloc = int(buf[p])
        p += 1
    if alloc < 1 or alloc > 15:
        return -1, 0, 0, 0
    kind = kinds[alloc]
    if st[K.NATIVE] and kind != K.FREE:
        d, p = K.svarint(buf, p)
        st[K.LAST_NATIVE] += d
    size = 0
    if kind != K.FREE:
        size, p = K.varint(buf, p)
    return p, addr, kind, size


@T.inline
def push(
    st: np.ndarray,
    nodes: np.ndarray,
    ntab: np.ndarray,
    tstack: np.ndarray,
    tdepth: np.ndarray,
    t: int,
    code: int,
    off: int,
    entry: int,
) -> None:
    """Push the frame (code, offset, entry) on thread slot `t`'s stack: its stack node is
    the child of the node on top, made the first time that path is seen."""
    parent = tstack[t, tdepth[t] - 1] if tdepth[t] > 0 else 0
    node = T.node_get(nodes, ntab, st[K.N_NODES], parent, code, off, entry)
    if node == st[K.N_NODES]:
        st[K.N_NODES] += 1
        nodes[node, T.N_THREAD] = t
    tstack[t, tdepth[t]] = node
    tdepth[t] += 1


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
    """A frame push (code object id, instruction offset) or pop on the current thread's
    stack in versions 12+; -1: no thread yet."""
    t = st[K.THREAD]
    if t < 0:
        return -1
    if b & 0x40:
        code, p = K.varint(buf, p)
        off, p = K.svarint(buf, p)
        push(st, nodes, ntab, tstack, tdepth, t, code, off, b & 1)
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


@T.inline
def allocation11(
    buf: np.ndarray, p: int, typ: int, alloc: int, kinds: np.ndarray, st: np.ndarray
) -> tuple[int, int, int, int]:
    """Decode one allocation record of versions 9-11 (type 1, or 2 with a native frame delta
    after the size): as `allocation`."""
    if alloc < 1:
        return -1, 0, 0, 0
    d, p = K.svarint(buf, p)
    st[K.LAST_PTR] += d
    kind = kinds[alloc]
    size = 0
    if typ == 2 or kind != K.FREE:
        size, p = K.varint(buf, p)
    if typ == 2:
        d, p = K.svarint(buf, p)
        st[K.LAST_NATIVE] += d
    return p, st[K.LAST_PTR], kind, size


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
    """A frame push (type 4: a frame id delta) or pop (type 9) on the current thread's stack
    in versions 9-11; -1: no thread yet."""
    t = st[K.THREAD]
    if t < 0:
        return -1
    if typ == 4:
        d, p = K.svarint(buf, p)
        st[K.LAST_FRAME] += d
        push(st, nodes, ntab, tstack, tdepth, t, st[K.LAST_FRAME], 0, 0)
    else:
        tdepth[t] = max(tdepth[t] - (flags + 1), 0)
    return p


@T.jit
def run(
    buf: np.ndarray,
    n: int,
    final: bool,
    first_byte: np.ndarray,
    kinds: np.ndarray,
    compact: bool,
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
    Python (PY_RECORD), a full table (GROW_TABLE, which in st[GROW]), the end or damage.
    `first_byte`, `kinds` and `compact`: the format version's `Encoding`."""
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
        record = first_byte[b]
        if record == R_ALLOCATION:
            t = st[K.THREAD]
            if t < 0:  # an allocation before any thread: damage
                return K.DAMAGED
            if compact:
                p, addr, kind, size = allocation(buf, p, b & 0x7F, kinds, st, recent)
            else:
                p, addr, kind, size = allocation11(buf, p, b & 15, b >> 4, kinds, st)
            if p >= 0:
                K.replay(
                    st, nodes, ak, av, au, hk, hv, hu, mm, scratch, tstack, tdepth, tcount, t,
                    addr, kind, size,
                )  # fmt: skip
        elif record == R_FRAME:
            if compact:
                p = frame(buf, p, b, st, nodes, ntab, tstack, tdepth)
            else:
                p = frame11(buf, p, b & 15, b >> 4, st, nodes, ntab, tstack, tdepth)
        elif record == R_OBJECT:
            p = object_event(buf, p, b, st, recent)
        elif record == R_MEMORY:
            p = memory_record(buf, p, st, mem)
        elif record == R_SWITCH:
            if not switch(st, tids, K.u64(buf, p)):
                st[K.GROW] = K.G_THREADS
                return K.GROW_TABLE
            p += 8
        elif record == R_NATIVE:
            p = native_index(buf, p, st)
        elif record == R_MMAP:
            pass
        elif record == R_PYTHON:
            return K.PY_RECORD
        else:  # the trailer or padding; anything else: damage, where memray stops too
            return K.END if record == R_END else K.DAMAGED
        if p < 0 or p > n:  # damage, or a record cut off by the end of the file
            return K.DAMAGED
