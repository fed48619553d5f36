"""A remote trace is parsed while it downloads (`perfview.streamed`, `scan.arrival`).

The overlap is proven without timing: a filesystem (fsspec's protocol, registered for the
test) hands the file over in parts and holds the last one back until the scanner has parsed
the events of the parts already there and asks for more. The columns must equal the local
file's, whatever the piece size: a scan fed a few bytes at a time meets a cut at every kind
of place (inside a key, a number, a string, an escape, between events, in the header).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from perfview import loaders, streamed
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.loaders import trace
from perfview.store import remote
from tests.conftest import SAMPLES

fsspec = pytest.importorskip("fsspec", reason="fsspec (the remote extra) is absent")
AbstractFileSystem: Any = fsspec.AbstractFileSystem

TRACES = [
    SAMPLES / "kineto_cpu" / "dtu_jc_resnet18_cpu_trace.json",  # object form, torch header
    SAMPLES / "chrome_trace" / "devtools_timeline_chrome65_array.json",  # bare array form
]
PROTOCOL = "perfview-parts"
SCANNED = loaders.LoadOptions(read_cache=False, write_cache=False, compiled=True)


def _tables(bundle: Bundle) -> dict[str, Any]:
    tl = bundle.timeline
    assert tl is not None
    names = ("events", "lanes", "instants", "counters", "flows", "memory")
    tables: dict[str, Any] = {name: getattr(tl, name) for name in names}
    tables["args"] = [bytes(tl.args.blob), tl.args.starts.tolist(), tl.args.lens.tolist()]
    tables["meta"] = tl.meta
    tables["warnings"] = bundle.warnings
    return tables


def _assert_same(got: Bundle, want: Bundle) -> None:
    a, b = _tables(got), _tables(want)
    for name, table in b.items():
        if isinstance(table, pd.DataFrame):
            pd.testing.assert_frame_equal(a[name], table, obj=name)
        else:
            assert a[name] == table, name


class _Dripping(streamed.Arriving):
    """A download that brings its next piece only when the scanner asks for more: the
    scanner meets the end of what arrived at every piece boundary, in lockstep."""

    def __init__(self, path: Path, data: bytes, piece: int) -> None:
        super().__init__(path, len(data))
        self.data, self.piece = data, piece
        self.asked = 0  # the scanner's requests for more, at the end of what arrived

    def wait(self, want: int, consumed: int = 0) -> int:
        self.asked += consumed > 0
        while self.have < min(want, self.size):
            step = 1 if self.have < 3000 else self.piece  # the header one byte at a time
            self.add(self.data[self.have : self.have + step])
            if self.have == self.size:
                self.finished()
        return super().wait(want, consumed)

    def whole(self) -> None:
        self.wait(self.size)  # what follows the events, then the end
        super().whole()


@pytest.mark.parametrize("piece", [7, 4093])
@pytest.mark.parametrize("source", TRACES, ids=lambda p: p.name)
def test_a_trace_scanned_while_it_arrives_equals_the_whole_files(
    source: Path, piece: int, tmp_path: Path
) -> None:
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    data = source.read_bytes()
    target = tmp_path / source.name  # never written: the scan reads the arriving map only
    dripping = _Dripping(target, data, piece)
    streamed.offer(dripping)
    got = trace.load(target, compiled=True)
    assert dripping.asked > len(data) // (4 * piece), "it was scanned piece by piece"
    assert streamed.pending(target) is None
    _assert_same(got, trace.load(source, compiled=True))


# ------------------------------------------------------------ a filesystem that holds back


class _Parts:
    """What the test filesystem serves: the file's parts, and the gate before the last."""

    data = b""
    parts: ClassVar[list[bytes]] = []
    scanned = threading.Event()  # the scanner asked for bytes past the ones served
    consumed = 0  # how far it had parsed then
    fail_at: int | None = None  # raise OSError instead of serving this part
    held_back_s = 60.0  # a test that never opens the gate fails, not hangs


class _PartsFile:
    def __init__(self) -> None:
        self.next = 0

    def __enter__(self) -> _PartsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, _size: int = -1) -> bytes:
        if self.next >= len(_Parts.parts):
            return b""
        if self.next == _Parts.fail_at:
            raise ConnectionResetError("the connection was reset")
        if self.next == len(_Parts.parts) - 1:
            _Parts.scanned.wait(_Parts.held_back_s)
        self.next += 1
        return _Parts.parts[self.next - 1]


