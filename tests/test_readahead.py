"""`perfview.readahead`: the CLI reads a big plain trace while it imports, and the trace loader
takes that copy only when it is the same unchanged file; the cache check and the choice of
files are conservative; the module stays import-cheap."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfview import cli, readahead
from perfview.loaders import LoadOptions, load
from perfview.loaders.trace import heap, read
from perfview.store.parsed_columns import cache_dir

# the compiled scanner, whatever the file's size; no cache
SCANNED = LoadOptions(read_cache=False, write_cache=False, compiled=True)


def _trace(path: Path, events: int) -> Path:
    rows = [
        {"ph": "X", "name": f"op{k % 7}", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": k, "dur": 1}
        for k in range(events)
    ]
    path.write_text(json.dumps({"traceEvents": rows}))
    return path


@pytest.fixture
def small_min(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "MIN_BYTES", 1)
    monkeypatch.setattr(readahead, "_ahead", None)


@pytest.mark.usefixtures("small_min")
def test_the_loader_takes_the_read_ahead_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _trace(tmp_path / "t.json", 3000)
    want = load(path, options=SCANNED)
    assert readahead.start(str(path))
    readahead._ahead.thread.join()  # type: ignore[union-attr]
    reads: list[int] = []
    real = readahead.read_plain
    monkeypatch.setattr(readahead, "read_plain", lambda *a: reads.append(1) or real(*a))
    got = load(path, options=SCANNED)
    assert reads == []  # taken, not read again
    assert got.timeline is not None
    assert want.timeline is not None
    assert got.timeline.events.equals(want.timeline.events)
    assert bytes(got.timeline.args.blob) == bytes(want.timeline.args.blob)


@pytest.mark.usefixtures("small_min")
def test_a_changed_or_other_file_is_read_again(tmp_path: Path) -> None:
    path = _trace(tmp_path / "t.json", 100)
    other = _trace(tmp_path / "u.json", 50)
    assert readahead.start(str(path))
    mm, _ = read.read_mapped(other)  # another file: the read-ahead is dropped
    assert bytes(mm[: other.stat().st_size]) == other.read_bytes()
    assert readahead.take(path) is None
    assert readahead.start(str(path))
    readahead._ahead.thread.join()  # type: ignore[union-attr]
    _trace(path, 200)  # changed after it was read ahead
    os.utime(path, ns=(1, 1))
    mm, _ = read.read_mapped(path)
    assert bytes(mm[: path.stat().st_size]) == path.read_bytes()


@pytest.mark.usefixtures("small_min")
def test_which_files_are_worth_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _trace(tmp_path / "t.json", 100)
    other = tmp_path / "speedscope.json"
    other.write_text(json.dumps({"$schema": "x", "profiles": []}))
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(b"\x1f\x8b" + trace.read_bytes())
    assert readahead.worth_it(str(trace))
    assert not readahead.worth_it(str(other))
    assert not readahead.worth_it(str(gz))
    assert not readahead.worth_it(str(tmp_path))
    assert not readahead.worth_it("ops")
    monkeypatch.setenv("PERFVIEW_READAHEAD", "0")
    assert not readahead.worth_it(str(trace))


def test_cache_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _trace(tmp_path / "t.json", 10)
    root = tmp_path / "cache"
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(root))
    monkeypatch.delenv("PERFVIEW_CACHE_MAX_MB", raising=False)
    assert readahead.cache_root() == str(cache_dir())
    assert not readahead.maybe_cached(str(trace))  # no cache folder
    old = root / "a"
    old.mkdir(parents=True)
    (old / "manifest.json").write_text("{}")
    os.utime(old / "manifest.json", ns=(1, 1))
    assert not readahead.maybe_cached(str(trace))  # written before the file changed
    new = root / "b"
    new.mkdir()
    (new / "manifest.json").write_text("{}")
    assert readahead.maybe_cached(str(trace))
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    assert not readahead.maybe_cached(str(trace))


@pytest.mark.parametrize("env", [{}, {"XDG_CACHE_HOME": "/x/y"}])
def test_cache_root_agrees_with_the_cache(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PERFVIEW_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert readahead.cache_root() == str(cache_dir())


@pytest.mark.usefixtures("small_min")
def test_cli_starts_it_only_for_one_big_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = _trace(tmp_path / "t.json", 10)
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    monkeypatch.setattr(heap, "_keep", False)  # what `summary` sets is undone after the test
    cli._read_ahead(["query", str(trace), "select 1"])
    assert readahead._ahead is None
    cli._read_ahead(["summary", str(trace), "--view", "ops"])
    assert readahead.take(trace) is not None
    assert heap._keep
    assert readahead.start(str(trace))
    readahead.discard()
    assert readahead.take(trace) is None


def test_import_cheap() -> None:
    code = "import sys, perfview.readahead; print(sorted({'numpy', 'pandas'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_POPULATE_WRITE is Linux")
def test_populate_maps_a_piece_in_small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages of a piece (not a multiple of the step) are all mapped, a step per call, so
    the GIL that `mmap.madvise` holds is given up between steps (the window's GUI thread)."""
    monkeypatch.setattr(readahead, "POPULATE_STEP", 1 << 20)
    page = mmap.PAGESIZE
    size = (5 << 20) + 3 * page
    mm = readahead.anonymous_map(size + page)
    populate = readahead.populator(mm)
    assert populate is not None

    def resident_pages() -> int:
        return int(Path("/proc/self/statm").read_text().split()[1])

    before = resident_pages()
    try:
        populate(page, size)
    except OSError:
        pytest.skip("kernel without MADV_POPULATE_WRITE")
    assert resident_pages() - before >= size // page - 16  # every page of the piece mapped
    mm.close()


