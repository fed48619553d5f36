"""Loading files: the format registry (`registry`), the loaders, and the load service.

`load(path, progress=…, options=LoadOptions(…))` is the one entry point; see `service` for what
the options decide (where the parse runs, the cache).

The names are imported on first use (PEP 562): the trace scanner lives in this package, and
`perfview summary BIG.json` starts it on a thread before pandas, which the registry and the
service import, is loaded (`cli._scan_ahead`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfview.core.model.errors import LoadError, UnknownFormat
    from perfview.loaders.base import Where
    from perfview.loaders.registry import LOADERS, Loader, detect, internal_error
    from perfview.loaders.service import FRESH, LoadOptions, load
    from perfview.store.write_gates import WriteGate

_HOMES = {
    "LoadError": "perfview.core.model.errors",
    "UnknownFormat": "perfview.core.model.errors",
    "LOADERS": "perfview.loaders.registry",
    "Loader": "perfview.loaders.registry",
    "detect": "perfview.loaders.registry",
    "internal_error": "perfview.loaders.registry",
    "FRESH": "perfview.loaders.service",
    "LoadOptions": "perfview.loaders.service",
    "Where": "perfview.loaders.base",
    "load": "perfview.loaders.service",
    "WriteGate": "perfview.store.write_gates",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "FRESH",
    "LOADERS",
    "LoadError",
    "LoadOptions",
    "Loader",
    "UnknownFormat",
    "Where",
    "WriteGate",
    "detect",
    "internal_error",
    "load",
]
