"""The compiled pickle walker: every opcode family it reads, the memo, refusals, truncation."""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path
from typing import Any

import pytest

from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.loaders.cuda_snapshot import pickle_walk, restricted_loads
from perfview.loaders.cuda_snapshot.pickle_walk import Unsupported, kernel, walk_file
from perfview.loaders.cuda_snapshot.pickle_walk.objects import items, load_objects

PROTOCOLS = (2, 3, 4, 5)
SHARED = [1, 2]
VALUES: list[Any] = [
    {"a": 1, "b": [1, 2, 3], "c": (1,), "d": (1, 2), "e": (1, 2, 3), "f": (1, 2, 3, 4), "g": ()},
    [None, True, False, 0, -1, 255, 256, 65535, 65536, -(2**31), 2**31 - 1, 2**31, 2**40,
     -(2**40), 2**63 - 1, -(2**63), 1.5, -0.0, float("inf"), -1e300],
    ["", "é", "x" * 300, "\ud800", "日本語", {"nested": {"deeper": [[], {}, ()]}}],
    {"s1": SHARED, "s2": SHARED, "s3": [SHARED, SHARED], "t": (SHARED,)},
    [{"action": "alloc", "addr": i, "frames": [{"name": "f", "line": j} for j in range(3)]}
     for i in range(1200)],  # batches of 1000 (MARK … APPENDS twice), memo past 256 (LONG_*)
    [str(i) for i in range(300)],
    {1: "int key", 2.5: "float key", None: "none key", b"k": "bytes key"},
]  # fmt: skip
BYTES_VALUES: list[Any] = [[b"", b"xyz", b"y" * 300, {"k": b"v"}]]


def _write(tmp_path: Path, data: bytes, name: str = "x.pickle") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _outcome(fn: Any) -> tuple[str, str]:
    try:
        return "ok", repr(fn())
    except LoadError as exc:
        return "refused", str(exc)


def _same_as_unpickler(path: Path) -> None:
    want = _outcome(lambda: restricted_loads(path.read_bytes()))
    got = _outcome(lambda: load_objects(walk_file(path)))
    assert got == want


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("index", range(len(VALUES)))
def test_values_read_as_the_unpickler_reads_them(tmp_path: Path, protocol: int, index: int) -> None:
    _same_as_unpickler(_write(tmp_path, pickle.dumps(VALUES[index], protocol=protocol)))


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_bytes(tmp_path: Path, protocol: int) -> None:
    _same_as_unpickler(_write(tmp_path, pickle.dumps(BYTES_VALUES, protocol=protocol)))


def test_protocol_2_bytes_is_an_import_and_refused(tmp_path: Path) -> None:
    """Protocol 2 writes bytes as a call of codecs.encode: a global, refused by both paths."""
    path = _write(tmp_path, pickle.dumps([b"xyz"], protocol=2))
    with pytest.raises(LoadError, match="never runs code"):
        walk_file(path)
    _same_as_unpickler(path)


def test_eight_byte_lengths_and_frames(tmp_path: Path) -> None:
    """BINUNICODE8 / BINBYTES8 (Python writes them only past 4 GB), SHORT_BINBYTES, FRAME."""
    body = (
        b"]\x94(" + b"\x8d" + struct.pack("<Q", 3) + b"abc" + b"\x8e" + struct.pack("<Q", 2)
        + b"hi" + b"C\x01z" + b"\x8c\x03abce."
    )  # fmt: skip
    data = b"\x80\x04\x95" + struct.pack("<Q", len(body)) + body
    path = _write(tmp_path, data)
    assert load_objects(walk_file(path)) == ["abc", b"hi", b"z", "abc"]
    _same_as_unpickler(path)


def test_memo_shares_containers_and_strings(tmp_path: Path) -> None:
    inner = ["frame"]
    path = _write(tmp_path, pickle.dumps({"a": inner, "b": inner, "c": ["frame"]}, protocol=4))
    g = walk_file(path)
    top = items(g, g.root[1])
    a, b, c = top[1], top[3], top[5]
    assert a == b  # one node through the memo
    assert a != c  # an equal but distinct list is another node…
    assert g.rs[g.nfirst[a[1]]] == g.rs[g.nfirst[c[1]]]  # …whose items are shared
    out = load_objects(g)
    assert out["a"] is out["b"]
    assert out["a"] is not out["c"]


