"""The memray capture loader (`memray run -o FILE`), as a package shaped like `loaders.trace`.

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, CAPABILITIES,
sniff, refuse, load), registered in `perfview.loaders.LOADERS`:

    header  → the one reader of memray's header (sniffing, choosing a reader, the stream)
    loader  → which reader: perfview's own (`stream`) or the installed memray's
    stream/ → perfview's own reader: LZ4 chunks → compiled replay of every record → tables

The loader's names are imported on first use (PEP 562), like the trace package's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfview.loaders import lazy

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

__getattr__ = lazy.exports(__name__, "perfview.loaders.memray.loader", __all__)
