"""The memray capture loader (`memray run -o FILE`), as a package shaped like `loaders.trace`.

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, CAPABILITIES,
sniff, refuse, load), registered in `perfview.loaders.LOADERS`:

    header  → the one reader of memray's header (sniffing, choosing a reader, the stream)
    loader  → which reader: perfview's own (`stream`) or the installed memray's
    stream/ → perfview's own reader: LZ4 chunks → compiled replay of every record → tables

The loader's names are imported on first use (PEP 562), like the trace package's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfview.loaders.memray.loader import (
        CAPABILITIES,
        DESCRIPTION,
        EXTENSIONS,
        NAME,
        REPLAY,
        load,
        read_capture,
        refuse,
        sniff,
    )


def __getattr__(name: str) -> Any:
    """The loader's names from `loader`, imported on first use (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("perfview.loaders.memray.loader"), name)
    globals()[name] = value
    return value


__all__ = [
    "CAPABILITIES",
    "DESCRIPTION",
    "EXTENSIONS",
    "NAME",
    "REPLAY",
    "load",
    "read_capture",
    "refuse",
    "sniff",
]
