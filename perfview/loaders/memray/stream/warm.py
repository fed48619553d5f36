"""Compile memray's record replay ahead: numba compiles it on its first use (~12 s of CPU,
holding the GIL, once after an install), which a window must not do on its own threads.

Two tiny real captures ship with perfview (`resources/compile`, 19 KB: memray 1.6's format 9
and memray 1.20's format 13, recorded by scripts/fixtures/make_memray_fixtures.py), one per encoding
(`decode.ENCODINGS`): reading both compiles every kernel and runs each encoding's records
through it, or loads it from numba's disk cache when it is there.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

WARM_CAPTURES = ("memray_v9.bin", "memray_v13.bin")


def kernels() -> list[Any]:
    """The replay's compiled functions (numba dispatchers) in every module of the reader,
    less those numba inlines into their callers (they have no code of their own on disk)."""
    from numba.core.registry import CPUDispatcher

    from perfview.loaders.memray.stream import decode, kernel, tables

    return [
        obj
        for module in (decode, kernel, tables)
        for obj in vars(module).values()
        if isinstance(obj, CPUDispatcher)
        and obj.targetoptions.get("inline") != "always"  # compiled into its callers only
    ]


def compiled() -> bool:
    """True when every kernel's compiled code is on disk (numba's cache)."""
    try:
        return all(os.path.exists(k._cache._cache_file._index_path) for k in kernels())
    except Exception:  # numba's cache layout is not an API: assume it is there
        return True


def warm() -> None:
    """Read the two tiny captures, then grow each hash table once (tiny captures never fill
    one): compiles (or loads) every kernel."""
    from perfview.loaders.memray.stream import _header, read_stream
    from perfview.loaders.memray.stream import kernel as K
    from perfview.loaders.memray.stream.replay import State, grow
    from perfview.loaders.memray.stream.source import chunks

    folder = resources.files("perfview.resources") / "compile"
    for name in WARM_CAPTURES:
        with resources.as_file(folder / name) as path:
            read_stream(Path(path))
            blocks = chunks(Path(path))
            try:
                state = State(_header(blocks)[0])
            finally:
                blocks.close()
            for table in (K.G_ADDR, K.G_HIST, K.G_NODES):
                grow(state, table)


__all__ = ["WARM_CAPTURES", "compiled", "kernels", "warm"]
