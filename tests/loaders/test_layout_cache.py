"""The cached timeline layout: a hit equals a fresh layout field by field (and answers the
same zoomed queries), a change of layout code, of the file or of the tables misses, and a
damaged entry is dropped and laid out again."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest

from perfview.core.layout import flame_ends, timeline_layout
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.layout.timeline_layout import TimelineData
from perfview.loaders import load
from perfview.store import layout_entries, parsed_columns
from tests.loaders.cache_setup import loaded_copy, use_cache_dir

NCCL = "kineto_gpu/hta_nccl_data.json.gz"
RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_cache_dir(tmp_path, monkeypatch, max_mb=500)


def _same_index(a: FlameIndex, b: FlameIndex) -> None:
    assert a.state()[0] == b.state()[0]
    levels_a, levels_b = a.state()[1], b.state()[1]
    assert len(levels_a) == len(levels_b)
    for (ra, ba, ea), (rb, bb, eb) in zip(levels_a, levels_b, strict=True):
        for name in layout_entries.RECT_FIELDS:
            left, right = getattr(ra, name), getattr(rb, name)
            assert left.dtype == right.dtype, name
            assert np.array_equal(left, right), name
        assert np.array_equal(ba, bb)
        assert np.array_equal(ea, eb)


def assert_same_layout(a: TimelineData, b: TimelineData) -> None:
    """Every field of two layouts equal (arrays by value and dtype)."""
    for name in ("categories", "codes", "ts", "dur", "event_row"):
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype, name
        assert np.array_equal(left, right), name
    for name in ("lanes", "offset", "height"):
        assert np.array_equal(getattr(a.tracks, name), getattr(b.tracks, name)), name
    assert a.tracks.total_rows == b.tracks.total_rows
    assert (a.labels, a.total_rows, a.span, a.band_span) == (
        b.labels,
        b.total_rows,
        b.span,
        b.band_span,
    )
    assert a.curve_top == b.curve_top
    assert [c[0] for c in a.curves] == [c[0] for c in b.curves]
    for (_, xa, ya), (_, xb, yb) in zip(a.curves, b.curves, strict=True):
        assert np.array_equal(xa, xb)
        assert np.array_equal(ya, yb)
    for (xa, ya), (xb, yb) in zip(a.curve_samples, b.curve_samples, strict=True):
        assert np.array_equal(xa, xb)
        assert np.array_equal(ya, yb)
    assert (a.instants is None) == (b.instants is None)
    if a.instants is not None and b.instants is not None:
        for name in ("ts", "top", "bottom", "source", "scope"):
            assert np.array_equal(getattr(a.instants, name), getattr(b.instants, name)), name
    _same_index(a.index, b.index)


@pytest.mark.parametrize("rel", [NCCL, RESNET])
def test_hit_equals_a_fresh_layout(rel: str, tmp_path: Path) -> None:
    bundle = loaded_copy(rel, tmp_path)
    assert bundle.timeline is not None
    fresh = timeline_layout.prepare_timeline(bundle.timeline)
    # the samples are drawn directly (< 50k slices): give them the level-of-detail chain a
    # big trace has, so that it is stored and restored too
    index = FlameIndex(fresh.index.rects, raw_budget=1000, direct_below=0)
    assert index.build_levels() > 5
    fresh = dataclasses.replace(fresh, index=index)
    if rel == RESNET:  # its memory curves and instants are stored too
        assert fresh.curves
        assert fresh.instants is not None
        assert len(fresh.instants)
    assert layout_entries.get(bundle.path, bundle.timeline) is None  # nothing stored yet
    entry = layout_entries.put(bundle.path, fresh, bundle.timeline)
    assert entry is not None
    # one data file: a reopened layout holds one memory map (one file descriptor)
    assert sorted(p.name for p in entry.iterdir()) == [layout_entries.BLOB, "manifest.json"]
    again = load(bundle.path)  # a reopen: columns from the cache, then the layout
    assert again.timeline is not None
    hit = layout_entries.get(again.path, again.timeline)
    assert hit is not None
    assert_same_layout(fresh, hit)
    # the restored index answers zoomed-out, mid and zoomed-in queries as the fresh one does
    lo, hi = fresh.span
    for frac in (1.0, 0.01, 0.0001):
        x_hi = lo + (hi - lo) * frac
        px = 1400 / (x_hi - lo)
        a, b = fresh.index.query(lo, x_hi, px), hit.index.query(lo, x_hi, px)
        assert len(a) > 0
        for name in layout_entries.RECT_FIELDS:
            assert np.array_equal(getattr(a, name), getattr(b, name)), (frac, name)
    row = int(fresh.index.rects.row[len(fresh.index.rects) // 2])
    x = float(fresh.index.rects.x0[len(fresh.index.rects) // 2])
    assert hit.index.hit(x, row) == fresh.index.hit(x, row) >= 0


def test_timeline_data_stores_then_reads_back(tmp_path: Path, cache_env: Path) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    first = layout_entries.timeline_data(bundle)
    layout_entries.flush()
    entries = [p for p in cache_env.iterdir() if p.name.endswith(layout_entries.layout_id())]
    assert len(entries) == 1
    assert entries[0].name.startswith(parsed_columns.key(bundle.path))
    second = layout_entries.timeline_data(bundle)
    assert second.event_row is not first.event_row
    assert not second.event_row.flags.writeable  # read back (memory-mapped), not laid out
    assert_same_layout(first, second)


def test_other_layout_code_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    data = timeline_layout.prepare_timeline(bundle.timeline)
    entry = layout_entries.put(bundle.path, data, bundle.timeline)
    assert entry is not None
    monkeypatch.setattr(layout_entries, "layout_id", lambda: "0123456789abcdef")
    assert layout_entries.entry_for(bundle.path) != entry
    assert layout_entries.get(bundle.path, bundle.timeline) is None
    # an entry whose manifest names other code (a renamed folder, say) is dropped too
    os.rename(entry, layout_entries.entry_for(bundle.path))
    assert layout_entries.get(bundle.path, bundle.timeline) is None
    assert not layout_entries.entry_for(bundle.path).exists()


def test_changed_file_misses(tmp_path: Path) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    data = timeline_layout.prepare_timeline(bundle.timeline)
    assert layout_entries.put(bundle.path, data, bundle.timeline) is not None
    st = bundle.path.stat()
    os.utime(bundle.path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert layout_entries.get(bundle.path, bundle.timeline) is None


def test_layout_of_other_tables_is_not_used(tmp_path: Path) -> None:
    """A layout stored under a file's key but made from other tables (the file changed
    between the load and the write) never lands on the timeline it does not fit."""
    bundle = loaded_copy(NCCL, tmp_path)
    other = loaded_copy(RESNET, tmp_path)
    assert bundle.timeline is not None
    assert other.timeline is not None
    wrong = timeline_layout.prepare_timeline(other.timeline)
    entry = layout_entries.put(bundle.path, wrong, other.timeline)
    assert entry is not None
    assert layout_entries.get(bundle.path, bundle.timeline) is None
    assert not entry.exists()  # dropped


def test_damaged_entry_is_dropped_and_laid_out_again(tmp_path: Path) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    fresh = timeline_layout.prepare_timeline(bundle.timeline)
    entry = layout_entries.put(bundle.path, fresh, bundle.timeline)
    assert entry is not None
    part = entry / layout_entries.BLOB
    raw = bytearray(part.read_bytes())
    raw[len(raw) // 2] ^= 0x40
    part.write_bytes(bytes(raw))
    assert layout_entries.get(bundle.path, bundle.timeline) is None
    assert not entry.exists()
    again = layout_entries.timeline_data(bundle)  # computed anew, and stored again
    layout_entries.flush()
    assert_same_layout(fresh, again)
    assert entry.is_dir()


def test_small_files_are_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", str(10**12))
    assert not layout_entries.cacheable(bundle)
    layout_entries.timeline_data(bundle)
    layout_entries.flush()
    assert not layout_entries.entry_for(bundle.path).exists()


def test_a_big_layout_keeps_level_0_in_a_file(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big trace's level 0 (one rect per slice) is moved into a nameless file, mapped
    read-only: the same rects, the same answers to every query and click, stored and read
    back alike, and its pages given back once the entry's write read them."""
    from perfview import readahead

    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    fresh = timeline_layout.prepare_timeline(bundle.timeline)
    monkeypatch.setattr(flame_ends, "SAMPLED_FROM", 1000)  # its big levels' running ends
    index = FlameIndex(fresh.index.rects, raw_budget=1000, direct_below=0, presorted=True)
    index.build_levels()
    assert index.state()[1][0][2].ndim == 2  # kept one in 16: (2, blocks), stored flat
    fresh = dataclasses.replace(fresh, index=index)
    assert layout_entries.spilled(fresh) is fresh  # small: stays in memory
    monkeypatch.setattr(layout_entries, "SPILL_FROM", 1)
    moved = layout_entries.spilled(fresh, tmp_path)
    level0 = moved.index.rects
    assert not level0.x0.flags.writeable
    assert not level0.node.flags.writeable
    assert all(not rects.x1.flags.writeable for rects, _b, _e in moved.index.state()[1])
    base = level0.x0.base
    assert isinstance(base, memoryview)
    assert readahead.is_read_only_map(base.obj)
    assert_same_layout(fresh, moved)
    lo, hi = fresh.span
    for frac in (1.0, 0.01, 0.0001):
        x_hi = lo + (hi - lo) * frac
        a, b = (
            fresh.index.query(lo, x_hi, 1400 / (x_hi - lo)),
            moved.index.query(lo, x_hi, 1400 / (x_hi - lo)),
        )
        for name in layout_entries.RECT_FIELDS:
            assert np.array_equal(getattr(a, name), getattr(b, name)), (frac, name)
    for k in range(0, len(level0), max(len(level0) // 50, 1)):
        x, row = float(level0.x0[k]), int(level0.row[k])
        assert moved.index.hit(x, row) == fresh.index.hit(x, row) >= 0
    given: list[tuple[object, int, int]] = []
    monkeypatch.setattr(readahead, "give_back_read", lambda *call: given.append(call))
    entry = layout_entries.put(bundle.path, moved, bundle.timeline)
    assert entry is not None
    assert given == [(base.obj, 0, len(base.obj))]  # the write read every page: given back
    hit = layout_entries.get(bundle.path, bundle.timeline)
    assert hit is not None
    assert_same_layout(fresh, hit)


def test_a_big_data_file_is_gathered_on_disk_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A layout's data file over WRITE_APART_FROM is gathered in a nameless file on disk and
    written to the entry from its read-only map (a 10 GB trace's is 1.1 GB: never a second
    copy in the heap): the same bytes as the small files' heap copy, read back alike."""
    from perfview import disk_files

    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    fresh = timeline_layout.prepare_timeline(bundle.timeline)
    entry = layout_entries.put(bundle.path, fresh, bundle.timeline)
    assert entry is not None
    in_heap = (entry / layout_entries.BLOB).read_bytes()
    made: list[int] = []
    make = disk_files.DiskMap.make

    def recording_make(size: int, folder: str | None = None) -> disk_files.DiskMap | None:
        made.append(size)
        return make(size, folder)

    monkeypatch.setattr(disk_files.DiskMap, "make", staticmethod(recording_make))
    monkeypatch.setattr(layout_entries, "WRITE_APART_FROM", 0)
    entry = layout_entries.put(bundle.path, fresh, bundle.timeline)
    assert entry is not None
    assert made == [len(in_heap)]
    assert (entry / layout_entries.BLOB).read_bytes() == in_heap
    hit = layout_entries.get(bundle.path, bundle.timeline)
    assert hit is not None
    assert_same_layout(fresh, hit)
