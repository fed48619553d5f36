"""Drive the compiled replay over the stream's chunks: grow its tables, parse the records
that carry strings (code objects, thread names, memory maps), report progress."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfview.core.model.progress import Progress
from perfview.loaders.memray.header import Header
from perfview.loaders.memray.stream import decode
from perfview.loaders.memray.stream import kernel as K
from perfview.loaders.memray.stream import tables as T


class Damaged(ValueError):
    """The record stream is damaged past repair at some record."""


@dataclass
class Code:
    name: str
    file: str
    first_line: int
    linetable: bytes


@dataclass
class State:
    """Every array the kernel replays into; grown by doubling when it asks."""

    header: Header
    st: np.ndarray = field(default_factory=lambda: np.zeros(K.ST_SIZE, np.int64))
    recent: np.ndarray = field(default_factory=lambda: np.zeros(15, np.int64))
    nodes: np.ndarray = field(default_factory=lambda: np.zeros((4096, T.NODE_COLS), np.int64))
    ntab: np.ndarray = field(default_factory=lambda: np.zeros(8192, np.int64))
    ak: np.ndarray = field(default_factory=lambda: np.zeros(1 << 11, np.int64))
    av: np.ndarray = field(default_factory=lambda: np.zeros((1 << 11, 4), np.int64))
    au: np.ndarray = field(default_factory=lambda: np.zeros(1 << 11, np.uint8))
    hk: np.ndarray = field(default_factory=lambda: np.zeros((1 << 12, 4), np.int64))
    hv: np.ndarray = field(default_factory=lambda: np.zeros((1 << 12, 2), np.int64))
    hu: np.ndarray = field(default_factory=lambda: np.zeros(1 << 12, np.uint8))
    mem: np.ndarray = field(default_factory=lambda: np.zeros((4096, 3), np.int64))
    mm: np.ndarray = field(default_factory=lambda: np.zeros((1024, 6), np.int64))
    scratch: np.ndarray = field(default_factory=lambda: np.zeros((2056, 6), np.int64))
    tids: np.ndarray = field(default_factory=lambda: np.zeros(16, np.int64))
    tstack: np.ndarray = field(default_factory=lambda: np.zeros((16, 1024), np.int64))
    tdepth: np.ndarray = field(default_factory=lambda: np.zeros(16, np.int64))
    tcount: np.ndarray = field(default_factory=lambda: np.zeros(16, np.int64))
    encoding: decode.Encoding = field(init=False)  # how this format version encodes records
    codes: dict[int, Code] = field(default_factory=dict)
    frames11: dict[int, tuple[str, str, int]] = field(default_factory=dict)  # version 11
    names: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.encoding = decode.ENCODINGS[self.header.version]
        self.st[K.THREAD] = -1
        self.st[K.N_NODES] = 1  # node 0: the empty stack
        self.st[K.NATIVE] = int(self.header.native_traces)
        self.st[K.START_MS] = self.header.start_ms

    def args(self) -> tuple[Any, ...]:
        """`decode.run`'s arguments after the buffer: the encoding, then every table."""
        enc = self.encoding
        return (
            enc.first_byte,
            enc.kinds,
            enc.compact,
            self.st,
            self.recent,
            self.nodes,
            self.ntab,
            self.ak,
            self.av,
            self.au,
            self.hk,
            self.hv,
            self.hu,
            self.mem,
            self.mm,
            self.scratch,
            self.tids,
            self.tstack,
            self.tdepth,
            self.tcount,
        )


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, *a.shape[1:]), a.dtype)
    out[: len(a)] = a
    return out


def grow(s: State, what: int) -> None:
    """Double the table the kernel found short (hash tables are rebuilt at the new size)."""
    if what == K.G_ADDR:
        cap = 2 * len(s.ak)
        nk, nv, nu = np.zeros(cap, np.int64), np.zeros((cap, 4), np.int64), np.zeros(cap, np.uint8)
        T.addr_rehash(s.ak, s.av, s.au, nk, nv, nu)
        s.ak, s.av, s.au = nk, nv, nu
    elif what == K.G_HIST:
        cap = 2 * len(s.hk)
        hk, hv, hu = (
            np.zeros((cap, 4), np.int64),
            np.zeros((cap, 2), np.int64),
            np.zeros(cap, np.uint8),
        )
        T.hist_rehash(s.hk, s.hv, s.hu, hk, hv, hu)
        s.hk, s.hv, s.hu = hk, hv, hu
    elif what == K.G_NODES:
        s.nodes = _grown(s.nodes, 2 * len(s.nodes))
        s.ntab = np.zeros(max(len(s.ntab), 2 * len(s.nodes)), np.int64)
        T.node_rehash(s.nodes, int(s.st[K.N_NODES]), s.ntab)
    elif what == K.G_MEM:
        s.mem = _grown(s.mem, 2 * len(s.mem))
    elif what == K.G_MMAP:
        s.mm = _grown(s.mm, 2 * len(s.mm))
        s.scratch = np.zeros((2 * len(s.mm) + 8, 6), np.int64)
    elif what == K.G_THREADS:
        cap = 2 * len(s.tids)
        s.tids, s.tdepth, s.tcount = (_grown(a, cap) for a in (s.tids, s.tdepth, s.tcount))
        s.tstack = _grown(s.tstack, cap)
    elif what == K.G_DEPTH:
        wider = np.zeros((len(s.tstack), 2 * s.tstack.shape[1]), np.int64)
        wider[:, : s.tstack.shape[1]] = s.tstack
        s.tstack = wider


