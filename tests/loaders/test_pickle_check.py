"""Pickles that would make the unpickler work beyond their size are refused in one sentence,
on both paths (the restricted unpickler and the compiled walker), in bounded time and memory.

- tests/data/hostile/memo_index_22gb.pickle: a fuzz case (seed 28, #6478, a mutated memprof
  report fed to the CUDA snapshot loader; tests/data/hostile/SOURCES.md). At byte 81 a
  LONG_BINPUT of index 1,401,369,748: the C unpickler grew its memo to 2.8 G slots and zeroed
  them (22 GB; minutes, 40 s of them system time); the walker asked numpy for 2.8 GB.
- A dict key that is a tuple nested 40 deep through shared references: the unpickler hashes
  2**40 leaves and never returns.

Each load runs in a child with an address-space limit and a timeout, so that the code before
the fix fails these tests instead of taking the machine.
"""

from __future__ import annotations

import pickle
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from perfview.core.model.errors import LoadError
from perfview.loaders.cuda_snapshot import pickle_check, restricted_loads

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "data" / "hostile"
LIMIT_BYTES = 3 << 30  # numba's and LLVM's address space fit; a 22 GB memo does not

_CHILD = """
import sys
from pathlib import Path
from perfview.core.model.errors import LoadError
from perfview.loaders import cuda_snapshot
try:
    cuda_snapshot.load(Path(sys.argv[1]), compiled=sys.argv[2] == "1")
    print("loaded")
except LoadError as exc:
    print("refused:", exc)
"""


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _load_in_child(path: Path, compiled: bool) -> str:
    """What the loader says about `path`, from a child limited in memory and time."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), "1" if compiled else "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.stdout.strip()


def _bomb_opcodes(depth: int) -> bytes:
    """Protocol 4 opcodes pushing a tuple nested `depth` deep, each level naming the one below
    twice through the memo (written by hand: building it as a key here would hash it)."""
    out = b"\x8c\x03lol\x85\x940"  # ("lol",): memo 0, popped
    for level in range(depth):  # (level, level): memo level + 1, popped
        out += b"h" + bytes([level]) + b"h" + bytes([level]) + b"\x86\x940"
    return out + b"h" + bytes([depth])


def _keyed_by_bomb(container: bytes = b"dict", depth: int = 40) -> bytes:
    """{"segments": [], BOMB: 1}, or {"segments": [], "x": set/frozenset([BOMB])}."""
    head = b"\x80\x04}(\x8c\x08segments]"
    if container == b"dict":
        return head + _bomb_opcodes(depth) + b"K\x01u."
    if container == b"set":
        return head + b"\x8c\x01x\x8f(" + _bomb_opcodes(depth) + b"\x90u."
    return head + b"\x8c\x01x(" + _bomb_opcodes(depth) + b"\x91u."


def _nested_tuple(depth: int) -> tuple[Any, ...]:
    item: tuple[Any, ...] = ("lol",)
    for _ in range(depth):
        item = (item, item)  # pickled once per level through the memo: 2**depth leaves
    return item


@pytest.mark.parametrize("compiled", [False, True], ids=["unpickler", "walker"])
def test_a_memo_index_of_billions_is_refused(compiled: bool) -> None:
    path = HOSTILE / "memo_index_22gb.pickle"
    assert path.stat().st_size < 8192
    said = _load_in_child(path, compiled)
    assert said == (
        "refused: the pickle is damaged: a memo index (1,401,369,748) at byte 81 is beyond "
        "anything the bytes before it could have stored"
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["unpickler", "walker"])
def test_a_tuple_key_nested_through_references_is_refused(tmp_path: Path, compiled: bool) -> None:
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(_keyed_by_bomb())
    assert path.stat().st_size < 1024
    said = _load_in_child(path, compiled)
    assert said.startswith("refused: it is a pickle whose repeated references build a dict key")
    assert "billion laughs" in said


@pytest.mark.parametrize(
    "value",
    [
        {"segments": [], (1, 2): "tuple key", (3, (4, 5)): 1},
        {("a", ("b", ("c",))): [(1, 2)] * 50},
        [_nested_tuple(10)] * 3,  # shared, never hashed
        {"k": _nested_tuple(12)},  # as a value
        {2**4000: 1, -(2**70): 2},
        {i: str(i) for i in range(3000)},
    ],
)
@pytest.mark.parametrize("protocol", [0, 1, 2, 4, 5])
def test_honest_pickles_pass(value: Any, protocol: int) -> None:
    data = pickle.dumps(value, protocol=protocol)
    pickle_check.check(data)
    assert restricted_loads(data) == value


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x02]r\xff\xff\xff\x7f.",  # LONG_BINPUT 2**31 - 1 at byte 3
        b"\x80\x02]q\x05.",  # BINPUT 5 at byte 3
        b"(lp99999999\n.",  # PUT (protocol 0 text) of 1e8
        b"(lp 1_000_000\n.",  # the same, as int() reads it
    ],
)
def test_memo_indices_beyond_their_offset_are_refused(data: bytes) -> None:
    with pytest.raises(LoadError, match="memo index"):
        restricted_loads(data)


def test_bomb_opcodes_build_the_nested_tuple() -> None:
    data = b"\x80\x04" + _bomb_opcodes(12) + b"."
    assert pickle.loads(data) == _nested_tuple(12)
    small = pickle.loads(_keyed_by_bomb(b"frozenset", depth=3))
    assert small == {"segments": [], "x": frozenset([_nested_tuple(3)])}


@pytest.mark.parametrize("container", [b"dict", b"set", b"frozenset"])
def test_keys_and_set_items_nested_through_references_are_refused(container: bytes) -> None:
    with pytest.raises(LoadError, match="billion laughs"):
        restricted_loads(_keyed_by_bomb(container))


@pytest.mark.parametrize("opcode", [b"\x96", b"\x8e", b"\x8d"])
def test_a_length_beyond_the_file_is_truncation_not_an_allocation(opcode: bytes) -> None:
    # BYTEARRAY8 / BINBYTES8 / BINUNICODE8 of 7.5e18 bytes (a fuzz case): the unpickler asked
    # for the memory first and said "does not fit in memory"; 4 GB it would have reserved.
    for size in (7_500_296_605_690_511_319, 4 << 30, 100):
        data = b"\x80\x05" + opcode + size.to_bytes(8, "little") + b"x" * 50 + b"."
        with pytest.raises(LoadError, match=r"^the pickle is damaged or truncated \(Unpickl"):
            restricted_loads(data)


def test_what_the_unpickler_refuses_is_left_to_it() -> None:
    """Damage the unpickler reports itself reads as it always has (the walker's tests compare
    their sentences with these)."""
    cases = {
        b"\x80\x04h\x05.": "UnpicklingError",  # a memo slot never written
        b"\x80\x04\x8c\x05ab": "UnpicklingError",  # truncated inside a string
        b"\x80\x04": "EOFError",
        b"\x80\x04\xff.": "UnpicklingError",  # an unknown opcode
    }
    for data, name in cases.items():
        with pytest.raises(LoadError, match=f"damaged or truncated \\({name}\\)"):
            restricted_loads(data)
    with pytest.raises(LoadError, match=r"asks to import os\.system"):
        restricted_loads(b"\x80\x02cos\nsystem\nq\x00.")
