"""The Chrome trace / torch.profiler loader, as a pipeline of stage modules (see `loader`).

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, sniff, load, …),
registered in `perfview.loaders.LOADERS`. The compiled scanner (`scan`, numba) is imported
only when a load needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfview.loaders import lazy

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

__getattr__ = lazy.exports(__name__, "perfview.loaders.trace.loader", __all__)
