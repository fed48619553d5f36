"""The streaming scan of a big trace: the file read window by window, its pages given back,
its args written to a file on disk. None of it may change a table.

* every trace sample loaded through the scanner with tiny windows gives the committed table
  digests (`tests/data/table_snapshot.json`, `scripts/fixtures/snapshot_tables.py`);
* a window ending at any byte of a file (inside an event, a string, an escape sequence, a
  number, between events) gives the same columns as no windows at all;
* the args of a mapped file live in a read-only map of a file on disk, equal to what the
  general path keeps in memory, and the cache writes and reads such a blob unchanged.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview import disk_files, readahead
from perfview.core.model.errors import LoadError
from perfview.loaders import limits, registry
from perfview.loaders.trace import loader as trace_loader
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.read import read_mapped
from perfview.loaders.trace.scan import batches as scan_batches
from perfview.loaders.trace.scan import parallel as trace_parallel
from perfview.store import artifacts
from tests.conftest import SAMPLES
from tests.loaders.test_chrome_trace import _same_bundles
from tests.loaders.test_table_snapshot import EXPECTED, TRACE_DIRS, _snapshot_script
from tests.loaders.test_trace_scan import EDGE_EVENTS

ARRAYS = ("ph", "name", "cat", "pid", "tid", "ts", "ts_ok", "dur", "dur_ok", "corr", "ext",
          "shape", "fid", "bp_e", "scope", "arg_rows", "arg_lens", "arg_starts")  # fmt: skip
INTERNERS = ("phs", "names", "cats", "keys", "shapes", "ids")
TRACES = sorted(k for k in EXPECTED if k.startswith(TRACE_DIRS))


def _old(path: Path) -> Path:
    """Written long enough ago that the loader maps it (`readahead.map_file`), as it maps a
    big trace: the pages given back and the args gathered to disk are a map's."""
    past = time.time() - 60
    os.utime(path, (past, past))
    return path