def _aged(path: Path) -> Path:
    """Written long ago, as far as `map_file` can tell (a file changed in the last
    FRESH_S seconds may still be written, and is copied)."""
    os.utime(path, ns=(1, 1))
    return path


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="maps on Linux")


@linux_only
@pytest.mark.parametrize("tail", [0, 1, mmap.PAGESIZE - readahead.PAD, mmap.PAGESIZE - 3])
def test_an_old_file_is_mapped_with_room_after_it(tmp_path: Path, tail: int) -> None:
    """Whatever room the file's last page leaves, the PAD bytes after the content can be
    written (the scanner brackets its batches there), and the file is never written."""
    data = bytes((np.arange(3 * mmap.PAGESIZE + tail) * 7 % 251).astype(np.uint8))
    path = tmp_path / "t.json"
    path.write_bytes(data)
    _aged(path)
    with open(path, "rb") as fh:
        mm = readahead.map_file(fh.fileno(), len(data))
    assert mm is not None
    assert readahead.is_file_map(mm)
    assert len(mm) == len(data) + readahead.PAD
    assert bytes(mm[: len(data)]) == data
    mm[len(data) :] = b" " * readahead.PAD
    mm[:5] = b"XXXXX"  # private: the scanner's edits stay in this process
    assert path.read_bytes() == data
    mm.close()


@linux_only
def test_a_fresh_file_is_copied_not_mapped(tmp_path: Path) -> None:
    path = _trace(tmp_path / "t.json", 50)
    with open(path, "rb") as fh:
        assert readahead.map_file(fh.fileno(), path.stat().st_size) is None
        assert readahead.map_file(fh.fileno(), path.stat().st_size + 1) is None  # not its size
    mm, _ = read.read_mapped(path)
    assert not readahead.is_file_map(mm)


MAPPED_THEN_CUT = """
import os, sys
from pathlib import Path
from perfview import readahead
from perfview.loaders import LoadOptions, load
path = Path(sys.argv[1])
maps = []
real = readahead.map_file
readahead.map_file = lambda *a: maps.append(real(*a)) or maps[-1]
bundle = load(path, options=LoadOptions(read_cache=False, write_cache=False, compiled=True))
assert maps and maps[0] is not None, "the file was not mapped"
assert not readahead.is_file_map(bundle.timeline.args.blob)
before = path.read_bytes()
os.truncate(path, 0)  # the file is cut after the load: what the load kept is its own
blob = bytes(bundle.timeline.args.blob)
Path(sys.argv[2]).write_bytes(blob)
args = bundle.timeline.args
Path(sys.argv[2] + ".spans").write_text(repr((args.starts.tolist(), args.lens.tolist())))
print(len(blob), len(before))
"""


