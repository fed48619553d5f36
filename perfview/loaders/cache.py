"""A cache of parsed traces, so reopening an unchanged big trace takes well under a second.

Parsing a 1 GB trace costs seconds; its tables are a fraction of that in plain arrays. An
entry is a folder of `.npy` columns (categoricals as int codes plus their categories in
`meta.json`), the args blob as one raw file (memory-mapped on read: a view decodes only the
args it shows) and `meta.json` with the counts, warnings and trace metadata.

* Key: the resolved path, size, mtime (ns) and `CACHE_VERSION`; any change misses.
* Place: `$PERFVIEW_CACHE_DIR`, else the user cache dir (`$XDG_CACHE_HOME/perfview`,
  `~/Library/Caches/perfview`, `%LOCALAPPDATA%\\perfview`), never beside the input file.
* Size: at most `$PERFVIEW_CACHE_MAX_MB` (default 2048 MB); least recently used entries go first.
* Safety: written to a temp folder and renamed into place, so a crash leaves no half entry; an
  entry that cannot be read is deleted and the file is parsed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from perfview.core import schema
from perfview.core.model import ArgsStore, Bundle, Timeline

CACHE_VERSION = 3  # bump when the loader's output or this layout changes
DEFAULT_MAX_MB = 2048
MIN_SIZE = 8 * 1024 * 1024  # smaller files parse faster than a cache lookup is worth
TABLES = {
    "events": schema.EVENTS,
    "lanes": schema.LANES,
    "instants": schema.INSTANTS,
    "counters": schema.COUNTERS,
    "flows": schema.FLOWS,
    "memory": schema.MEMORY_EVENTS,
}
_PENDING: list[threading.Thread] = []
_LOCK = threading.Lock()
_META = "meta.json"
_BLOB = "args.bin"


def cache_dir() -> Path:
    """Where entries live (created on first write)."""
    env = os.environ.get("PERFVIEW_CACHE_DIR")
    if env:
        return Path(env)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "perfview" / "traces"


def max_bytes() -> int:
    try:
        return int(float(os.environ.get("PERFVIEW_CACHE_MAX_MB", DEFAULT_MAX_MB)) * 1024 * 1024)
    except ValueError:
        return DEFAULT_MAX_MB * 1024 * 1024


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


def key(path: Path) -> str:
    st = path.stat()
    text = f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{CACHE_VERSION}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def get(path: Path) -> Bundle | None:
    """The cached Bundle of `path`, or None (absent, stale or unreadable: then removed)."""
    try:
        entry = cache_dir() / key(path)
    except OSError:
        return None
    if not (entry / _META).is_file():
        return None
    try:
        bundle = _read(entry, path)
    except Exception:  # a corrupt or foreign entry is dropped, never fatal
        shutil.rmtree(entry, ignore_errors=True)
        return None
    with contextlib.suppress(OSError):
        os.utime(entry / _META)  # most recently used
    return bundle


def put(path: Path, bundle: Bundle) -> Path | None:
    """Store a trace Bundle (atomically), then evict old entries; None when not stored."""
    tl = bundle.timeline
    if tl is None or bundle.format != "trace":
        return None
    root = cache_dir()
    try:
        entry = root / key(path)
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
    except OSError:
        return None
    try:
        _write(tmp, bundle, tl)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
    except (OSError, TypeError, ValueError):  # disk full, odd metadata: just no entry
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    evict(keep=entry)
    return entry


def put_later(path: Path, bundle: Bundle) -> None:
    """`put` on a background thread, so writing the entry never delays showing the trace.

    The thread is not a daemon: a short-lived process (the CLI) finishes the entry before it
    exits instead of leaving a temp folder behind. `flush()` waits for pending writes.
    """
    # daemon=False explicitly: a thread inherits daemon from its creator, and the GUI's loads
    # run on Qt pool threads, which Python sees as daemon threads; the entry was then cut off
    # at exit, leaving a half-written temp folder (found timing `perfview --screenshot`)
    thread = threading.Thread(
        target=_put_politely, args=(path, bundle), name="perfview-cache-put", daemon=False
    )
    with _LOCK:
        _PENDING.append(thread)
    thread.start()


def _put_politely(path: Path, bundle: Bundle) -> None:
    """`put` at the lowest CPU priority: writing a 1 GB trace's entry takes ~2 s of CPU, just
    when the window builds the new tab and the load task prepares its pages, and on a 2-core
    machine it had slowed the tab's build by a third. On Linux the niceness of a thread is its
    own; elsewhere this is a plain `put`."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    put(path, bundle)


