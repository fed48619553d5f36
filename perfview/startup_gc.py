"""Python's cyclic garbage collector held back while the window starts (stdlib only).

Starting the window imports Qt, numpy, pandas and pyqtgraph and builds the first page: about
a million long-lived objects, and almost no garbage. With the default thresholds the
collector ran ~250 young and 20 middle collections and one or two full ones (each walking
every object) before the first page was drawn: ~0.3 s of the start's ~1.3 s of CPU here.
`hold` raises the thresholds so that start-up runs almost without collections; `release`,
called once the window is built and its files' loads have started (`qt.app`; the start-up
warm-up calls it too), moves what exists into the permanent generation (`gc.freeze`, as the
CLI does) and puts the thresholds back, so a long session collects as usual and no later
full collection walks the start-up's objects again. No `gc.collect` first: the imports leave
~1,000 garbage objects, and a full collection of the unfrozen heap then took 0.15-0.6 s with
the GIL held, a freeze of the window just after it appeared. Thresholds, not `gc.disable`: a
load pauses the collector itself (`qt.let_go.collector_paused`) and must find it enabled to
enable it again.
"""

from __future__ import annotations

import gc

# Young-generation allocations between collections while held (the default is 700).
HELD = (400_000, 100, 100)
_saved: tuple[int, int, int] | None = None


def hold() -> None:
    """Collect rarely until `release` (once; later calls do nothing)."""
    global _saved
    if _saved is None:
        _saved = gc.get_threshold()
        gc.set_threshold(*HELD)


def release() -> None:
    """Freeze what start-up made and restore the thresholds `hold` found (no-op if not held)."""
    global _saved
    if _saved is not None:
        gc.freeze()
        gc.set_threshold(*_saved)
        _saved = None


def held() -> bool:
    return _saved is not None


__all__ = ["HELD", "held", "hold", "release"]
