"""Loading files: the format registry (`registry`), the loaders, and the load service.

`load(path, progress=…, options=LoadOptions(…))` is the one entry point; see `service` for what
the options decide (where the parse runs, the cache).
"""

from __future__ import annotations

from perfview.core.model.errors import LoadError, UnknownFormat
from perfview.loaders.registry import LOADERS, Loader, detect, internal_error
from perfview.loaders.service import FRESH, LoadOptions, Where, load

__all__ = [
    "FRESH",
    "LOADERS",
    "LoadError",
    "LoadOptions",
    "Loader",
    "UnknownFormat",
    "Where",
    "detect",
    "internal_error",
    "load",
]