def flush(timeout: float | None = None) -> None:
    """Wait for background cache writes (tests, benchmarks)."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for thread in pending:
        thread.join(timeout)


def evict(keep: Path | None = None, limit: int | None = None) -> None:
    """Delete least recently used entries until the cache fits `limit` bytes."""
    limit = max_bytes() if limit is None else limit
    root = cache_dir()
    entries: list[tuple[float, int, Path]] = []
    now = time.time()
    for entry in root.iterdir() if root.is_dir() else []:
        try:
            if entry.name.startswith(".tmp-"):
                if now - entry.stat().st_mtime > 3600:  # left behind by a crash
                    shutil.rmtree(entry, ignore_errors=True)
                continue
            used = (entry / _META).stat().st_mtime
            size = sum(f.stat().st_size for f in entry.iterdir())
        except OSError:
            continue
        entries.append((used, size, entry))
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if keep is not None and entry == keep:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        total -= size


def _write(folder: Path, bundle: Bundle, tl: Timeline) -> None:
    tables: dict[str, dict[str, Any]] = {}
    for name, spec in TABLES.items():
        frame: pd.DataFrame = getattr(tl, name)
        cols: dict[str, Any] = {}
        for col in spec:  # only the schema's columns: a view may have added its own
            series = frame[col]
            file = folder / f"{name}.{col}.npy"
            if isinstance(series.dtype, pd.CategoricalDtype):
                cats = [str(c) for c in series.cat.categories]
                np.save(file, np.asarray(series.cat.codes))
                kind = str(series.cat.categories.dtype)  # "object" or pandas 3's "str"
                cols[col] = {"kind": "category", "categories": cats, "dtype": kind}
            elif series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
                cols[col] = {"kind": "object", "values": [str(v) for v in series.tolist()]}
            else:
                np.save(file, series.to_numpy())
                cols[col] = {"kind": "array"}
        tables[name] = {"columns": cols, "rows": len(frame)}
    np.save(folder / "args.starts.npy", tl.args.starts)
    np.save(folder / "args.lens.npy", tl.args.lens)
    with open(folder / _BLOB, "wb") as fh:
        fh.write(tl.args.blob)
    meta = {
        "version": CACHE_VERSION,
        "tables": tables,
        "origin_ns": tl.origin_ns,
        "duration_ns": tl.duration_ns,
        "meta": tl.meta,
        "bundle_duration_ns": bundle.duration_ns,
        "counts": bundle.counts,
        "warnings": bundle.warnings,
    }
    (folder / _META).write_text(json.dumps(meta), encoding="utf-8")


def _read(folder: Path, path: Path) -> Bundle:
    meta = json.loads((folder / _META).read_text(encoding="utf-8"))
    if meta.get("version") != CACHE_VERSION:
        raise ValueError("old cache layout")
    frames: dict[str, pd.DataFrame] = {}
    for name, spec in TABLES.items():
        info = meta["tables"][name]
        data: dict[str, Any] = {}
        for col in spec:
            c = info["columns"][col]
            if c["kind"] == "category":
                codes = np.load(folder / f"{name}.{col}.npy")
                data[col] = pd.Categorical.from_codes(
                    codes, categories=pd.Index(c["categories"], dtype=c.get("dtype", "object"))
                )
            elif c["kind"] == "object":
                data[col] = pd.Series(c["values"], dtype=object)
            else:
                data[col] = np.load(folder / f"{name}.{col}.npy")
        frame = pd.DataFrame(data, columns=list(spec))
        if len(frame) != info["rows"]:
            raise ValueError(f"{name}: row count differs")
        frames[name] = frame
    starts = np.load(folder / "args.starts.npy")
    lens = np.load(folder / "args.lens.npy")
    blob: Any = b""
    if (folder / _BLOB).stat().st_size:
        with open(folder / _BLOB, "rb") as fh:
            blob = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if len(starts) != len(lens) or (len(lens) and int((starts + lens).max()) > len(blob)):
        raise ValueError("args spans do not fit the blob")
    timeline = Timeline(
        **frames,
        args=ArgsStore(blob=cast(bytes, blob), starts=starts, lens=lens),
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
    "CACHE_VERSION",
    "cache_dir",
    "enabled",
    "evict",
    "flush",
    "get",
    "key",
    "max_bytes",
    "put",
    "put_later",
]
