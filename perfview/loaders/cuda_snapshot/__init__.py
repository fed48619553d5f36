"""The PyTorch CUDA memory snapshot loader, as a package shaped like `loaders.trace`.

This package is the format's loader module (NAME, DESCRIPTION, EXTENSIONS, CAPABILITIES,
sniff, refuse, load), registered in `perfview.loaders.LOADERS`. Two paths give the same
`CudaSnapshot` (the tests hold them equal on every sample):

    loader      → which path, by size; the Bundle (tree, timeline bands, warnings)
    pickle_data → the restricted unpickler (every global refused) → columns
    pickle_walk/ → the compiled walker of the pickle's opcodes (no Python object per pickled
                   object) → walk (segments, blocks, trace) + stacks → fast

The loader's names are imported on first use (PEP 562), like the trace package's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfview.loaders.cuda_snapshot.loader import (
        CAPABILITIES,
        DESCRIPTION,
        EXTENSIONS,
        FAST_MIN_BYTES,
        NAME,
        REFUSED,
        WALKER,
        counts,
        load,
        refuse,
        restricted_loads,
        snapshot_from_data,
        sniff,
    )


def __getattr__(name: str) -> Any:
    """The loader's names from `loader`, imported on first use (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("perfview.loaders.cuda_snapshot.loader"), name)
    globals()[name] = value
    return value


__all__ = [
    "CAPABILITIES",
    "DESCRIPTION",
    "EXTENSIONS",
    "FAST_MIN_BYTES",
    "NAME",
    "REFUSED",
    "WALKER",
    "counts",
    "load",
    "refuse",
    "restricted_loads",
    "snapshot_from_data",
    "sniff",
]
