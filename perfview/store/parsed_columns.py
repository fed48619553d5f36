"""A cache of parsed traces, so reopening an unchanged big trace takes well under a second.

Parsing a 1 GB trace costs seconds; its tables are a fraction of that in plain arrays. An
entry is a verified folder (`perfview.store.artifacts`): one raw file per column
(categoricals as int codes plus their categories in the manifest), the args blob as one raw
file (memory-mapped on read: a view decodes only the args it shows) and the manifest with the
counts, warnings, trace metadata and a checksum of every file.

* Key: the resolved path, size, mtime (ns), perfview's version, a digest of the column schema
  and one of the loaders' code (`build_id`): any change misses, and nothing is bumped by hand.
* Place and size: `cache_bound` (where the cache lives, its bound, least recently used
  traces evicted first with the entries derived from them).
* Trust: nothing read back is taken on faith. Every file's checksum is checked on read
  (`PERFVIEW_CACHE_VERIFY=0` turns that off, for benchmarks) and the tables pass the schema's
  invariants (`schema.validate_tables`). A damaged entry is deleted, the file is parsed again
  and the Bundle says so in its warnings ("the cached copy was damaged (column events/dur);
  perfview re-read the file"). Entries are written durably (fsync before the publishing
  rename); temp folders of writers that died are removed on the next start (`temp_folders.sweep`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

import perfview
from perfview.core.model import ArgsStore, Bundle, Timeline, schema
from perfview.core.model.errors import LoadError
from perfview.store import artifacts, temp_folders, write_gates
from perfview.store.cache_bound import cache_dir, evict, max_bytes

MIN_SIZE = 8 * 1024 * 1024  # smaller files parse faster than a cache lookup is worth
TABLES = {
    "events": schema.EVENTS,
    "lanes": schema.LANES,
    "instants": schema.INSTANTS,
    "counters": schema.COUNTERS,
    "flows": schema.FLOWS,
    "memory": schema.MEMORY_EVENTS,
}
DAMAGED = "the cached copy was damaged"  # every warning about a dropped entry starts so
_LOCK = threading.Lock()
_NOTES: dict[str, str] = {}  # entry key -> the warning for the Bundle that replaces it
_SWEPT: set[Path] = set()
_BLOB = "args.bin"
log = logging.getLogger(__name__)


def enabled(path: Path) -> bool:
    """Caching is on unless PERFVIEW_CACHE_MAX_MB=0; small files are not worth an entry."""
    try:
        return max_bytes() > 0 and path.stat().st_size >= min_size()
    except OSError:
        return False


def min_size() -> int:
    try:
        return int(os.environ.get("PERFVIEW_CACHE_MIN_BYTES", MIN_SIZE))
    except ValueError:
        return MIN_SIZE


@functools.cache
def build_id() -> str:
    """What makes an entry of this perfview's: its version, the column schema and the loaders'
    code. A new release, a changed dtype or a fixed parser all miss old entries on their own
    (the old `CACHE_VERSION` had to be bumped by hand, and was forgotten once a bug was fixed).
    Costs ~1 ms once per process (hashing ~300 KB of source)."""
    spec = json.dumps({"tables": TABLES, "kinds": schema.KINDS, "format": artifacts.FORMAT})
    code = hashlib.blake2b(spec.encode(), digest_size=16)
    # the parsers, the model and this entry format; the layout's and the Overview's entries
    # key their own (their code is in their keys)
    package = Path(perfview.__file__).resolve().parent
    sources = [
        *sorted((package / "loaders").rglob("*.py")),
        *sorted((package / "core" / "model").glob("*.py")),
        Path(__file__).resolve(),
        Path(artifacts.__file__).resolve(),
    ]
    for source in sources:
        with contextlib.suppress(OSError):  # a frozen build without sources: version + schema
            code.update(source.name.encode() + b"\0" + source.read_bytes())
    return f"{perfview.__version__}-{code.hexdigest()}"


def key(path: Path) -> str:
    st = path.stat()
    text = f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{build_id()}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def verifying() -> bool:
    """Checksums are checked on read unless PERFVIEW_CACHE_VERIFY=0 (benchmarks compare)."""
    return os.environ.get("PERFVIEW_CACHE_VERIFY", "1") != "0"


def get(path: Path) -> Bundle | None:
    """The cached Bundle of `path`, or None (absent, stale or damaged: then removed).

    A damaged entry is logged and remembered: the Bundle parsed instead (stored by `put` or
    `put_later`, or read back here after a child stored it) carries the warning."""
    try:
        name = key(path)
        root = cache_dir()
    except OSError:
        return None
    _sweep_once(root)
    entry = root / name
    if not entry.is_dir():
        return None
    try:
        bundle = _read(entry, path)
    except artifacts.Damaged as exc:
        _drop(entry, name, path, exc.part, exc.why)
        return None
    except Exception as exc:  # anything else odd in an entry: dropped, never fatal
        _drop(entry, name, path, "tables", str(exc))
        return None
    with contextlib.suppress(OSError):
        os.utime(entry / artifacts.MANIFEST)  # most recently used
    _attach_note(name, bundle)
    return bundle


def _drop(entry: Path, name: str, path: Path, part: str, why: str) -> None:
    shutil.rmtree(entry, ignore_errors=True)
    what = "metadata" if part == artifacts.MANIFEST else f"column {part.replace('.', '/', 1)}"
    if part == "tables":
        what = f"tables: {why}"
    log.warning("cache entry %s of %s dropped: %s: %s", entry, path, part, why)
    with _LOCK:
        _NOTES[name] = f"{DAMAGED} ({what}); perfview re-read the file"


def _attach_note(name: str, bundle: Bundle) -> None:
    with _LOCK:
        note = _NOTES.pop(name, None)
    if note is not None and note not in bundle.warnings:
        bundle.warnings.append(note)


def _sweep_once(root: Path) -> None:
    """Remove temp folders of cache writers that died, once per process and cache folder."""
    with _LOCK:
        if root in _SWEPT:
            return
        _SWEPT.add(root)
    with contextlib.suppress(OSError):
        temp_folders.sweep(root)


def put(path: Path, bundle: Bundle, beside: Callable[[], object] | None = None) -> Path | None:
    """Store a trace Bundle (atomically, durably), then evict old entries; None when not stored.

    `beside`: work run on a thread of its own while the columns are written and synced (the
    helper process makes the pages' entries then: the disk takes the columns while the CPU
    makes the pages), started once the columns to write are taken from the tables (it may
    add columns of its own to them then), and ended before this returns. Not run when
    nothing is written (no timeline, no room for the cache); it must not raise."""
    tl = bundle.timeline
    if tl is None or bundle.format != "trace":
        return None
    root = cache_dir()
    try:
        name = key(path)
        entry = root / name
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    _attach_note(name, bundle)
    _sweep_once(root)
    try:
        _write(entry, bundle, tl, beside)
    except (OSError, TypeError, ValueError, RuntimeError):  # disk full, odd metadata, no
        return None  # thread left at exit: just no entry
    evict(keep=entry)
    return entry


def put_later(path: Path, bundle: Bundle, gate: write_gates.WriteGate = write_gates.NOW) -> None:
    """`put` on a background thread once `gate` opens, so writing the entry never delays
    showing the trace (the window's gate opens when the new tab is drawn, `write_gates`).

    The thread is not a daemon (see `write_gates`): a short-lived process (the CLI)
    finishes the entry before it exits. `flush()` waits for pending writes.
    """
    with contextlib.suppress(OSError):
        _attach_note(key(path), bundle)  # the caller returns `bundle` right after this
    write_gates.start("perfview-cache-put", put, path, bundle, gate=gate)


flush = write_gates.flush  # waits for background cache writes (tests, benchmarks)


def _write(
    entry: Path, bundle: Bundle, tl: Timeline, beside: Callable[[], object] | None = None
) -> None:
    arrays: dict[str, np.ndarray] = {}
    tables: dict[str, dict[str, Any]] = {}
    for name, spec in TABLES.items():
        frame: pd.DataFrame = getattr(tl, name)
        cols: dict[str, Any] = {}
        for col in spec:  # only the schema's columns: a view may have added its own
            series = frame[col]
            if isinstance(series.dtype, pd.CategoricalDtype):
                cats = [str(c) for c in series.cat.categories]
                arrays[f"{name}.{col}"] = np.asarray(series.cat.codes)
                kind = str(series.cat.categories.dtype)  # "object" or pandas 3's "str"
                cols[col] = {"kind": "category", "categories": cats, "dtype": kind}
            elif series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
                cols[col] = {"kind": "object", "values": [str(v) for v in series.tolist()]}
            else:
                arrays[f"{name}.{col}"] = series.to_numpy()
                cols[col] = {"kind": "array"}
        tables[name] = {"columns": cols, "rows": len(frame)}
    arrays["args.starts"] = tl.args.starts
    arrays["args.lens"] = tl.args.lens
    meta = {
        "build": build_id(),
        "tables": tables,
        "origin_ns": tl.origin_ns,
        "duration_ns": tl.duration_ns,
        "meta": tl.meta,
        "bundle_duration_ns": bundle.duration_ns,
        "counts": bundle.counts,
        # a note about a dropped entry belongs to this load, not to the file
        "warnings": [w for w in bundle.warnings if not w.startswith(DAMAGED)],
    }
    with _running(beside):
        artifacts.write_folder(entry, arrays, {_BLOB: tl.args.blob}, meta)


@contextlib.contextmanager
def _running(work: Callable[[], object] | None) -> Iterator[None]:
    """`work` on a thread of its own for the length of the block (`put`'s `beside`)."""
    if work is None:
        yield
        return
    thread = threading.Thread(target=work, name="perfview-cache-beside")
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _read(folder: Path, path: Path) -> Bundle:
    """The entry's Bundle; raises artifacts.Damaged (a file failed its check) or another
    exception (an odd manifest; with checksums off, tables that break the schema's
    invariants)."""
    entry = artifacts.open_folder(folder, verify=verifying())
    meta = entry.meta
    if meta.get("build") != build_id():
        raise artifacts.Damaged(artifacts.MANIFEST, "written by another perfview build")
    wanted = [
        f"{name}.{col}"
        for name, spec in TABLES.items()
        for col in spec
        if meta["tables"][name]["columns"][col]["kind"] != "object"
    ]
    parts = entry.read([*wanted, "args.starts", "args.lens"], [])  # checked, in parallel
    # the args blob (half of a big entry) is checked block by block where it is read
    blob_view, block_check = entry.blob_checked_when_read(_BLOB)
    parts[_BLOB] = blob_view
    frames: dict[str, pd.DataFrame] = {}
    for name, spec in TABLES.items():
        info = meta["tables"][name]
        data: dict[str, Any] = {}
        for col in spec:
            c = info["columns"][col]
            if c["kind"] == "category":
                data[col] = pd.Categorical.from_codes(
                    parts[f"{name}.{col}"],
                    categories=pd.Index(c["categories"], dtype=c.get("dtype", "object")),
                )
            elif c["kind"] == "object":
                data[col] = pd.Series(c["values"], dtype=object)
            else:
                data[col] = parts[f"{name}.{col}"]
        # copy=False: no consolidation of same-dtype columns into 2D blocks (a copy of every
        # column: 0.27 s of a 300 MB trace's 0.6 s reopen); a parse builds them so too
        frame = pd.DataFrame(data, columns=list(spec), copy=False)
        if len(frame) != info["rows"]:
            raise ValueError(f"{name}: row count differs")
        frames[name] = frame
    starts, lens, blob = parts["args.starts"], parts["args.lens"], parts[_BLOB]
    if len(starts) != len(lens):
        raise ValueError("args spans and lengths differ in number")
    if not entry.verify and not entry.vouched:
        # checked bytes are the bytes this build wrote from a parse that met the schema
        # (0.03 s of a 1 GB trace's 0.07 s reopen); unchecked ones may be anything
        if len(lens) and int((starts + lens).max()) > len(blob):
            raise ValueError("args spans do not fit the blob")
        schema.validate_tables(frames)
    timeline = Timeline(
        **frames,
        args=ArgsStore(
            blob=cast(bytes, blob),
            starts=starts,
            lens=lens,
            check=None if block_check is None else _ArgsCheck(block_check, folder, path),
        ),
        origin_ns=int(meta["origin_ns"]),
        duration_ns=int(meta["duration_ns"]),
        meta=meta["meta"],
    )
    return Bundle(
        format="trace",
        path=path,
        timeline=timeline,
        counts={k: int(v) for k, v in meta["counts"].items()},
        duration_ns=int(meta["bundle_duration_ns"]),
        warnings=list(meta["warnings"]),
    )


__all__ = [
    "DAMAGED",
    "build_id",
    "cache_dir",
    "enabled",
    "flush",
    "get",
    "key",
    "put",
    "put_later",
    "verifying",
]


class _ArgsCheck:
    """An entry's args blob checked where it is read (`artifacts.BlockCheck`): a damaged
    block drops the entry, so the next open parses the file again, and the reader gets a
    sentence saying so (a LoadError: pages and the CLI show it as they show a load's)."""

    def __init__(self, check: artifacts.BlockCheck, entry: Path, path: Path) -> None:
        self._check, self._entry, self._path = check, entry, path

    def __call__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        try:
            self._check(starts, ends)
        except artifacts.Damaged as exc:
            _drop(self._entry, self._entry.name, self._path, exc.part, exc.why)  # noted
            raise LoadError(
                f"{DAMAGED} (its args); perfview dropped it: open the file again to read it afresh"
            ) from exc


def write_entry(folder: Path, bundle: Bundle) -> None:
    """Write `bundle`'s columns into `folder` in the entry format (the load service's child
    hands its result back this way, whether or not the cache is on)."""
    if bundle.timeline is None:
        raise ValueError("only a trace's columns have an entry format")
    _write(folder, bundle, bundle.timeline)


def read_entry(folder: Path, path: Path) -> Bundle:
    """The Bundle of `path` from columns written by `write_entry`."""
    return _read(folder, path)