@linux_only
def test_a_mapped_trace_loads_the_same_and_keeps_nothing_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scanner's path on a mapped file gives the same tables and args as on a copy, and
    the args it keeps are its own pages: cutting the file after the load (which would make
    reading a page still mapped from it a bus error) changes nothing. In a child process,
    so that a bus error fails this test and not the suite."""
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    rows = [
        {"ph": "X", "name": f"op{k % 7}", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": k,
         "dur": 1, "args": {"External id": k, "note": "x" * (k % 50)}}
        for k in range(20_000)
    ]  # fmt: skip
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps({"traceEvents": rows}))
    want = load(copy, options=SCANNED)
    mapped = tmp_path / "mapped.json"
    mapped.write_bytes(copy.read_bytes())
    _aged(mapped)
    out = tmp_path / "blob.bin"
    done = subprocess.run(
        [sys.executable, "-c", MAPPED_THEN_CUT, str(mapped), str(out)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert want.timeline is not None
    assert out.read_bytes() == bytes(want.timeline.args.blob)
    spans = (want.timeline.args.starts.tolist(), want.timeline.args.lens.tolist())
    assert Path(f"{out}.spans").read_text() == repr(spans)
    assert mapped.stat().st_size == 0


@pytest.mark.usefixtures("small_min")
def test_a_follow_up_result_goes_to_whoever_takes_the_map(tmp_path: Path) -> None:
    """`then` runs on the read-ahead thread after the read; the one who takes the map gets
    what it returned, once; a failing follow-up hands nothing over."""
    path = _trace(tmp_path / "t.json", 100)
    assert readahead.start(str(path), then=lambda mm: len(mm))
    taken = readahead.take(path)
    assert taken is not None
    assert readahead.followed(taken[0]) == (True, len(taken[0]))
    assert readahead.followed(taken[0]) == (False, None)  # asked once
    assert readahead.followed(bytearray(b"other")) == (False, None)

    def fail(mm: mmap.mmap) -> object:
        raise ValueError("no")

    assert readahead.start(str(path), then=fail)
    taken = readahead.take(path)
    assert taken is not None
    assert readahead.followed(taken[0]) == (False, None)


@pytest.mark.usefixtures("small_min")
def test_the_loader_takes_the_cli_scan_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`perfview summary`'s scan-ahead (`cli._scan_ahead`, while the imports run) is what
    the loader uses: the same tables and args as its own scan, and it does not scan again."""
    from perfview.loaders.trace.scan import parallel

    path = _trace(tmp_path / "t.json", 5000)
    want = load(path, options=SCANNED)
    assert readahead.start(str(path), then=cli._scan_ahead)
    readahead._ahead.thread.join()  # type: ignore[union-attr]
    scans: list[int] = []
    real = parallel.scan
    monkeypatch.setattr(parallel, "scan", lambda *a, **k: scans.append(1) or real(*a, **k))
    got = load(path, options=SCANNED)
    assert scans == []
    assert got.timeline is not None
    assert want.timeline is not None
    assert got.timeline.events.equals(want.timeline.events)
    assert bytes(got.timeline.args.blob) == bytes(want.timeline.args.blob)


def test_summary_prints_the_same_with_and_without_the_read_and_scan_ahead(
    tmp_path: Path,
) -> None:
    """The whole one-shot command on a file big enough for the read- and scan-ahead (and old
    enough to be mapped) prints what it prints with them turned off."""
    rows = [
        {"ph": "X", "name": f"aten::op{k % 13}", "cat": "cpu_op", "pid": 1, "tid": k % 3,
         "ts": k * 3, "dur": 2, "args": {"External id": k}}
        for k in range(170_000)
    ]  # fmt: skip
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"traceEvents": rows}))
    assert path.stat().st_size >= readahead.MIN_BYTES
    _aged(path)
    outs = []
    for ahead in ("1", "0"):
        env = {**os.environ, "PERFVIEW_READAHEAD": ahead, "PERFVIEW_CACHE_MAX_MB": "0"}
        done = subprocess.run(
            [sys.executable, "-m", "perfview", "summary", str(path), "--top", "5"],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert "aten::op" in outs[0]