def test_strings_written_twice_intern_to_one_id(tmp_path: Path) -> None:
    """Without the memo (a hand-made pickle), equal strings still get one id."""
    data = b"\x80\x04](\x8c\x03abc\x8c\x03abcX\x03\x00\x00\x00abcC\x03abce."
    g = walk_file(_write(tmp_path, data))
    got = items(g, g.root[1])
    assert [k for k, _ in got] == [kernel.K_STR] * 3 + [kernel.K_BYTES]
    assert len({v for _, v in got}) == 1  # bytes b"abc" shares the text's raw id
    assert load_objects(g) == ["abc", "abc", "abc", b"abc"]


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_imports_are_refused_with_the_unpicklers_sentence(tmp_path: Path, protocol: int) -> None:
    """GLOBAL (protocols 2-3) and STACK_GLOBAL (4-5): refused, named, and nothing runs."""
    marker = tmp_path / "pwned"
    path = _write(tmp_path, pickle.dumps({"segments": [_Evil(marker)]}, protocol=protocol))
    with pytest.raises(LoadError, match=r"asks to import (posix|nt)\.system"):
        walk_file(path)
    _same_as_unpickler(path)
    assert not marker.exists()


def test_persistent_ids_are_refused(tmp_path: Path) -> None:
    class Persisting(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            return "ext" if obj == "outside" else None

    path = tmp_path / "p.pickle"
    with open(path, "wb") as fh:
        Persisting(fh, protocol=4).dump(["outside"])
    with pytest.raises(LoadError, match="a persistent object"):
        walk_file(path)
    _same_as_unpickler(path)


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x04K\x01)R.",  # REDUCE (no callable: the unpickler says how it is damaged)
        b"\x80\x04}K\x01b.",  # BUILD
        b"\x80\x04K\x01)\x81.",  # NEWOBJ
        b"\x80\x04(ios\nsystem\n.",  # INST: asks for os.system
        b"\x80\x04(K\x01o.",  # OBJ
        b"\x80\x04\x82\x01.",  # EXT1
        b"\x80\x04Pabc\n.",  # PERSID
        b"\x80\x04I1\n.",  # INT (protocol 0 text)
        b"\x80\x04K\x010.",  # POP
        b"\x80\x04\x8f(K\x01\x90.",  # EMPTY_SET, ADDITEMS
        b"\x80\x06K\x01.",  # a protocol from the future
        b"\x80\x04h\x05.",  # BINGET of a memo slot never written
        b"\x80\x04K\x01K\x02s.",  # SETITEM on an int
        b"\x80\x04](]K\x01u.",  # SETITEMS with a list key… on a list
        b"\x80\x04}(]K\x01u.",  # an unhashable key
        b"\x80\x04}(K\x01\x85K\x01u.",  # a tuple key (hashable or not: left to the unpickler)
    ],
)
def test_what_the_walker_does_not_read_goes_to_the_unpickler(tmp_path: Path, data: bytes) -> None:
    """Every other opcode: Unsupported (or the same refusal); the unpickler then answers."""
    path = _write(tmp_path, data)
    try:
        got = _outcome(lambda: load_objects(walk_file(path)))
    except Unsupported:
        return
    assert got[0] == "refused", "the walker read what it should leave to the unpickler"
    assert got == _outcome(lambda: restricted_loads(data))


def test_truncated_pickles_say_so_in_one_sentence(data_dir: Path, tmp_path: Path) -> None:
    """Cut anywhere: the same one sentence as the unpickler's, or left to it."""
    raw = pickle.dumps(VALUES[:4], protocol=4)
    for cut in range(0, len(raw) - 1, 7):
        path = _write(tmp_path, raw[:cut])
        try:
            got = _outcome(lambda p=path: load_objects(walk_file(p)))
        except Unsupported:
            continue
        assert got[0] == "refused"
        assert got == _outcome(lambda c=cut: restricted_loads(raw[:c]))
        assert "damaged or truncated" in got[1]
        assert got[1].count(".") <= 1


def test_gzip_and_chunks_with_progress_and_cancel(tmp_path: Path, monkeypatch: Any) -> None:
    import gzip

    value = VALUES[4]
    raw = pickle.dumps(value, protocol=4)
    monkeypatch.setattr(pickle_walk, "CHUNK", 4096)  # many chunks: opcodes cut across them
    for path in (_write(tmp_path, raw), _write(tmp_path, gzip.compress(raw), "x.pickle.gz")):
        seen: list[float] = []

        def record(fraction: float, message: str, seen: list[float] = seen) -> None:
            seen.append(fraction)

        assert load_objects(walk_file(path, record)) == value
        assert len(seen) > 5
        assert seen == sorted(seen)
        assert 0 <= seen[0] <= seen[-1] <= 1

        def cancel(fraction: float, message: str) -> None:
            raise LoadCancelled()

        with pytest.raises(LoadCancelled):
            walk_file(path, cancel)


def test_damaged_gzip_goes_to_the_unpickler(tmp_path: Path) -> None:
    import gzip

    packed = gzip.compress(pickle.dumps(VALUES[0], protocol=4))
    with pytest.raises(Unsupported):
        walk_file(_write(tmp_path, packed[: len(packed) // 2], "cut.pickle.gz"))


def test_the_compiled_code_releases_the_gil() -> None:
    for fn in (kernel.walk, kernel.rehash):
        assert fn.targetoptions.get("nogil") is True
