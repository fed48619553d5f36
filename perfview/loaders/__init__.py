"""Format detection and loading. Each format is one module with the shape in `base.py`.

`detect()` walks `LOADERS` asking each to sniff the content; the file name only breaks ties
(and picks a loader when content says nothing), so files load under any name.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from perfview.core.errors import LoadError, UnknownFormat
from perfview.core.model import Bundle
from perfview.core.progress import Progress, noop
from perfview.loaders import chrome_trace, cprofile, memory_profiler_text, mprof
from perfview.loaders.base import read_head

LOADERS: list[ModuleType] = [cprofile, chrome_trace, mprof, memory_profiler_text]


def _name_matches(loader: ModuleType, path: Path) -> bool:
    name = path.name.lower()
    return any(name.endswith(ext) for ext in loader.EXTENSIONS)


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
    candidates = [loader for loader in LOADERS if loader.sniff(head, path)]
    if len(candidates) > 1:
        by_name = [loader for loader in candidates if _name_matches(loader, path)]
        candidates = by_name or candidates
    if candidates:
        return candidates[0]
    for loader in LOADERS:
        refusal = getattr(loader, "refuse", None)
        if refusal is not None:
            reason = refusal(head, path)
            if reason:
                raise UnknownFormat(reason)
    raise UnknownFormat(
        "it is not a format perfview reads (cProfile/pstats, Chrome/torch trace JSON, "
        "mprof .dat or a memory_profiler report)"
    )


def load(path: Path | str, *, progress: Progress = noop) -> Bundle:
    """Detect the format of `path` and load it. Raises LoadError with a user-readable reason."""
    path = Path(path)
    loader = detect(path)
    try:
        return loader.load(path, progress=progress)  # type: ignore[no-any-return]
    except LoadError:
        raise
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc


__all__ = ["LOADERS", "LoadError", "UnknownFormat", "detect", "load"]
