"""The Chrome trace / torch.profiler loader, as a pipeline of stage modules (see `loader`).

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, sniff, load, …),
registered in `perfview.loaders.LOADERS`. The compiled scanner (`scan`, numba) is imported
only when a load needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfview.loaders.trace.loader import (
        CAPABILITIES,
        DESCRIPTION,
        EXTENSIONS,
        NAME,
        SCANNER,
        load,
        load_scanned,
        refuse,
        sniff,
    )


def __getattr__(name: str) -> Any:
    """The loader's names from `loader`, imported on first use (PEP 562): the scanner's
    modules (`scan`) are importable without the rest of the loader (pandas)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("perfview.loaders.trace.loader"), name)
    globals()[name] = value
    return value


__all__ = [
    "CAPABILITIES",
    "DESCRIPTION",
    "EXTENSIONS",
    "NAME",
    "SCANNER",
    "load",
    "load_scanned",
    "refuse",
    "sniff",
]
