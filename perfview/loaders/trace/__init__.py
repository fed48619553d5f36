"""The Chrome trace / torch.profiler loader, as a pipeline of stage modules (see `loader`).

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, sniff, load, …),
registered in `perfview.loaders.LOADERS`. The compiled scanner (`scan`, numba) is imported
only when a load needs it.
"""

from __future__ import annotations

from perfview.loaders.trace.loader import (
    DESCRIPTION,
    EXTENSIONS,
    NAME,
    load,
    load_scanned,
    refuse,
    sniff,
)

__all__ = ["DESCRIPTION", "EXTENSIONS", "NAME", "load", "load_scanned", "refuse", "sniff"]