class _PartsFS(AbstractFileSystem):  # type: ignore[misc]
    protocol = PROTOCOL

    def info(self, path: str, **_kwargs: Any) -> dict[str, Any]:
        return {"name": path, "size": len(_Parts.data), "type": "file", "ETag": "v1"}

    def _open(self, path: str, mode: str = "rb", **_kwargs: Any) -> _PartsFile:
        return _PartsFile()


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Parts]]:
    """The test filesystem registered, a cache of the test's own, and the scanner's first
    request for bytes past the served parts (with events parsed) opening the gate."""
    fsspec.register_implementation(PROTOCOL, _PartsFS, clobber=True)
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    _Parts.scanned.clear()
    _Parts.consumed, _Parts.fail_at = 0, None
    wait = streamed.Arriving.wait

    def watched(self: streamed.Arriving, want: int, consumed: int = 0) -> int:
        if consumed > 0 and not _Parts.scanned.is_set():
            _Parts.consumed = consumed
            _Parts.scanned.set()
        return wait(self, want, consumed)

    monkeypatch.setattr(streamed.Arriving, "wait", watched)
    yield _Parts
    _Parts.scanned.set()


def _serve(data: bytes, cuts: tuple[float, ...]) -> None:
    at = [0, *(int(len(data) * c) for c in cuts), len(data)]
    _Parts.data = data
    _Parts.parts = [data[a:b] for a, b in itertools.pairwise(at)]


def test_parsing_starts_before_the_last_part_is_served(parts: type[_Parts]) -> None:
    source = TRACES[0]
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    _serve(source.read_bytes(), (0.3, 0.6))
    url = f"{PROTOCOL}://bucket/{source.name}"
    local = remote.resolve(url, stream=True)
    got = loaders.load(local, options=SCANNED)
    assert parts.scanned.is_set()
    served_first = len(parts.parts[0]) + len(parts.parts[1])
    # the scanner had parsed every event of the first two parts (all but the one they cut)
    # before the last part was served: it held back until then
    assert served_first - 4096 < parts.consumed <= served_first
    _assert_same(got, loaders.load(source, options=SCANNED))
    assert local.read_bytes() == parts.data, "the mirror is the whole file"
    assert remote.resolve(url, stream=True) == local
    assert streamed.pending(local) is None


def test_a_download_that_fails_midway_is_one_sentence_and_leaves_no_file(
    parts: type[_Parts],
) -> None:
    source = TRACES[0]
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    _serve(source.read_bytes(), (0.3, 0.6))
    parts.fail_at = 2
    local = remote.resolve(f"{PROTOCOL}://bucket/{source.name}", stream=True)
    with pytest.raises(LoadError, match="the connection was reset"):
        loaders.load(local, options=SCANNED)
    assert not local.exists()
    assert not [p for p in local.parent.iterdir() if p.name.endswith(".part")]


def test_an_object_shorter_than_listed_is_not_kept(parts: type[_Parts]) -> None:
    source = TRACES[0]
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    data = source.read_bytes()
    _serve(data, (0.5,))
    parts.parts = [*parts.parts[:-1], parts.parts[-1][:-10]]  # listed whole, served short
    local = remote.resolve(f"{PROTOCOL}://bucket/{source.name}", stream=True)
    with pytest.raises(LoadError, match="changed while it was read"):
        loaders.load(local, options=SCANNED)
    assert not local.exists()
    assert np.all([not p.name.endswith(".part") for p in local.parent.iterdir()])


def test_a_cancelled_scan_does_not_wait_for_the_network(tmp_path: Path) -> None:
    """Cancel while the scanner waits for bytes that never come: the load ends at once (the
    download is woken, `Arriving.wake`), it does not wait for the network."""
    source = TRACES[0]
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    data = source.read_bytes()
    target = tmp_path / source.name
    stalled = streamed.Arriving(target, len(data))  # its download stalls after a third
    stalled.add(data[: len(data) // 3])
    streamed.offer(stalled)

    def cancel(_fraction: float, message: str) -> None:
        if message.startswith("scanned"):
            raise LoadCancelled("cancelled")

    try:
        with pytest.raises(LoadCancelled):
            trace.load(target, progress=cancel, compiled=True)
        assert stalled.woken
    finally:
        stalled.failed(LoadError("the test is over"))


def test_a_download_left_by_an_ended_process_is_swept(parts: type[_Parts]) -> None:
    """A command that exited mid-download left its temporary file: the next download of the
    same file deletes it (a live process's is left alone)."""
    source = TRACES[0]
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    _serve(source.read_bytes(), (0.5,))
    parts.scanned.set()  # nothing held back
    url = f"{PROTOCOL}://bucket/{source.name}"
    local = remote.mirror_dir(url)
    local.parent.mkdir(parents=True)
    dead = local.with_name(f".{local.name}.999999999.1.part")  # no such process
    live = local.with_name(f".{local.name}.{os.getpid()}.1.part")
    dead.write_bytes(b"{")
    live.write_bytes(b"{")
    assert remote.resolve(url).read_bytes() == parts.data
    assert not dead.exists()
    assert live.exists()
