#!/usr/bin/env python3
"""The Timeline's frames with another checkout's strips against this one's, in one process.

    python scripts/probes/strips_ab.py TRACE --base CHECKOUT [--rounds 4] [--frames 30]

Opens TRACE in the real window offscreen at 1600×1000 (a fresh cache folder; the window's
start-up warm-up run first, as the app runs it: numba loaded), shows the Timeline, then
measures four zoom levels (the whole trace, 1/10, 1/100, 1/1000, centred), each as
`bench_timeline_frames.py` does (--frames frames panned by a tenth of the view), --rounds
times each way in turn: the rects' strips drawn by CHECKOUT's `row_strips.draw_row_strips`
(with its own `core/layout/raster.py`, loaded from its files) and by this checkout's.
Prints each level's GUI-thread CPU and the rect item's own time a frame, medians over the
rounds. For the issue notes, not for CI.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "bench"))  # bench_timeline_frames, bench_gui_probe
sys.path.insert(0, str(ROOT / "scripts" / "fixtures"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def base_strips(checkout: Path) -> Any:
    """CHECKOUT's `draw_row_strips`, reading CHECKOUT's raster module, not this one's."""
    raster = _module("base_raster", checkout / "perfview/core/layout/raster.py")
    strips = _module("base_row_strips", checkout / "perfview/qt/items/row_strips.py")
    strips.raster = raster  # type: ignore[attr-defined]
    return strips.draw_row_strips  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--base", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--frames", type=int, default=30)
    args = parser.parse_args()
    os.environ["PERFVIEW_CACHE_DIR"] = tempfile.mkdtemp(prefix="perfview-strips-ab-")

    import bench_gui_probe as probe  # type: ignore[import-not-found]
    import bench_timeline_frames as frames  # type: ignore[import-not-found]
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from perfview.qt import warmup
    from perfview.qt.items import rect_batch
    from perfview.qt.main_window import MainWindow

    warmup.warm_imports()
    while not warmup.scanner_settled():
        time.sleep(0.05)
    ways = {"base": base_strips(args.base), "this": rect_batch.draw_row_strips}
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    app.processEvents()
    probe.open_and_wait(window, args.trace, None, "timeline")
    view: Any = window.tabs.currentWidget().built_view("timeline")
    lo, hi = view.data.span
    widths = [(hi - lo) / part for part in (1, 10, 100, 1000)]
    cpu: dict[tuple[str, float], list[float]] = {(w, x): [] for w in ways for x in widths}
    item: dict[tuple[str, float], list[float]] = {(w, x): [] for w in ways for x in widths}
    for _round in range(args.rounds):
        for way, draw in ways.items():
            rect_batch.draw_row_strips = draw  # type: ignore[attr-defined]
            for width in widths:
                fig = frames.measure_level(view, (lo + hi) / 2, width, args.frames, 0.1)
                cpu[(way, width)].append(fig["cpu"])
                item[(way, width)].append(fig["item"])
    rect_batch.draw_row_strips = ways["this"]  # type: ignore[attr-defined]
    loaded = "numba" in sys.modules
    print(f"{args.trace}: load average {os.getloadavg()[0]:.2f}, numba loaded: {loaded}")
    print("| view width | GUI CPU, base | GUI CPU, this | rect item, base | rect item, this |")
    print("|---|---:|---:|---:|---:|")
    for width in widths:
        cells = [statistics.median(d[(way, width)]) for d in (cpu, item) for way in ways]
        print(f"| {frames._width_text(width)} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    probe._close_every_tab(window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
