"""A pickle read as data without unpickling it: the compiled walker's driver.

`walk_file` feeds a pickle (plain or gzip, read in chunks: progress between them, and a
cancel raised by the progress sink stops it) to `kernel.walk`, which releases the GIL, and
returns the object graph (`Graph`): kinds and values of every container's items, strings
interned by content. No Python object is made per pickled object, which is what makes a 1 GB
CUDA memory snapshot readable in seconds: `pickle.load` would build ~10 GB of dicts.

`Unsupported` means the walker met something it does not do (an unusual opcode, a damaged
stream, a type it does not model): the caller then uses the restricted unpickler, which
answers correctly for every input, so correctness never depends on this path. Imports
(GLOBAL, STACK_GLOBAL) and persistent ids are refused here with the unpickler's own sentence.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders import huge_pages
from perfview.loaders.cuda_snapshot.pickle_data import REFUSED
from perfview.loaders.cuda_snapshot.pickle_walk import kernel as kn

CHUNK = 32 << 20  # bytes read (or inflated) between two walks: the progress and cancel grain


huge_pages.no_advice()  # see there: compaction stalls were half the walk


class Unsupported(Exception):
    """The walker cannot read this pickle; use the restricted unpickler."""


_GROWN = (
    # (attribute, dtype, fill, count slot or None)
    ("sk", np.uint8, 0, None),
    ("sv", np.int64, 0, None),
    ("marks", np.int64, 0, None),
    ("nkind", np.uint8, 0, kn.NODES),
    ("nfirst", np.int64, 0, kn.NODES),
    ("nlast", np.int64, 0, kn.NODES),
    ("nitems", np.int64, 0, kn.NODES),
    ("rs", np.int64, 0, kn.RUNS),
    ("rl", np.int64, 0, kn.RUNS),
    ("rn", np.int64, 0, kn.RUNS),
    ("rc", np.int64, 0, kn.RUNS),
    ("rh", np.uint64, 0, kn.RUNS),
    ("ik", np.uint8, 0, kn.ITEMS),
    ("iv", np.int64, 0, kn.ITEMS),
    ("soff", np.int64, 0, kn.STRS),
    ("slen", np.int64, 0, kn.STRS),
    ("shash", np.uint64, 0, kn.STRS),
    ("sisstr", np.uint8, 0, kn.STRS),
)


@dataclass
class Graph:
    """What a pickle builds, as arrays (see `kernel`): the result is (root_kind, root_value).

    Container `node` has kind `nkind[node]` and its items in the runs `nfirst[node]`,
    `rn[run]`, … (-1 ends); run r's items are `ik/iv[rs[r] : rs[r] + rl[r]]` (a dict's are
    key, value, key, value…); `nitems[node]` counts them. String id s is `buf[soff[s]:][:slen[s]]`
    (UTF-8 where `sisstr[s]`); id 0 is the empty string.
    """

    buf: np.ndarray
    st: np.ndarray
    sk: np.ndarray
    sv: np.ndarray
    marks: np.ndarray
    mk: np.ndarray
    mv: np.ndarray
    nkind: np.ndarray
    nfirst: np.ndarray
    nlast: np.ndarray
    nitems: np.ndarray
    rs: np.ndarray
    rl: np.ndarray
    rn: np.ndarray
    rc: np.ndarray
    rh: np.ndarray
    rt: np.ndarray
    ik: np.ndarray
    iv: np.ndarray
    soff: np.ndarray
    slen: np.ndarray
    shash: np.ndarray
    sisstr: np.ndarray
    strtab: np.ndarray
    strings: list[str | bytes] | None = None
    size: int = 0  # bytes of pickle walked (decompressed)

    @classmethod
    def empty(cls, buf: np.ndarray, size_hint: int) -> Graph:
        """Arrays sized for a snapshot pickle of `size_hint` bytes (178 MB: 1.2 M containers
        and runs, 7 M items; 939 MB: 6.3 M and 37 M), so that few grow; hash tables start
        small."""
        base = 1 << max(10, (size_hint // 128).bit_length())  # powers of 2
        arrays = {
            name: np.zeros(8 * base if name in ("ik", "iv") else base, dtype=dt)
            for name, dt, _f, _s in _GROWN
        }
        arrays["sk"] = np.zeros(1 << 12, dtype=np.uint8)
        arrays["sv"] = np.zeros(1 << 12, dtype=np.int64)
        arrays["marks"] = np.zeros(1 << 10, dtype=np.int64)
        for name in ("soff", "slen", "shash", "sisstr"):
            arrays[name] = np.zeros(1 << 12, dtype=arrays[name].dtype)
        g = cls(
            buf=buf,
            st=np.zeros(kn.N_STATE, dtype=np.int64),
            mk=np.full(base, kn.K_MISSING, dtype=np.uint8),
            mv=np.zeros(base, dtype=np.int64),
            rt=np.full(1 << 12, -1, dtype=np.int64),
            strtab=np.full(1 << 13, -1, dtype=np.int64),
            **arrays,  # type: ignore[arg-type]
        )
        g.st[kn.STRS] = 1  # id 0: the empty string, for fields a dict lacks
        g.sisstr[0] = 1
        g.strtab[int(kn._BASIS & np.uint64(len(g.strtab) - 1))] = 0
        g.shash[0] = kn._BASIS
        return g

    @property
    def root(self) -> tuple[int, int]:
        return int(self.st[kn.RESULT_K]), int(self.st[kn.RESULT_V])

    def run(self, pos: int, avail: int, final: bool) -> tuple[int, int]:
        while True:
            status, pos = kn.walk(
                self.buf, pos, avail, final, self.st, (self.sk, self.sv, self.marks),
                (self.mk, self.mv), (self.nkind, self.nfirst, self.nlast, self.nitems),
                (self.rs, self.rl, self.rn, self.rc, self.rh, self.rt), (self.ik, self.iv),
                (self.soff, self.slen, self.shash, self.sisstr, self.strtab),
            )  # fmt: skip
            if status != kn.GROW:
                return int(status), int(pos)
            self._grow(int(pos))

    def _grow(self, pos: int) -> None:
        """Double the arrays too full for the opcode at `pos`, and the memo up to the index
        asked for (the kernel asks again while another one is). A memo index beyond `pos` is
        damage, left to the restricted unpickler, whose pass (`pickle_check`) refuses it
        unless the unpickler stops earlier (it checks more than the walker): every memo entry
        costs the bytes of a value and a PUT, so a real pickle's indices stay below their
        offsets, and growing the memo to a hostile index would take gigabytes."""
        st = self.st
        sp = int(st[kn.SP])
        for name, _dt, _fill, slot in _GROWN:
            arr = getattr(self, name)
            used = sp if slot is None else int(st[slot])
            need = used + (sp if name in ("ik", "iv") else 0) + 2
            if name == "marks":
                used = need = int(st[kn.MSP]) + 1
            if need > len(arr):
                new = np.zeros(max(2 * len(arr), 2 * need), dtype=arr.dtype)
                new[: len(arr)] = arr
                setattr(self, name, new)
        need_memo = int(st[kn.NEED_MEMO])
        if need_memo >= len(self.mk):
            if need_memo > pos:  # the unpickler's pass refuses it, or the unpickler stops first
                raise Unsupported(f"a memo index ({need_memo:,}) beyond its offset ({pos:,})")
            size = max(2 * len(self.mk), need_memo + 1)
            mk = np.full(size, kn.K_MISSING, dtype=np.uint8)
            mv = np.zeros(size, dtype=np.int64)
            mk[: len(self.mk)] = self.mk
            mv[: len(self.mv)] = self.mv
            self.mk, self.mv = mk, mv
        self.strtab = _regrow(self.strtab, self.shash, np.arange(int(st[kn.STRS])))
        nruns = int(st[kn.RUNS])
        listed = np.flatnonzero(self.rc[:nruns] == np.arange(nruns))
        self.rt = _regrow(self.rt, self.rh, listed)

    def decode(self) -> list[str | bytes]:
        """Every interned string as Python: str (UTF-8, as pickle decodes it) or bytes."""
        if self.strings is None:
            raw = self.buf
            out: list[str | bytes] = []
            n = int(self.st[kn.STRS])
            for off, length, is_str in zip(
                self.soff[:n].tolist(), self.slen[:n].tolist(), self.sisstr[:n].tolist(),
                strict=True,
            ):  # fmt: skip
                b = raw[off : off + length].tobytes() if length else b""
                try:
                    out.append(b.decode("utf-8", "surrogatepass") if is_str else b)
                except UnicodeDecodeError as exc:  # the unpickler says it its own way
                    raise Unsupported("a string that is not UTF-8") from exc
            self.strings = out
        return self.strings


def _regrow(table: np.ndarray, hashes: np.ndarray, ids: np.ndarray) -> np.ndarray:
    if 2 * (len(ids) + 1) <= len(table):
        return table
    size = 2 * len(table)
    while size < 4 * (len(ids) + 1):
        size *= 2
    new = np.full(size, -1, dtype=np.int64)
    kn.rehash(new, hashes, ids.astype(np.int64))
    return new


def _chunks(path: Path) -> tuple[int, Any]:
    """(size hint, iterator of (buffer, bytes filled, final)) over the file's content."""
    with open(path, "rb") as fh:
        head = fh.read(2)
        size = fh.seek(0, os.SEEK_END)
        if head == b"\x1f\x8b" and size >= 18:
            fh.seek(-4, os.SEEK_END)  # the gzip trailer's ISIZE: the content's size mod 2**32
            inflated = max(int.from_bytes(fh.read(4), "little"), 4 * size)
            return inflated, _inflated(path, inflated)
    if head == b"\x1f\x8b":
        return 4 * size, _inflated(path, 4 * size)
    return size, _plain(path, size)