@pytest.mark.parametrize("label", TRACES)
def test_streamed_views_match_the_snapshot(label: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner with windows of one byte (a stop before every event, the pages read so
    far given back at each), its rows in a file on disk (`rows_on_disk`: their pages given
    back at every window and between the build's stages), gives every view byte for byte
    as the committed snapshot."""
    monkeypatch.setattr(trace_parallel, "rows_on_disk", lambda nbytes: True)
    monkeypatch.setattr(scan_batches, "GIVE_BACK_ROWS", 1)
    path = SAMPLES / label
    if not path.is_file():
        pytest.skip(f"sample {label} is absent ({SAMPLES})")
    try:
        if registry.detect(path).NAME != trace_loader.NAME:
            pytest.skip(f"{label} is not a trace")
    except LoadError:
        pytest.skip(f"{label} does not load (its snapshot says why)")
    bundle = trace_loader.load(path, compiled=True, window=1)
    got = _snapshot_script().bundle_digests(label, bundle)
    want = EXPECTED[label]
    changed = sorted(name for name in want if got.get(name) != want[name])
    assert not changed, f"{label}: these views changed when streamed: {changed}"


def _columns(cols: Columns) -> dict[str, Any]:
    """Everything a scan produced, comparable with ==."""
    out: dict[str, Any] = {name: cols.cat_all(name).tolist() for name in ARRAYS}
    out.update({name: getattr(cols, name).values for name in INTERNERS})
    out.update(n=cols.n, metadata=cols.metadata, counters=cols.counters)
    out["memory"] = {k: cols.mem(k).tolist() for k in sorted(cols.memory)}
    return out


def _scan_mapped(path: Path, window: int, threads: int = 1) -> dict[str, Any]:
    text, _warning = read_mapped(_old(path), lambda *_: None)
    assert readahead.is_file_map(text)
    scanned = trace_parallel.scan(text, lambda *_: None, 0.0, 1.0, threads, window=window)
    assert scanned is not None
    cols = _columns(scanned.cols)
    if scanned.args is not None:
        scanned.args.cancel()
    return cols


def test_a_window_ending_anywhere_changes_nothing(tmp_path: Path) -> None:
    """Windows of every length from 1 byte to the whole file, so that one ends at every
    byte of the events array: inside an event, a key, a string, an escape sequence (`\\"`,
    `\\\\`, `\\u00e9`, a surrogate pair), a number, nested args, or between events. The
    scanner finishes the event it is in at every stop, so the columns never change."""
    events: list[Any] = [e for e in EDGE_EVENTS if isinstance(e, dict)]
    events += [
        {"ph": "X", "name": 'esc \\" \\\\ \u00e9 \U0001f600 \n end', "pid": 1, "tid": 2,
         "ts": 10.125, "dur": 3,
         "args": {"s": "a\\\"b", "u": "\u00e9\u4e2d", "n": [1, {"x": "}"}]}},
        {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 11, "s": "t"},
        {"ph": "C", "name": "ctr", "pid": 1, "ts": 12, "args": {"v": 1.5}},
    ]  # fmt: skip
    path = tmp_path / "edge.json"
    path.write_text(json.dumps({"traceEvents": events}, ensure_ascii=False))
    text = path.read_bytes()
    assert b"\\\\" in text  # escapes are really there
    assert b'\\"' in text
    whole = _scan_mapped(path, 0)
    assert whole["n"] == len(events)
    start = text.index(b"[")
    for window in range(1, len(text) - start + 1):  # one window ends at start + window
        assert _scan_mapped(path, window) == whole, f"window {window}"


def test_windows_on_several_threads_change_nothing(tmp_path: Path) -> None:
    """Ranges scanned on threads of their own (from guessed starts), each stopping at its
    windows and giving its pages back, join into the same columns."""
    events = [
        {"ph": "X", "name": f"op{k % 37}", "cat": "cpu_op", "pid": 1, "tid": k % 5, "ts": k,
         "dur": 0.5, "args": {"s": f"q\\\"{k}", "External id": k}}
        for k in range(20000)
    ]  # fmt: skip
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"traceEvents": events}))
    whole = _scan_mapped(path, 0, threads=1)
    for window in (1, 333, 4096, 65536):
        assert _scan_mapped(path, window, threads=3) == whole, f"window {window}"


def test_mapped_args_live_on_disk_and_equal_the_general_path(tmp_path: Path) -> None:
    events = [
        {"ph": "X", "name": f"k{k}", "pid": 1, "tid": 1, "ts": k, "dur": 1,
         "args": {"text": "x" * (k % 300), "k": k}}
        for k in range(3000)
    ]  # fmt: skip
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"traceEvents": events}))
    streamed = trace_loader.load(_old(path), compiled=True, window=4096)
    assert streamed.timeline is not None
    blob = streamed.timeline.args.blob
    assert readahead.is_read_only_map(blob)  # a file on disk, not memory
    _same_bundles(streamed, trace_loader.load(path, compiled=False))
    assert streamed.timeline.args.get(7) == events[7]["args"]


def test_a_blob_on_disk_is_stored_and_read_back_unchanged(tmp_path: Path) -> None:
    """The cache writes a read-only blob chunk by chunk, giving its pages back, and checks a
    mapped blob block by block the same way: the bytes round-trip."""
    data = np.random.default_rng(7).integers(0, 256, 3 * mmap.PAGESIZE + 17, dtype=np.uint8)
    disk = disk_files.DiskMap.make(len(data), str(tmp_path))
    assert disk is not None
    disk.write_at(data[:5000], 0)
    disk.write_at(data[5000:], 5000)
    blob = disk.sealed()
    assert readahead.is_read_only_map(blob)
    assert bytes(blob) == data.tobytes()
    folder = artifacts.write_folder(tmp_path / "entry", {}, {"args.bin": blob}, {"k": 1})
    back = artifacts.open_folder(folder).blob("args.bin")
    assert readahead.is_read_only_map(back)
    assert bytes(back) == data.tobytes()
    assert list(tmp_path.iterdir()) == [tmp_path / "entry"]  # the blob's file has no name


def test_a_sealed_blob_is_named_in_the_entry_not_copied(tmp_path: Path) -> None:
    """A sealed blob's file (no name yet) is given the entry's name: the entry and the map
    share one file (a 10 GB trace's 3 GB of args written once), its bytes and checksums are
    those of a copy, and the entry outlives the map."""
    data = np.random.default_rng(8).integers(0, 256, 2 * mmap.PAGESIZE + 5, dtype=np.uint8)
    disk = disk_files.DiskMap.make(len(data), str(tmp_path))
    assert disk is not None
    disk.write_at(data, 0)
    blob = disk.sealed()
    if not isinstance(blob, disk_files.SealedFile):
        pytest.skip("no O_TMPFILE on this file system: the blob is copied (the test above)")
    copied = artifacts.write_folder(tmp_path / "copy", {}, {"args.bin": bytes(blob)}, {"k": 1})
    folder = artifacts.write_folder(tmp_path / "entry", {}, {"args.bin": blob}, {"k": 1})
    linked = folder / "args.bin"
    assert os.stat(linked).st_nlink == 1  # the file's one name: the entry's
    assert (copied / "args.bin").read_bytes() == linked.read_bytes() == data.tobytes()
    assert artifacts.open_folder(copied).parts == artifacts.open_folder(folder).parts
    blob.close()
    back = artifacts.open_folder(folder).blob("args.bin")
    assert bytes(back) == data.tobytes()


def test_a_sealed_blob_that_cannot_be_named_there_is_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the name cannot be given (another file system), the bytes are copied as before."""
    data = np.arange(3 * mmap.PAGESIZE, dtype=np.uint8)
    disk = disk_files.DiskMap.make(len(data), str(tmp_path))
    assert disk is not None
    disk.write_at(data, 0)
    blob = disk.sealed()
    monkeypatch.setattr(disk_files.SealedFile, "link_to", lambda self, path: False)
    folder = artifacts.write_folder(tmp_path / "entry", {}, {"args.bin": blob}, {"k": 1})
    assert (folder / "args.bin").read_bytes() == data.tobytes()
    assert bytes(artifacts.open_folder(folder).blob("args.bin")) == data.tobytes()


def test_the_pre_open_estimate_of_a_big_plain_trace_is_the_streamed_one(tmp_path: Path) -> None:
    """A plain trace the scanner maps and streams needs about 1.5x its size (measured at 1
    and 10 GB), so a 10 GB trace opens on a 24 GB machine; a small file or a gzip one (read
    whole into memory) keeps the old estimate."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(limits.STREAMED_MIN_BYTES)  # sparse: no disk used
    assert (
        limits.needed_memory(big, "trace")
        == int(limits.STREAMED_MIN_BYTES * limits.STREAMED_OVERHEAD["trace"]) + limits.BASE_BYTES
    )
    small = tmp_path / "small.json"
    small.write_bytes(b'{"traceEvents": []}')
    assert (
        limits.needed_memory(small, "trace")
        == int(len(small.read_bytes()) * limits.OVERHEAD["trace"]) + limits.BASE_BYTES
    )
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(b" " * limits.STREAMED_MIN_BYTES))
    assert (
        limits.needed_memory(packed, "trace")
        == int(limits.STREAMED_MIN_BYTES * limits.OVERHEAD["trace"]) + limits.BASE_BYTES
    )


def test_the_estimate_is_the_on_disk_one_where_the_rows_go_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where memory is short for the file, the scanner's rows go to disk and the load needs
    about the file's size (0.82-0.85x measured at 10 GB): a 20 GB trace on a machine with
    22 GB available is opened, not refused at 1.6x; with memory to spare, the streamed
    estimate stays."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(limits.STREAMED_MIN_BYTES)  # sparse: no disk used
    monkeypatch.setattr(limits, "rows_on_disk", lambda nbytes: True)
    on_disk = limits.needed_memory(big, "trace")
    assert (
        on_disk
        == int(limits.STREAMED_MIN_BYTES * limits.ON_DISK_OVERHEAD["trace"]) + limits.BASE_BYTES
    )
    monkeypatch.setattr(limits, "rows_on_disk", lambda nbytes: False)
    assert limits.needed_memory(big, "trace") > on_disk


def test_args_stay_in_memory_where_no_file_can_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cache folder can be made (a file is in its way): the args are gathered in memory,
    as before, and the tables are the same."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(blocker / "cache"))
    assert disk_files.DiskMap.make(4096) is None
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": k, "dur": 1, "args": {"k": k}}
              for k in range(500)]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    bundle = trace_loader.load(_old(path), compiled=True, window=64)
    assert bundle.timeline is not None
    assert not readahead.is_read_only_map(bundle.timeline.args.blob)
    _same_bundles(bundle, trace_loader.load(path, compiled=False))


def _many(tmp_path: Path, count: int = 20000) -> Path:
    events = [
        {"ph": "X", "name": f"op{k % 37}", "cat": "cpu_op", "pid": 1, "tid": k % 5, "ts": k,
         "dur": 0.5, "args": {"s": f"q\\\"{k}", "External id": k}}
        for k in range(count)
    ]  # fmt: skip
    path = tmp_path / "many.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.mark.parametrize("threads", [1, 3])
def test_rows_on_disk_given_back_and_grown_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """The first range's rows in a file on disk (`reserved_batch(on_disk=True)`), its blocks
    reserved a few rows at a time (each FULL stop reserves more) and its pages given back
    at every window's end: the same columns as the rows in memory."""
    path = _many(tmp_path)
    whole = _scan_mapped(path, 0, threads=1)  # no windows: the room in memory
    monkeypatch.setattr(scan_batches, "AHEAD_ROWS", 97)
    monkeypatch.setattr(trace_parallel, "AHEAD_ROWS", 97)
    monkeypatch.setattr(scan_batches, "GIVE_BACK_ROWS", 1)
    made: list[scan_batches.Room] = []
    real = scan_batches.reserved_batch

    def watched(nbytes: int, *, on_disk: bool = False) -> scan_batches.Room | None:
        assert on_disk  # `rows_on_disk`, below
        room = real(nbytes, on_disk=on_disk)
        if room is not None:
            made.append(room)
        return room

    monkeypatch.setattr(trace_parallel, "reserved_batch", watched)
    monkeypatch.setattr(trace_parallel, "rows_on_disk", lambda nbytes: True)
    for window in (1, 4096):
        assert _scan_mapped(path, window, threads=threads) == whole, f"window {window}"
    assert made
    assert all(room.on_disk and room.used for room in made)
    assert all(room.fd < 0 for room in made)  # its file closed once the scan is over


def test_a_full_disk_leaves_the_rows_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the disk refuses more blocks (full), the scanner goes on in batches in memory
    (no row is ever written where the file has no block: that would be a bus error)."""
    path = _many(tmp_path)
    whole = _scan_mapped(path, 0, threads=1)
    monkeypatch.setattr(scan_batches, "AHEAD_ROWS", 500)
    monkeypatch.setattr(trace_parallel, "AHEAD_ROWS", 500)
    calls = {"n": 0}
    real = os.posix_fallocate

    def full_after_the_first_rows(fd: int, offset: int, length: int) -> None:
        calls["n"] += 1
        if calls["n"] > 20:  # one reservation (20 rows of the room), then a full disk
            raise OSError(28, "No space left on device")
        real(fd, offset, length)

    monkeypatch.setattr(os, "posix_fallocate", full_after_the_first_rows)
    monkeypatch.setattr(trace_parallel, "rows_on_disk", lambda nbytes: True)
    assert _scan_mapped(path, 4096, threads=1) == whole
    assert calls["n"] > 20


def test_a_room_on_disk_keeps_its_rows_when_given_back() -> None:
    """A room on disk gives its pages back without losing a value (they are read again from
    its file), unlike the room in memory (`Room.release`: zeros)."""
    room = scan_batches.reserved_batch(64 << 20, on_disk=True)
    assert room is not None
    assert room.on_disk
    count = 100_000
    assert room.back(count)
    codes, i64, u8 = room.writable()
    assert codes.shape[1] == i64.shape[1] == u8.shape[1] >= count
    for k, arr in enumerate(room.batch):
        arr[:, :count] = np.arange(count) % 100 + k
    room.give_back(count)
    room.release([(1, 2)], count)
    for k, arr in enumerate(room.batch):
        assert (arr[:, :count] == np.arange(count) % 100 + k).all()
    room.close_file()
    assert room.fd < 0


def test_only_a_file_big_for_the_memory_available_has_its_rows_on_disk() -> None:
    """`rows_on_disk`: a file over 1/DISK_SHARE of the memory available (MemAvailable)."""
    with open("/proc/meminfo", "rb") as fh:
        line = next(x for x in fh if x.startswith(b"MemAvailable:"))
    available = int(line.split()[1]) * 1024
    assert not limits.rows_on_disk(1 << 20)
    assert limits.rows_on_disk(available)


def test_a_consuming_build_lets_each_column_go_and_builds_the_same_tables(
    tmp_path: Path,
) -> None:
    """The loader's build (`consume`) empties each scanned column once read for the last time
    and gives its rows' pages back (`Scanned.let_go`), with the same tables as a build that
    keeps them."""
    from perfview.loaders.trace.build import build

    text, _warning = read_mapped(_old(_many(tmp_path)), lambda *_: None)
    scanned = trace_parallel.scan(text, lambda *_: None, 0.0, 1.0, 1, window=0)
    assert scanned is not None
    assert scanned.let_go is not None  # the rows were the room's
    if scanned.args is not None:
        scanned.args.cancel()
    kept = build(scanned.cols, compiled=True)
    assert len(scanned.cols.cat_all("ts")) == scanned.cols.n
    consumed = build(scanned.cols, compiled=True, let_go=scanned.let_go, consume=True)
    for name in ("events", "lanes", "instants", "counters", "flows", "memory"):
        assert getattr(kept, name).equals(getattr(consumed, name)), name
    assert (kept.arg_index == consumed.arg_index).all()
    for name in ("pid", "tid", "ts", "dur", "dur_ok", "shape", "scope", "corr", "ext"):
        assert not getattr(scanned.cols, name), name


def test_the_events_fields_are_let_go_before_the_args_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flows' ends are read from the per-event columns once the arrows are matched
    (`tables.flow_ends`), so a consuming build has let the events' names, categories, flow
    ids and binding points go when it makes the args index beside the flows' binding (a
    10 GB load's peak there: 7.0 -> 6.4 GB); the flows are those of a build that keeps
    every column."""
    from perfview.loaders.trace import build as build_mod

    events: list[dict[str, Any]] = []
    for k in range(3000):
        events += [
            {"ph": "X", "name": f"op{k % 37}", "cat": "cpu_op", "pid": 1, "tid": k % 5,
             "ts": 10 * k, "dur": 8, "args": {"External id": k}},
            {"ph": "X", "name": f"kernel{k % 7}", "cat": "kernel", "pid": 2, "tid": 7,
             "ts": 10 * k + 50, "dur": 4},
            {"ph": "s", "name": "ac2g", "cat": "ac2g", "id": k, "pid": 1, "tid": k % 5,
             "ts": 10 * k + 1},
            {"ph": "f", "name": "ac2g", "cat": "ac2g", "id": k, "pid": 2, "tid": 7,
             "ts": 10 * k + 50, **({"bp": "e"} if k % 2 else {})},
        ]  # fmt: skip
        if k % 100 == 0:
            events.append({"ph": "i", "name": "mark", "pid": 1, "tid": 0, "ts": 10 * k, "s": "p"})
    path = tmp_path / "flows.json"
    path.write_text(json.dumps({"traceEvents": events}))
    text, _warning = read_mapped(_old(path), lambda *_: None)
    scanned = trace_parallel.scan(text, lambda *_: None, 0.0, 1.0, 1, window=0)
    assert scanned is not None
    if scanned.args is not None:
        scanned.args.cancel()
    kept = build_mod.build(scanned.cols, compiled=True)
    assert len(kept.flows) == 3000
    assert (kept.flows["dst_event"] >= 0).all()
    assert len(kept.instants) == 30
    seen: list[dict[str, int]] = []
    index = build_mod._arg_index

    def spy(cols: Any, src: np.ndarray, fast: Any) -> np.ndarray:
        seen.append({n: len(getattr(cols, n)) for n in ("name", "cat", "fid", "bp_e", "shape")})
        return index(cols, src, fast)

    monkeypatch.setattr(build_mod, "_arg_index", spy)
    consumed = build_mod.build(scanned.cols, compiled=True, let_go=scanned.let_go, consume=True)
    assert seen == [{"name": 0, "cat": 0, "fid": 0, "bp_e": 0, "shape": 0}]
    assert kept.flows.equals(consumed.flows)
    assert kept.instants.equals(consumed.instants)