def _cstr(buf: bytes, p: int) -> tuple[str, int]:
    end = buf.index(b"\x00", p)  # ValueError: the chunk ends inside the string
    return buf[p:end].decode("utf-8", "replace"), end + 1


def _varint(buf: bytes, p: int) -> tuple[int, int]:
    val, shift = 0, 0
    while True:
        b = buf[p]  # IndexError: the chunk ends inside it
        p += 1
        val |= (b & 0x7F) << shift
        if b < 0x80:
            return val, p
        shift += 7


def py_record(s: State, buf: bytes, p: int) -> int:
    """Parse the string-carrying record at `p`; returns the position after it. IndexError or
    ValueError when the buffer ends inside it."""
    kind = buf[p]
    p += 1
    if not s.encoding.compact and (kind & 15) == 3:  # frame: id, function, file, line (deltas)
        z, p = _varint(buf, p)
        frame_id = int(s.st[K.LAST_FRAME]) + ((z >> 1) ^ -(z & 1))
        name, p = _cstr(buf, p)
        file, p = _cstr(buf, p)
        z, p = _varint(buf, p)
        line = int(s.st[K.LAST_LINE]) + ((z >> 1) ^ -(z & 1))
        s.st[K.LAST_FRAME], s.st[K.LAST_LINE] = frame_id, line
        s.frames11[frame_id] = (name, file, line)
        return p
    if kind == 14:  # code object: id, name, file, first line (delta), line table
        code_id, p = _varint(buf, p)
        name, p = _cstr(buf, p)
        file, p = _cstr(buf, p)
        z, p = _varint(buf, p)
        first = int(s.st[K.LAST_LINE]) + ((z >> 1) ^ -(z & 1))
        size, p = _varint(buf, p)
        if p + size > len(buf):
            raise IndexError("the chunk ends inside a line table")
        s.st[K.LAST_LINE] = first
        s.codes[code_id] = Code(name, file, first, buf[p : p + size])
        return p + size
    if kind == 10:  # thread name, for the current thread
        name, p = _cstr(buf, p)
        t = int(s.st[K.THREAD])
        if t >= 0:
            s.names[int(s.tids[t])] = name
        return p
    # segment header: file name, segment count, base address, then (8, vaddr, size) each
    _, p = _cstr(buf, p)
    count, p = _varint(buf, p)
    p += 8
    for _ in range(count):
        if buf[p] != 8:
            raise Damaged("a memory map segment without its record type")
        _, p = _varint(buf, p + 9)
    if p > len(buf):
        raise IndexError("the chunk ends inside a segment list")
    return p


def _step(s: State, buf: np.ndarray, raw: bytes, final: bool) -> bool:
    """Replay `buf` as far as it goes; True at the end of the stream."""
    while True:
        status = decode.run(buf, len(raw), final, *s.args())
        if status == K.NEED_MORE:
            return False
        if status == K.END:
            return True
        if status == K.DAMAGED:
            raise Damaged(f"an unreadable record after {int(s.st[K.RECORDS]):,} allocation records")
        if status == K.GROW_TABLE:
            grow(s, int(s.st[K.GROW]))
            continue
        try:
            s.st[K.POS] = py_record(s, raw, int(s.st[K.POS]))
        except (IndexError, ValueError):
            return final  # final: cut off inside the last record, where memray stops too


def replay(s: State, blocks: Iterable[tuple[bytes, int]], size: int, progress: Progress) -> None:
    """Feed the stream (after the header) through the kernel, chunk by chunk."""
    tail = b""
    for block, done in blocks:
        raw = tail + block
        s.st[K.POS] = 0
        if _step(s, np.frombuffer(raw, np.uint8), raw, False):
            return
        tail = raw[int(s.st[K.POS]) :]
        progress(
            0.05 + 0.8 * min(done / max(size, 1), 1.0),
            f"replaying allocations ({int(s.st[K.RECORDS]):,} records)",
        )
    padded = np.frombuffer(tail + bytes(K.SLACK), np.uint8)
    s.st[K.POS] = 0
    _step(s, padded, tail, True)