def _plain(path: Path, size: int) -> Any:
    """The file mapped (copy-on-write, so never written; no copy is made: the walker reads
    the page cache), offered in chunks so that progress and cancel come between them."""
    if size == 0:
        yield np.zeros(0, dtype=np.uint8), 0, True
        return
    buf = np.memmap(path, dtype=np.uint8, mode="c", shape=(size,))
    for end in range(CHUNK, size + CHUNK, CHUNK):
        yield buf, min(end, size), end >= size


def _inflated(path: Path, expected: int) -> Any:
    """Gzip content in chunks, into a buffer of the `expected` size that grows if need be; any
    gzip trouble → Unsupported (the restricted path then reports it as it always has)."""
    try:
        buf = np.empty(expected + CHUNK, dtype=np.uint8)
    except MemoryError:  # a trailer claiming too much (the stream's check will say): grow
        buf = np.empty(CHUNK, dtype=np.uint8)
    filled = 0
    try:
        with gzip.open(path, "rb") as fh:
            while True:
                if len(buf) - filled < CHUNK:
                    bigger = np.empty(2 * len(buf), dtype=np.uint8)
                    bigger[:filled] = buf[:filled]
                    buf = bigger
                got = fh.readinto(memoryview(buf)[filled : filled + CHUNK])  # type: ignore[arg-type]
                filled += got
                yield buf, filled, got == 0
                if not got:
                    return
    except (OSError, EOFError, zlib.error) as exc:
        raise Unsupported("a damaged gzip stream") from exc


