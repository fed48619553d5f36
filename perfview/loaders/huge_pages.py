"""numpy's transparent-huge-page advice: off for the loaders, back on while a big trace loads.

numpy asks the kernel for huge pages (`madvise(MADV_HUGEPAGE)`) on every array of 4 MB or
more, by default on Linux. Where THP is in "madvise" mode with defragmentation, as on the
benchmark machine, each fresh huge page can stall on compaction: that made a 1 GB trace's
load 10-15 % slower and twice as noisy, and was half the walk of a 1 GB CUDA snapshot, all
of it system time. So the loaders turn the advice off when imported (`no_advice`).

A trace of several GB is the other way round: its build touches ~2.4x the file in fresh
pages, and a quarter of its CPU went to page faults (`docs/performance.md`, sixth step).
With the advice on, a 10 GB replica's `perfview summary` took 2-20 s less in four pairs of
runs and peaked 250-320 MB lower; at 5 GB the pairs were even, at 1 GB the advice cost
0.1-1 s and 60-90 MB. So `for_big_file` turns it on for a load of a file from `BIG` bytes
(the pairs are in `docs/performance.md`, seventh step).

NUMPY_MADVISE_HUGEPAGE set by the user wins over both: nothing here changes it then.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

BIG = 5 * 10**9  # a file from this size loads with the advice on (5 GB: even; 10 GB: faster)

_lock = threading.Lock()
_depth = 0


def _setter() -> Callable[[bool], Any] | None:
    """numpy's switch of the advice (private, present since numpy 1.20), or None."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:  # the user's choice stands
        return None
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    setter = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    return setter if callable(setter) else None


def _advise(on: bool) -> None:
    setter = _setter()
    if setter is not None:
        with contextlib.suppress(Exception):
            setter(on)


def no_advice() -> None:
    """Stop numpy asking for huge pages (see the module doc); called by the loaders' imports."""
    _advise(False)


@contextlib.contextmanager
def for_big_file(nbytes: int) -> Iterator[None]:
    """Within the block numpy asks for huge pages, when the file is `BIG` or larger. The
    switch is the process's: nested and concurrent blocks are counted, and the advice goes
    off again when the last one ends."""
    global _depth
    if nbytes < BIG:
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            _advise(True)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _advise(False)


__all__ = ["BIG", "for_big_file", "no_advice"]
