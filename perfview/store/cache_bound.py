"""Where the parsed-trace cache lives and how much it may hold: the bound, and eviction.

* Place: `$PERFVIEW_CACHE_DIR`, else the user cache dir (`$XDG_CACHE_HOME/perfview`,
  `~/Library/Caches/perfview`, `%LOCALAPPDATA%\\perfview`), never beside the input file.
* Size: at most `$PERFVIEW_CACHE_MAX_MB`, the remote mirror's files (`store.remote`)
  included; by default a quarter of the room the cache could have on its disk (what it
  holds plus what is free), at least 2 GB: a fixed 2 GB bound kept a 10 GB trace's 5.7 GB
  entry out, so the trace users most need to reopen quickly was parsed again every time.
  Least recently used traces go first, each with its derived entries (`derived_entries`):
  writing a trace's layout never evicts that trace's own columns. Only what perfview wrote
  is ever deleted (the folder may be shared).

Apart from the entries' format (`parsed_columns`): every kind of entry (columns, layouts,
mirrored files) is counted and evicted here by the same rule.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Collection
from pathlib import Path

from perfview.store import artifacts, mirror_files, temp_folders

DEFAULT_MAX_MB = 2048  # the bound's floor, and the bound where the disk cannot be asked
DISK_SHARE = 0.25  # of (free space + the cache's own), the default bound


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


def max_bytes(held: int | None = None) -> int:
    """`$PERFVIEW_CACHE_MAX_MB` in bytes, else the default (`default_max_bytes`; `held`: what
    the cache holds, when the caller has just summed it)."""
    raw = os.environ.get("PERFVIEW_CACHE_MAX_MB")
    if raw is None:
        return default_max_bytes(held)
    try:
        return int(float(raw) * 1024 * 1024)
    except ValueError:
        return DEFAULT_MAX_MB * 1024 * 1024


def default_max_bytes(held: int | None = None) -> int:
    """A quarter of the room the cache could have (`DISK_SHARE` of its disk's free space
    plus what it holds, `held`, measured when not given), at least `DEFAULT_MAX_MB`. Asked
    of the disk each time: a filling disk shrinks the bound, and the next write evicts."""
    floor = DEFAULT_MAX_MB * 1024 * 1024
    root = cache_dir()
    probe = next((p for p in (root, *root.parents) if p.exists()), None)
    if probe is None:
        return floor
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return floor
    if held is None:
        held = sum(size for _, size, _ in _entries(root)) if root.is_dir() else 0
    return max(floor, int(DISK_SHARE * (free + held)))


def evict(keep: Path | Collection[Path] | None = None, limit: int | None = None) -> None:
    """Delete the least recently used traces' entries until the cache fits `limit` bytes, the
    remote mirror's files (`store.remote`, each with its stamp: `mirror_files.entries`)
    counted and evicted with them; `keep`: what the caller just wrote or fetched, never
    deleted, nor any entry of the same trace (a trace's columns and the entries derived from
    them share the key's prefix: they go together, when the trace was used last)."""
    kept = {keep} if isinstance(keep, Path) else set(keep or ())
    root = cache_dir()
    entries = _entries(root)
    total = sum(size for _, size, _ in entries)
    if limit is None:
        limit = max_bytes(held=total)
    families: dict[str, list[tuple[float, int, Path]]] = {}
    for used, size, entry in entries:
        families.setdefault(_family(entry), []).append((used, size, entry))
    kept_families = {_family(entry) for entry in kept}
    order = sorted(families.items(), key=lambda item: max(used for used, _, _ in item[1]))
    for family, members in order:
        if total <= limit:
            break
        if family in kept_families:
            continue
        for _, size, entry in members:
            if entry in kept:
                continue
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                mirror_files.drop(entry)
            total -= size


def _family(entry: Path) -> str:
    """The trace an entry belongs to: its key (the name's first 32 hex digits) for a trace's
    columns and what was derived from them, the path itself for anything else."""
    name = entry.name
    return name[:32] if entry.is_dir() and _ENTRY_NAME.fullmatch(name) else str(entry)


def _entries(root: Path) -> list[tuple[float, int, Path]]:
    """(last used, bytes, path) of every entry perfview wrote and every mirrored file."""
    entries: list[tuple[float, int, Path]] = []
    for entry in root.iterdir() if root.is_dir() else []:
        if entry.name.startswith(temp_folders.TEMP_PREFIX):
            continue  # a writer's, live or dead: `temp_folders.sweep` decides
        if not _ours(entry):
            continue  # the folder may be shared: never delete what perfview did not write
        try:
            used = _last_used(entry)
            size = sum(f.stat().st_size for f in entry.iterdir())
        except OSError:
            continue
        entries.append((used, size, entry))
    return entries + mirror_files.entries(root)


_ENTRY_NAME = re.compile(r"[0-9a-f]{32}(?:-[A-Za-z0-9_.-]+)?")


def _ours(entry: Path) -> bool:
    """An entry perfview wrote: named by its key, its manifest opening with the artifact
    marker (`artifacts.MAGIC`, the first bytes of every folder `write_folder` publishes)."""
    if not _ENTRY_NAME.fullmatch(entry.name):
        return False
    try:
        with open(entry / artifacts.MANIFEST, "rb") as fh:
            return fh.read(len(artifacts.MAGIC)) == artifacts.MAGIC
    except OSError:
        return False


def _last_used(entry: Path) -> float:
    """The manifest's mtime (touched on every hit; `_ours` checked it is there)."""
    try:
        return (entry / artifacts.MANIFEST).stat().st_mtime
    except FileNotFoundError:
        return entry.stat().st_mtime


__all__ = ["DEFAULT_MAX_MB", "DISK_SHARE", "cache_dir", "default_max_bytes", "evict", "max_bytes"]