def walk_file(path: Path, progress: Progress = noop, lo: float = 0.0, hi: float = 1.0) -> Graph:
    """The object graph of the pickle at `path` (progress from `lo` to `hi`).

    Raises Unsupported (use the restricted unpickler), or LoadError for a refused import or a
    truncated stream (the sentences the restricted unpickler gives)."""
    hint, chunks = _chunks(Path(path))
    g: Graph | None = None
    pos = filled = 0
    status = kn.MORE
    for buf, filled, final in chunks:
        if g is None:
            g = Graph.empty(buf, hint)
        g.buf = buf
        status, pos = g.run(pos, filled, final)
        progress(lo + (hi - lo) * min(1.0, filled / max(hint, 1)), "reading the pickle (data only)")
        if status != kn.MORE:
            break
    assert g is not None
    if status == kn.DONE:
        for buf, more, _final in chunks:  # to the end: a gzip trailer (CRC) is checked there,
            g.buf, filled = buf, more  # and the size bound (`_check_size`) counts every byte
        g.size = filled
        return g
    if status == kn.TRUNC:
        name = "EOFError" if pos >= filled else "UnpicklingError"  # as the unpickler says
        raise LoadError(f"the pickle is damaged or truncated ({name})")
    _refuse(g, status, pos, filled)
    raise Unsupported(f"walker status {status} at byte {pos}")


def _refuse(g: Graph, status: int, pos: int, filled: int) -> None:
    """The restricted unpickler's refusal for an import or a persistent id, where the walker
    stopped at one (and nothing before it was damaged). Returns when it cannot tell."""
    if status == kn.REFUSED_PERSID:
        raise LoadError(REFUSED.format(what="a persistent object"))
    names: list[str] = []
    if status == kn.REFUSED_STACK_GLOBAL:
        strings = g.decode()
        names = [str(strings[int(g.st[kn.RESULT_K])]), str(strings[int(g.st[kn.RESULT_V])])]
    elif status == kn.REFUSED_GLOBAL:
        lines = g.buf[pos + 1 : min(filled, pos + 1 + 4096)].tobytes().split(b"\n", 2)
        if len(lines) < 3:
            return
        try:
            names = [lines[0].decode("utf-8"), lines[1].decode("utf-8")]
        except UnicodeDecodeError:
            return
    if names:
        raise LoadError(REFUSED.format(what=f"{names[0]}.{names[1]}"[:80]))
