"""The timeline's layout cached beside a trace's parsed columns, so a reopened 1 GB trace
draws its Timeline at once instead of laying it out again.

Laying out a 1 GB trace's timeline (`core.layout.timeline_layout.prepare_timeline`: every
slice's row, the (row, start) sort, the level-of-detail chain of merged rectangles) costs
0.2-0.45 s of CPU, as much as reading the parsed columns back (`parsed_columns`). Its result is
a handful of flat arrays, so it is stored the same way: a verified folder (`store.artifacts`)
next to the columns' entry, one raw file per array, the rest (labels, spans, scalars) in the
manifest.

* Key: the columns' key (`parsed_columns.key`: path, size, mtime, perfview's build) plus a
  digest of the layout's own code (`layout_id`): a changed layout module misses, nothing is
  bumped by hand.
  The default arrangement only (every track, file order): a user's arrangement is laid out
  again, as before.
* Trust: checksums as for the columns, and a fingerprint of the tables it was laid out from
  (counts, spans, sums of start, duration, lane and depth) must equal the timeline it is
  handed to: a layout never lands on the wrong trace, even if the file changed between the
  load and the write. Anything odd: the entry is deleted and the layout computed again.
* Size and age: entries are ordinary cache entries to `cache_bound.evict` (least recently used
  first, within `PERFVIEW_CACHE_MAX_MB`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import mmap
import threading
from pathlib import Path
from typing import Any

import numpy as np

from perfview import disk_files, readahead
from perfview.core.analysis.torch import remembered
from perfview.core.layout import flame, timeline_layout
from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex, LevelArrays
from perfview.core.layout.timeline_layout import TimelineData, TrackLayout
from perfview.core.layout.timeline_marks import InstantMarks
from perfview.core.model import Bundle, Timeline
from perfview.store import artifacts, parsed_columns, write_gates
from perfview.store.derived_entries import DerivedCache

log = logging.getLogger(__name__)
SUFFIX = "timeline"  # entry folder: <columns key>-timeline-<layout id>
RECT_FIELDS = ("x0", "x1", "row", "node", "bucket", "count")
BLOB = "layout.bin"  # every array, one after another (`_concatenate`)
ALIGN = 64
# written 64 KiB a call: the page cache keeps a file written in bigger pieces in folios as
# big (ext4, Linux 6.16+), and the map's first read of a byte maps its whole folio: a frame
# culling 31k slices of a 1 GB trace's level 0 then made 70 MB of it resident, 8 MB so
WRITE_PIECE = 1 << 16
SPILL_FROM = 1_000_000  # slices: a layout this big keeps its level 0 in a file (`spilled`)
WRITE_APART_FROM = 64 << 20  # bytes: a data file this big is gathered on disk, not in the heap
Spans = dict[str, list[Any]]  # an array's name: [dtype, offset, length] in the data file


@functools.cache
def layout_id() -> str:
    """A digest of the code a layout comes from (the layout package, the units its labels are
    written in, and this module, which writes the entries); with `parsed_columns.build_id` (in
    the columns' key) it covers the tables too. `parsed_columns.build_id` leaves this module out:
    a change here does not make every trace parse again."""
    code = hashlib.blake2b(parsed_columns.build_id().encode(), digest_size=8)
    core = Path(timeline_layout.__file__).resolve().parent.parent
    sources = [*sorted((core / "layout").glob("*.py")), core / "model" / "units.py"]
    for source in [*sources, Path(__file__).resolve()]:  # this file: the entry format
        with contextlib.suppress(OSError):  # a frozen build without sources: the build id
            code.update(source.name.encode() + b"\0" + source.read_bytes())
    return code.hexdigest()


def entry_for(path: Path) -> Path:
    """The folder of `path`'s cached layout (raises OSError when `path` is gone)."""
    return parsed_columns.cache_dir() / f"{parsed_columns.key(path)}-{SUFFIX}-{layout_id()}"


def fingerprint(timeline: Timeline) -> list[int]:
    """What the layout was computed from, cheaply (a few ms at 1 GB): table sizes, origin and
    duration, and the sums of the columns that place a slice. Summed once while the events
    live: the read-ahead, the warm-up and the page each ask for it on a reopen, and at 10 GB
    each sum reads 1 GB of columns (~0.2 s)."""
    events = timeline.events
    with _FINGERPRINTING:  # threads that ask together wait for one sum, not make three
        value: list[int] = _FINGERPRINTS.while_alive(
            events, id(events), lambda: _fingerprint(timeline)
        )
    return list(value)


_FINGERPRINTS = remembered.Store()
_FINGERPRINTING = threading.Lock()


def _fingerprint(timeline: Timeline) -> list[int]:
    ev = timeline.events
    sums = [int(ev[c].to_numpy().sum(dtype=np.int64)) for c in ("ts", "dur", "lane", "depth")]
    sizes = [len(getattr(timeline, t)) for t in ("events", "lanes", "instants", "counters")]
    names = ev["name"]
    n_names = len(names.cat.categories) if hasattr(names, "cat") else -1
    return [*sizes, len(timeline.memory), timeline.origin_ns, timeline.duration_ns, n_names, *sums]


def cacheable(bundle: Bundle) -> bool:
    """Only traces whose columns are cached get their layout cached (small files lay out in
    a blink)."""
    return (
        bundle.format == "trace"
        and bundle.timeline is not None
        and bundle.path is not None
        and parsed_columns.enabled(Path(bundle.path))
    )


def timeline_data(bundle: Bundle, gate: write_gates.WriteGate = write_gates.NOW) -> TimelineData:
    """The Timeline page's data: the cached layout when there is one, else laid out now and
    stored in the background (once `gate` opens)."""
    timeline = bundle.timeline
    assert timeline is not None
    if not cacheable(bundle):
        return timeline_layout.prepare_timeline(timeline)

    def compute() -> TimelineData:
        return spilled(timeline_layout.prepare_timeline(timeline))

    return _CACHE.get_or_compute(Path(bundle.path), timeline, compute, gate)


def spilled(data: TimelineData, folder: Path | None = None) -> TimelineData:
    """`data` with its rectangles (level 0: one per slice, 25 bytes a slice, 850 MB at
    10 GB; the merged levels: 7 more) moved out of the heap into a nameless file of the
    cache's folder, mapped read-only (`disk_files.DiskMap`): their pages are the page
    cache's, in the window's memory only where a frame or a click reads them (a zoomed-out
    frame culls one merged level, a zoomed-in one a few rows' stretch of level 0), and the
    kernel may drop them at any time instead of swapping them out. A reopen maps the stored
    entry's the same way. Small layouts, or where no such file can be made, stay as they are.
    """
    index = data.index
    if len(index.rects) < SPILL_FROM:
        return data
    scalars, levels = index.state()
    arrays: dict[str, np.ndarray] = {}
    for k, (rects, bounds, end_max) in enumerate(levels):
        for name in RECT_FIELDS:
            if getattr(rects, name).strides != (0,):  # counts of one stay a broadcast
                arrays[f"{k}.{name}"] = getattr(rects, name)
        arrays[f"{k}.bounds"], arrays[f"{k}.end_max"] = bounds, end_max.reshape(-1)
    spans = _spans(arrays)  # the entry's data file's own placing
    disk = disk_files.DiskMap.make(_size(spans), str(folder or parsed_columns.cache_dir()))
    if disk is None:
        return data
    try:
        _write_arrays(disk, arrays, spans)
        mapped = disk.sealed()
    except (OSError, ValueError):
        disk.close()
        return data
    views = _split(mapped, spans)
    moved: list[LevelArrays] = []
    for k, (rects, _bounds, _end_max) in enumerate(levels):
        fields = [views.get(f"{k}.{name}", getattr(rects, name)) for name in RECT_FIELDS]
        x0, x1, row, node, bucket, count = fields
        ends = _kept_ends(views[f"{k}.end_max"], levels[k][2].ndim == 2)
        moved.append((Rects(x0, x1, row, node, bucket, count), views[f"{k}.bounds"], ends))
    return dataclasses.replace(data, index=FlameIndex.restore(scalars, moved))


def _write(entry: Path, data: TimelineData, timeline: Timeline) -> None:
    """Store the layout's arrays in one data file, its shape and fingerprint in the manifest."""
    arrays, meta = _pack(data, timeline)
    spans = _spans(arrays)
    meta["arrays"] = spans
    size = _size(spans)
    disk = disk_files.DiskMap.make(size, str(entry.parent)) if size >= WRITE_APART_FROM else None
    if disk is None:
        artifacts.write_folder(entry, {}, {BLOB: _concatenate(arrays, spans)}, meta)
    else:
        try:
            _write_arrays(disk, arrays, spans)
            blob = disk.sealed()
        except (OSError, ValueError):
            disk.close()
            raise
        try:  # the map's file named in the entry (else copied piece by piece, pages given back)
            artifacts.write_folder(entry, {}, {BLOB: blob}, meta)
        finally:
            blob.close()
    _give_back(data.index.rects.x0)


def _write_arrays(disk: disk_files.DiskMap, arrays: dict[str, np.ndarray], spans: Spans) -> None:
    """Each array's bytes at its offset, in WRITE_PIECE pieces (never a second copy in the
    heap: a 10 GB trace's layout is 1.1 GB)."""
    for name, arr in arrays.items():
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        for at in range(0, len(raw), WRITE_PIECE):
            disk.write_at(raw[at : at + WRITE_PIECE], int(spans[name][1]) + at)


def _give_back(array: np.ndarray) -> None:
    """The pages of `array`'s read-only file map (a `spilled` level 0) dropped from the
    process once the entry's write read them all: the next frame reads only what it shows."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):  # np.frombuffer's
        base = base.obj
    if readahead.is_read_only_map(base):
        assert isinstance(base, mmap.mmap)
        readahead.give_back_read(base, 0, len(base))


def _spans(arrays: dict[str, np.ndarray]) -> Spans:
    """Where each array goes in the one data file (dtype, a 64-byte aligned offset, length):
    one file, so a reopened layout holds one memory map (one file descriptor), not ~130."""
    spans: Spans = {}
    offset = 0
    for name, arr in arrays.items():
        spans[name] = [np.dtype(arr.dtype).str, offset, len(arr)]
        offset += -(-arr.nbytes // ALIGN) * ALIGN
    return spans


def _size(spans: Spans) -> int:
    """The data file's length: past the last array, aligned."""
    ends = (
        int(offset) + -(-int(n) * np.dtype(d).itemsize // ALIGN) * ALIGN
        for d, offset, n in spans.values()
    )
    return max(ends, default=0)


def _concatenate(arrays: dict[str, np.ndarray], spans: Spans) -> np.ndarray:
    """All arrays in one byte array, at their `spans` (a small layout's data file)."""
    blob = np.zeros(_size(spans), dtype=np.uint8)
    for name, arr in arrays.items():
        start = int(spans[name][1])
        blob[start : start + arr.nbytes] = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
    return blob


def _split(blob: Any, spans: Spans) -> dict[str, np.ndarray]:
    """The arrays `_concatenate` packed, as read-only views of `blob` (raises if one does not
    fit in it or is not a plain number type)."""
    out: dict[str, np.ndarray] = {}
    for name, (dtype_str, offset, length) in spans.items():
        dtype = np.dtype(dtype_str)
        if dtype.kind not in "biuf" or int(offset) % ALIGN:
            raise ValueError(f"{name}: odd dtype or offset")
        if int(offset) + int(length) * dtype.itemsize > len(blob):
            raise ValueError(f"{name}: past the end of the file")
        out[name] = np.frombuffer(blob, dtype=dtype, count=int(length), offset=int(offset))
    return out


def _pack(data: TimelineData, timeline: Timeline) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """`data` as named flat arrays plus JSON metadata (everything that is not an array)."""
    arrays: dict[str, np.ndarray] = {
        "event_row": data.event_row,
        "tracks.lanes": data.tracks.lanes,
        "tracks.offset": data.tracks.offset,
        "tracks.height": data.tracks.height,
    }
    scalars, levels = data.index.state()
    for k, (rects, bounds, end_max) in enumerate(levels):
        for name in RECT_FIELDS:
            if name == "count" and rects.count.strides == (0,):
                continue  # counts of one (`flame.ones`): no bytes kept, none written
            arrays[f"level{k}.{name}"] = getattr(rects, name)
        # a sampled level's kept ends and starts (2, blocks): stored flat
        arrays[f"level{k}.bounds"], arrays[f"level{k}.end_max"] = bounds, end_max.reshape(-1)
    for i, (_label, x, y) in enumerate(data.curves):
        arrays[f"curve{i}.x"], arrays[f"curve{i}.y"] = x, y
    for i, (x, y) in enumerate(data.curve_samples):
        arrays[f"sample{i}.x"], arrays[f"sample{i}.y"] = x, y
    scopes: list[str] = []
    if data.instants is not None:
        marks = data.instants
        scopes = sorted({str(s) for s in marks.scope.tolist()})
        codes = {s: i for i, s in enumerate(scopes)}
        arrays["instants.scope"] = np.array([codes[str(s)] for s in marks.scope], dtype=np.int16)
        for name in ("ts", "top", "bottom", "source"):
            arrays[f"instants.{name}"] = getattr(marks, name)
    meta = {
        "layout": layout_id(),
        "fingerprint": fingerprint(timeline),
        "labels": [[float(y), str(text)] for y, text in data.labels],
        "curve_labels": [str(label) for label, _x, _y in data.curves],
        "samples": len(data.curve_samples),
        "total_rows": int(data.total_rows),
        "track_rows": int(data.tracks.total_rows),
        "span": [float(data.span[0]), float(data.span[1])],
        "band_span": int(data.band_span),
        "curve_top": [int(t) for t in data.curve_top],
        "index": scalars,
        "levels": len(levels),
        "sampled": [k for k, (_r, _b, end_max) in enumerate(levels) if end_max.ndim == 2],
        "instants": data.instants is not None,
        "scopes": scopes,
    }
    return arrays, meta


def _read(entry: Path, timeline: Timeline) -> TimelineData:
    """The layout in `entry`, checked against `timeline` (raises on anything odd)."""
    folder = artifacts.open_folder(entry, verify=parsed_columns.verifying())
    meta = folder.meta
    if meta.get("layout") != layout_id():
        raise ValueError("laid out by other code")
    if meta.get("fingerprint") != fingerprint(timeline):
        raise ValueError("laid out from other tables")
    # memory-mapped, not read into fresh arrays: the file is in the page cache, and the
    # first touch of ~200 MB of fresh memory (nccl at 1 GB) cost more than laying out anew
    parts = _split(folder.blob(BLOB), meta["arrays"])
    levels = [
        (
            Rects(*(_field(parts, k, name) for name in RECT_FIELDS)),
            parts[f"level{k}.bounds"],
            _kept_ends(parts[f"level{k}.end_max"], k in meta["sampled"]),
        )
        for k in range(int(meta["levels"]))
    ]
    ev = timeline.events
    if len(parts["event_row"]) != len(ev) or (len(levels[0][0]) > len(ev)):
        raise ValueError("row count differs")
    categories, codes = timeline_layout.name_codes(ev["name"])  # as `prepare_timeline`
    instants = None
    if meta["instants"]:
        scope = np.asarray(meta["scopes"], dtype=object)[parts["instants.scope"]]
        fields = ("ts", "top", "bottom", "source")
        ts, top, bottom, source = (parts[f"instants.{n}"] for n in fields)
        instants = InstantMarks(ts, top, bottom, source, scope)
    tracks = TrackLayout(
        parts["tracks.lanes"], parts["tracks.offset"], parts["tracks.height"], meta["track_rows"]
    )
    curves = [
        (label, parts[f"curve{i}.x"], parts[f"curve{i}.y"])
        for i, label in enumerate(meta["curve_labels"])
    ]
    samples = tuple((parts[f"sample{i}.x"], parts[f"sample{i}.y"]) for i in range(meta["samples"]))
    return TimelineData(
        categories,
        codes,
        ev["ts"].to_numpy(dtype=np.int64),
        ev["dur"].to_numpy(dtype=np.int64),
        tracks,
        parts["event_row"],
        FlameIndex.restore(meta["index"], levels),
        [(float(y), str(text)) for y, text in meta["labels"]],
        curves,
        int(meta["total_rows"]),
        (float(meta["span"][0]), float(meta["span"][1])),
        int(meta["band_span"]),
        tuple(int(t) for t in meta["curve_top"]),
        samples,
        instants,
    )


def _kept_ends(flat: np.ndarray, sampled: bool) -> np.ndarray:
    """A level's running ends as kept: a sampled level's (2, blocks), stored flat."""
    if not sampled:
        return flat
    if len(flat) % 2:
        raise ValueError("a sampled level's ends are pairs")
    return flat.reshape(2, -1)


def _field(parts: dict[str, np.ndarray], level: int, name: str) -> np.ndarray:
    """One array of a level's rects; a level's counts not stored are counts of one."""
    key = f"level{level}.{name}"
    if key in parts or name != "count":
        return parts[key]
    return flame.ones(len(parts[f"level{level}.x0"]))


_CACHE: DerivedCache[TimelineData] = DerivedCache("timeline layout", entry_for, _read, _write)
get, put, put_later = _CACHE.get, _CACHE.put, _CACHE.put_later
flush = write_gates.flush  # waits for the background writes (tests, benchmarks)


__all__ = [
    "cacheable",
    "entry_for",
    "fingerprint",
    "flush",
    "get",
    "layout_id",
    "put",
    "put_later",
    "spilled",
    "timeline_data",
]
