"""perfview's own reader of memray's record stream (`loaders/memray/stream`): captures written
by memray 1.6 (header 9), 1.10 (10), 1.18 (11), 1.19 (12) and 1.20 (13), checked against the figures
of the memray that wrote them, and table for table against memray's own reader where it is
installed."""

from __future__ import annotations

import contextlib
import dis
import sys
from pathlib import Path

import pandas as pd
import pytest

from perfview.core.model.errors import LoadError
from perfview.core.model.memray_model import MemrayCapture
from perfview.loaders import load
from perfview.loaders import memray as memray_capture
from perfview.loaders.memray import header as memray_header
from perfview.loaders.memray.stream import read_stream
from perfview.loaders.memray.stream.lines import line_number
from tests.conftest import sample

DATA = Path(__file__).resolve().parent.parent / "data" / "memray"

# scripts/fixtures/make_memray_fixtures.py: `memray stats` (peak_memory, total_allocations) of the
# release that wrote each file, and, for all but 1.19's, the totals that release's FileReader
# gives: high-water-mark bytes/count, leaked bytes/count, temporal interval count/bytes.
FIGURES = {
    "v9_default.bin": (9, 8_431_237, 338, None),  # memray 1.6: no temporal records to compare
    "v10_default.bin": (10, 8_431_281, 339, (43, 3_190_794, 47, 59, 8_479_339)),
    "v11_default.bin": (11, 8_431_365, 341, (43, 3_190_878, 47, 51, 8_434_167)),
    "v11_raw_pyalloc.bin": (11, 8_492_381, 6_317, (532, 3_254_526, 566, 589, 8_500_939)),
    "v12_default.bin": (12, 8_431_365, 338, None),
    "v13_default.bin": (13, 8_431_483, 338, (43, 3_191_356, 48, 51, 3_191_436)),
    "v13_native.bin": (13, 8_431_483, 338, (43, 3_191_356, 48, 52, 3_192_830)),
    "v13_raw_pyalloc.bin": (13, 8_492_947, 6_141, (539, 3_255_452, 574, 595, 8_501_665)),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_fixture_figures_equal_the_writing_memray(name: str) -> None:
    version, peak, records, totals = FIGURES[name]
    path = DATA / name
    assert memray_header.header_version(path.read_bytes()[:65536]) == version
    cap = read_stream(path)
    assert cap.meta["version"] == version
    assert cap.meta["peak_bytes"] == peak
    assert cap.meta["records"] == records
    assert int(cap.peak["size_bytes"].sum()) == peak  # the live set at the high-water mark
    assert len(cap.threads) == 2
    if version >= 11:  # memray 1.6 and 1.10 recorded no thread names
        assert sorted(cap.threads["name"]) == ["", "fixture-worker"]
    if totals is not None:
        got = (
            int(cap.peak["count"].sum()),
            int(cap.leaks["size_bytes"].sum()),
            int(cap.leaks["count"].sum()),
            int(cap.intervals["count"].sum()),
            int(cap.intervals["size_bytes"].sum()),
        )
        assert got == totals
    names = {str(n) for n in cap.frames["name"]}
    assert {"leak", "temporary"} <= names


def test_largest_site_and_leak_are_the_program_lines() -> None:
    bundle = load(DATA / "v13_default.bin")
    assert bundle.counts["peak_bytes"] == 8_431_483
    cap = bundle.memray
    assert cap is not None
    frames = cap.frames
    top = cap.peak.sort_values("size_bytes").iloc[-1]
    inner = int(cap.stack(int(top["stack"]))[0])
    assert (frames["name"].iat[inner], int(frames["line"].iat[inner])) == ("temporary", 13)
    leak = cap.leaks.sort_values("size_bytes").iloc[-1]
    inner = int(cap.stack(int(leak["stack"]))[0])
    assert (frames["name"].iat[inner], int(frames["line"].iat[inner])) == ("leak", 9)
    assert int(leak["size_bytes"]) >= 3 << 20


def _canonical(cap: MemrayCapture, table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Stacks as frame tuples (stack ids differ between readers), one row per key."""
    fr = cap.frames
    rows = table.copy()
    rows["stack"] = [
        tuple((fr["name"].iat[f], fr["file"].iat[f], int(fr["line"].iat[f])) for f in cap.stack(s))
        for s in rows["stack"]
    ]
    out = rows.groupby(keys, as_index=False).sum().sort_values(keys)
    return out.reset_index(drop=True)


def _v12_captures() -> list[Path]:
    return [DATA / "v12_default.bin"] + [
        sample(f"memray/{n}")
        for n in ("async_analysis_linux_memray.bin", "web_analyzer_py314_memray_output.bin")
    ]


@pytest.mark.parametrize("index", range(3))
def test_equal_to_memrays_own_reader(index: int) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    path = _v12_captures()[index]
    own = memray_capture.read_capture(path, reader="own")
    theirs = memray_capture.read_capture(path, reader="memray")
    for name, keys in (
        ("peak", ["stack"]),
        ("leaks", ["stack"]),
        ("intervals", ["tid", "stack", "start", "end"]),
    ):
        mine, ref = getattr(own, name), getattr(theirs, name)
        pd.testing.assert_frame_equal(_canonical(own, mine, keys), _canonical(theirs, ref, keys))
    pd.testing.assert_frame_equal(own.threads, theirs.threads)
    pd.testing.assert_frame_equal(own.memory, theirs.memory)
    assert {**own.meta, "reader": ""} == {**theirs.meta, "reader": ""}


def test_auto_reader_needs_no_memray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "memray", None)  # import memray → ImportError
    for name in ("v9_default.bin", "v10_default.bin", "v11_default.bin", "v12_default.bin"):
        assert load(DATA / name).counts["peak_bytes"] == FIGURES[name][1]


def test_native_capture_read_without_memray_warns() -> None:
    bundle = load(DATA / "v13_native.bin")  # 1.19's memray cannot read 13: own reader
    assert bundle.counts["peak_bytes"] == 8_431_483
    assert any("native" in w for w in bundle.warnings)


def test_aggregated_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    path = DATA / "v12_aggregated.bin"
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "memray", None)
        with pytest.raises(LoadError, match="pre-aggregated"):
            read_stream(path)
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    assert load(path).counts["peak_bytes"] == 8_431_365  # memray 1.19 reads it


def test_cut_and_damaged_streams(tmp_path: Path) -> None:
    raw = (DATA / "v13_raw_pyalloc.bin").read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(raw[: len(raw) // 2])
    part = read_stream(cut)  # memray stops at the cut too
    assert 0 < part.meta["records"] < 6_141
    head = tmp_path / "head.bin"
    head.write_bytes(raw[:40])
    with pytest.raises(LoadError, match="cut short"):
        read_stream(head)
    lz4 = (DATA / "v13_default.bin").read_bytes()
    head.write_bytes(lz4[: len(lz4) // 2])  # inside the frame's only block
    with pytest.raises(LoadError, match="cut short"):
        read_stream(head)
    bad = bytearray(raw)
    bad[len(raw) // 3 : len(raw) // 3 + 64] = bytes([0x0B]) * 64  # record type 11: unknown
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(bytes(bad))
    with pytest.raises(LoadError, match="damaged"):
        read_stream(damaged)


def test_progress_reaches_the_end_and_can_cancel() -> None:
    seen: list[float] = []
    read_stream(DATA / "v13_raw_pyalloc.bin", lambda f, m: seen.append(f))
    assert seen
    assert seen[-1] >= 0.85

    class Stop(Exception):
        pass

    def cancel(fraction: float, message: str) -> None:
        raise Stop

    with pytest.raises(Stop):
        read_stream(DATA / "v13_default.bin", cancel)


def test_older_versions_name_their_writer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "old.bin"
    path.write_bytes(b"memray\x00" + (8).to_bytes(4, "little") + bytes(200))
    monkeypatch.setitem(sys.modules, "memray", None)
    with pytest.raises(LoadError, match=r"format version 8, written by memray 1\.2-1\.3"):
        load(path)


def _sample_function(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * 2
    return total


def test_line_table_matches_the_interpreter() -> None:
    code = _sample_function.__code__
    table = code.co_linetable if sys.version_info >= (3, 10) else code.co_lnotab
    version = sys.hexversion
    checked = 0
    for ins in dis.get_instructions(code):
        if ins.positions is None or ins.positions.lineno is None:
            continue
        assert line_number(version, table, ins.offset, code.co_firstlineno) == ins.positions.lineno
        checked += 1
    assert checked > 5


@pytest.mark.parametrize("name", ["v13_raw_pyalloc.bin", "v11_raw_pyalloc.bin", "v12_default.bin"])
def test_small_chunks_give_the_same_tables(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records (and code objects, thread names) cut at chunk ends are carried over whole."""
    from perfview.loaders.memray.stream import source

    whole = read_stream(DATA / name)
    monkeypatch.setattr(source, "CHUNK", 333)
    monkeypatch.setattr(source, "READ", 97)
    calls: list[float] = []
    pieces = read_stream(DATA / name, lambda f, m: calls.append(f))
    assert len(calls) > 20  # one per chunk: the stream really came in pieces
    for table in ("peak", "leaks", "intervals", "threads", "memory", "frames"):
        pd.testing.assert_frame_equal(getattr(pieces, table), getattr(whole, table))
    assert pieces.meta == whole.meta


@pytest.mark.parametrize("name", ["v13_raw_pyalloc.bin", "v11_raw_pyalloc.bin"])
def test_corrupted_bytes_give_a_capture_or_load_error(name: str, tmp_path: Path) -> None:
    """Random damage anywhere in a raw stream: a (partial) capture or one LoadError, never
    another exception (nor a crash in the compiled replay)."""
    import random

    rng = random.Random(17)
    raw = (DATA / name).read_bytes()
    path = tmp_path / "damaged.bin"
    for _ in range(40):
        data = bytearray(raw)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data[: rng.randrange(len(data) // 2, len(data) + 1)]))
        with contextlib.suppress(LoadError):
            read_stream(path)


@pytest.mark.parametrize("name", ["v11_raw_pyalloc.bin", "v13_raw_pyalloc.bin"])
def test_one_header_reader_for_sniffing_choosing_and_reading(name: str) -> None:
    """Sniffing, choosing a reader and the reader itself read the header with the same
    fields (`header.leading`, which `header.parse` extends); every version the reader
    knows has its record encoding in `decode.ENCODINGS`."""
    from perfview.loaders.memray.loader import choose_reader
    from perfview.loaders.memray.stream import decode

    raw = (DATA / name).read_bytes()
    lead = memray_header.leading(memray_header.inner_head(raw[:65536]))
    whole = memray_header.parse(raw)
    assert memray_header.header_version(raw[:65536]) == lead.version == whole.version
    fixed = {k: v for k, v in vars(lead).items() if k != "size"}
    assert fixed == {k: getattr(whole, k) for k in fixed}
    assert whole.size > lead.size  # the command line and the rest follow the fixed fields
    assert choose_reader(raw[:65536], lead.version) == "own"
    assert set(decode.ENCODINGS) == set(memray_header.VERSIONS)
