"""The formats perfview reads and how one is chosen for a file: by content, never by name alone.

`detect()` walks `LOADERS` asking each to sniff the content; the file name only breaks ties
(and picks a loader when content says nothing), so files load under any name. Every entry is
checked by mypy against the `Loader` protocol (`perfview.loaders.base`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfview.core.model.errors import LoadError, UnknownFormat
from perfview.loaders import (
    collapsed,
    cprofile,
    cuda_snapshot,
    foreign,
    gecko,
    limits,
    memory_profiler_text,
    memray,
    mprof,
    pprof,
    pyinstrument,
    scalene,
    speedscope,
    trace,
)
from perfview.loaders.base import Loader, read_head

LOADERS: tuple[Loader, ...] = (
    cprofile,
    speedscope,  # JSON like traces: its own keys decide before the trace loader looks
    gecko,  # JSON too: a `meta` with an `interval` and threads
    scalene,  # JSON: Scalene's own keys
    pyinstrument,
    trace,
    mprof,
    memory_profiler_text,
    cuda_snapshot,
    memray,
    pprof,  # binary protobuf: a walk of its top-level fields
    collapsed,  # plain text lines: last, after every format with a signature
)


def _name_matches(loader: Loader, path: Path) -> bool:
    name = path.name.lower()
    return any(name.endswith(ext) for ext in loader.EXTENSIONS)


def internal_error(exc: BaseException) -> str:
    """The user's sentence for an exception no loader expected (a bug, never bad input).

    This is the one documented last resort: `detect()`, the GUI's load task and the CLI turn
    such exceptions into this LoadError text, so no window or terminal ever shows a traceback.
    Loaders themselves must raise LoadError for every bad input they can recognise; the fuzzer
    (scripts/probes/fuzz_loaders.py) counts this message as a failure, so it cannot hide a bug.
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


def _head(path: Path) -> bytes:
    if not path.exists():
        raise LoadError("the file does not exist")
    if path.is_dir():
        raise LoadError("it is a folder, not a file")
    try:
        return read_head(path)
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc


def detect(path: Path, head: bytes | None = None) -> Loader:
    """Return the loader module for `path`, chosen by content; raise LoadError if none fits.
    `head`: the file's first bytes, when the caller has them (a download still arriving,
    `perfview.streamed`)."""
    path = Path(path)
    if head is None:
        head = _head(path)
    if not head.strip():
        raise LoadError("the file is empty")
    tool = foreign.name_tool(head)  # before sniffing: the trace reader takes any JSON object
    if tool:
        raise UnknownFormat(tool)
    candidates = [loader for loader in LOADERS if _guarded(loader.sniff, head, path)]
    if len(candidates) > 1:
        by_name = [loader for loader in candidates if _name_matches(loader, path)]
        candidates = by_name or candidates
    if candidates:
        limits.check(path, candidates[0].NAME)  # refuse before decoding, not by swapping
        return candidates[0]
    for loader in LOADERS:
        reason = _guarded(loader.refuse, head, path)
        if reason:
            raise UnknownFormat(reason)
    raise UnknownFormat(
        "it is not a format perfview reads (cProfile/pstats, Chrome/torch trace JSON, mprof .dat, "
        "a memory_profiler report, speedscope, collapsed stacks, pyinstrument, a Firefox Profiler "
        "profile, Scalene JSON, pprof, a memray capture or a CUDA memory snapshot)"
    )


__all__ = ["LOADERS", "Loader", "detect", "internal_error"]
