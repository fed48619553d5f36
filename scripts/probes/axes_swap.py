#!/usr/bin/env python3
"""pyqtgraph's own axis and bar methods swapped into perfview's `QuickAxis` and `Bars`, and
back: the A/B both `job_axes_ab.py` and `bench_timeline_frames.py --axes-ab` run in one
process (one process, so the two conditions share the machine's load and the data's pages).
A module those scripts import; run on its own it only answers --help.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

SWAPPED = ("generateDrawSpecs", "drawPicture", "_updateLabel", "tickValues")
CONDITIONS = ("pyqtgraph", "quick")
_OURS: dict[str, Any] = {}  # QuickAxis's own methods and Bars' bounds, kept at the first swap


def use(condition: str, plots: Iterable[Any], names: Iterable[str] = SWAPPED) -> None:
    """Draw every `QuickAxis` and `Bars` with perfview's methods ("quick") or pyqtgraph's
    ("pyqtgraph"); only the `QuickAxis` methods in `names` are swapped (the bars' bounds
    with the full set only); the axes of `plots` drop their cached pictures."""
    import pyqtgraph as pg

    from perfview.qt.items.bars import Bars
    from perfview.qt.items.quick_axis import QuickAxis

    if not _OURS:
        _OURS.update({name: QuickAxis.__dict__[name] for name in SWAPPED})
        _OURS["boundingRect"] = Bars.__dict__["boundingRect"]
    quick = condition == "quick"
    names = set(names)
    for name in SWAPPED:
        quick_here = quick or name not in names
        setattr(QuickAxis, name, _OURS[name] if quick_here else getattr(pg.AxisItem, name))
    whole = names >= set(SWAPPED)
    bounds = _OURS["boundingRect"] if quick or not whole else pg.BarGraphItem.boundingRect
    Bars.boundingRect = bounds  # type: ignore[method-assign]
    for plot in plots:
        for side in ("left", "bottom", "top", "right"):
            plot.getAxis(side).picture = None


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()
