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

from typing import TYPE_CHECKING

from perfview.loaders import lazy

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

__getattr__ = lazy.exports(__name__, "perfview.loaders.cuda_snapshot.loader", __all__)
