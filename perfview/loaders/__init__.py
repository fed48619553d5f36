"""Format detection and loading. Each format is one module with the shape in `base.py`.

`detect()` walks `LOADERS` asking each to sniff the content; the file name only breaks ties
(and picks a loader when content says nothing), so files load under any name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from perfview.core.errors import LoadError, UnknownFormat
from perfview.core.model import Bundle
from perfview.core.progress import Progress, noop
from perfview.loaders import (
    cache,
    chrome_trace,
    collapsed,
    cprofile,
    isolate,
    limits,
    memory_profiler_text,
    mprof,
    pyinstrument,
    speedscope,
)
from perfview.loaders.base import read_head

LOADERS: list[ModuleType] = [
    cprofile,
    speedscope,
    pyinstrument,
    chrome_trace,
    mprof,
    memory_profiler_text,
    collapsed,
]


def _name_matches(loader: ModuleType, path: Path) -> bool:
    name = path.name.lower()
    return any(name.endswith(ext) for ext in loader.EXTENSIONS)


def internal_error(exc: BaseException) -> str:
    """The user's sentence for an exception no loader expected (a bug, never bad input).

    This is the one documented last resort: `detect()`, the GUI's load task and the CLI turn
    such exceptions into this LoadError text, so no window or terminal ever shows a traceback.
    Loaders themselves must raise LoadError for every bad input they can recognise; the fuzzer
    (scripts/fuzz_loaders.py) counts this message as a failure, so it cannot hide a bug.
    """
    detail = f"{type(exc).__name__}: {exc}"
    return f"perfview could not read it (internal error: {detail}); please report it"


def _guarded(fn: Any, head: bytes, path: Path) -> Any:
    """Call a sniffer or refusal; an unexpected exception becomes the internal-error LoadError."""
    try:
        return fn(head, path)
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(internal_error(exc)) from exc


def detect(path: Path) -> ModuleType:
    """Return the loader module for `path`, chosen by content; raise LoadError if none fits."""
    path = Path(path)
    if not path.exists():
        raise LoadError("the file does not exist")
    if path.is_dir():
        raise LoadError("it is a folder, not a file")
    try:
        head = read_head(path)
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc
    if not head.strip():
        raise LoadError("the file is empty")
    candidates = [loader for loader in LOADERS if _guarded(loader.sniff, head, path)]
    if len(candidates) > 1:
        by_name = [loader for loader in candidates if _name_matches(loader, path)]
        candidates = by_name or candidates
    if candidates:
        limits.check(path, candidates[0].NAME)  # refuse before decoding, not by swapping
        return candidates[0]
    for loader in LOADERS:
        refusal = getattr(loader, "refuse", None)
        if refusal is not None:
            reason = _guarded(refusal, head, path)
            if reason:
                raise UnknownFormat(reason)
    raise UnknownFormat(
        "it is not a format perfview reads (cProfile/pstats, Chrome/torch trace JSON, "
        "mprof .dat, a memory_profiler report, speedscope, collapsed stacks or pyinstrument)"
    )


def load(path: Path | str, *, progress: Progress = noop, use_cache: bool = True) -> Bundle:
    """Detect the format of `path` and load it. Raises LoadError with a user-readable reason.

    Big traces go through the parsed-column cache (`perfview.loaders.cache`): an unchanged
    file reopens from it in a fraction of a second; a fresh parse is stored in the background.
    """
    path = Path(path)
    loader = detect(path)
    cached = use_cache and loader is chrome_trace and cache.enabled(path)
    if cached:
        progress(0.0, "reading the cache")
        hit = cache.get(path)
        if hit is not None:
            progress(1.0, "loaded from the cache")
            return hit
        if threading.current_thread() is not threading.main_thread() and isolate.wanted(path):
            # A background load (the GUI's) must leave the GIL to the GUI thread: the compiled
            # scanner does (in-process, fastest); what it refuses is parsed in a child.
            hit = _guarded_load(lambda: chrome_trace.load_scanned(path, progress=progress))
            if hit is None:
                hit = isolate.load(path, progress)
            elif cached:
                cache.put_later(path, hit)
            if hit is not None:
                progress(1.0, "done")
                return hit
    bundle = _guarded_load(lambda: loader.load(path, progress=progress))
    assert bundle is not None
    if cached:
        cache.put_later(path, bundle)
    return bundle


def _guarded_load(fn: Callable[[], Bundle | None]) -> Bundle | None:
    try:
        return fn()
    except LoadError:
        raise
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc


__all__ = ["LOADERS", "LoadError", "UnknownFormat", "detect", "load"]
