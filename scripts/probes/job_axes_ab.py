#!/usr/bin/env python3
"""What a job's axes and bars cost a frame: perfview's `QuickAxis` and `Bars` against
pyqtgraph's own methods, in one process.

    python scripts/probes/job_axes_ab.py JOB_FOLDER [--zoom 10] [--rows-part 1] [--rounds 6]
        [--swap METHOD ...]

Opens JOB_FOLDER (a folder of per-rank traces, such as `bench_job_expand.py --keep` leaves)
in the job view at 1600×1000 offscreen, expands every rank and zooms to 1/--zoom of the
time and 1/--rows-part of the rows. Then:
- one axis's draw specs made 200 times in a row, each side, with `QuickAxis.generateDrawSpecs`
  and with `pg.AxisItem.generateDrawSpecs` (ms, median);
- frames dragged by hand (12 positions a quarter view apart, `sigRangeChangedManually`
  emitted as a drag does), the two conditions alternated --rounds times: `QuickAxis` and
  `Bars` as they are, then with pyqtgraph's methods swapped into them (draw
  specs, drawing, tick values, the title's update, the bars' bounds; --swap: only the
  `QuickAxis` methods named); 12 frames to settle, 96 measured; the GUI thread's CPU a
  frame, median and 90th percentile.
For the issue notes, not for CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # axes_swap
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", type=Path)
    parser.add_argument("--zoom", type=float, default=10.0)
    parser.add_argument("--rows-part", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--swap",
        nargs="+",
        default=None,
        help="swap only these QuickAxis methods for pyqtgraph's (default: all, and the bars')",
    )
    args = parser.parse_args()

    import pyqtgraph as pg
    from axes_swap import SWAPPED, use  # type: ignore[import-not-found]
    from PySide6.QtCore import QEventLoop
    from PySide6.QtGui import QPainter, QPicture
    from PySide6.QtWidgets import QApplication

    from perfview.core.analysis.torch.job import document
    from perfview.jobs import open_job
    from perfview.qt.items.quick_axis import QuickAxis
    from perfview.qt.views.job_view import JobView, PreparedJob

    app = QApplication.instance() or QApplication([])
    job = open_job([args.job])
    view = JobView(PreparedJob.of(document(job, args.job)))
    view.resize(1600, 1000)
    view.show()
    view.show_page("job-timeline")
    app.processEvents()
    timeline: Any = view.widgets["job-timeline"]
    waiting = {r.rank for r in job.ranks}
    timeline.expanded.connect(lambda rank, *_: waiting.discard(rank))
    timeline.expand_failed.connect(lambda rank, *_: waiting.discard(rank))
    timeline.expand_all()
    while waiting:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    app.processEvents()
    box, layer = timeline.plot.getViewBox(), timeline.sub_pixel
    (x0, x1), _ = box.viewRange()
    middle = layer.boundingRect().center().x()
    width, height = (x1 - x0) / args.zoom, timeline._rows_total() / args.rows_part

    def drags(count: int) -> list[float]:
        cpu = []
        for k in range(count):
            lo = middle - 1.5 * width + (k % 12) * width / 4
            box.sigRangeChangedManually.emit([True, False])
            start = time.thread_time()
            box.setRange(xRange=(lo, lo + width), yRange=(0, height), padding=0)
            app.processEvents()
            cpu.append((time.thread_time() - start) * 1e3)
            if k % 12 == 11:  # the layer's worker done, as a hand's pause would let it
                while getattr(layer, "drawing", False):
                    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
                app.processEvents()
        return cpu

    drags(48)
    print(
        f"{args.job}: {len(job.ranks)} ranks, 1/{args.zoom:g} of the time, "
        f"1/{args.rows_part:g} of the rows; load average {os.getloadavg()[0]:.1f}"
    )
    print("| axis | pyqtgraph ms | QuickAxis ms |\n|---|---:|---:|")
    for side in ("bottom", "left", "top"):
        axis = timeline.plot.getAxis(side)
        medians = []
        for make in (pg.AxisItem.generateDrawSpecs, QuickAxis.generateDrawSpecs):
            times = []
            for _ in range(200):
                picture = QPicture()
                painter = QPainter(picture)
                start = time.thread_time()
                make(axis, painter)
                times.append((time.thread_time() - start) * 1e3)
                painter.end()
            medians.append(statistics.median(times))
        print(f"| {side} | {medians[0]:.2f} | {medians[1]:.2f} |")

    frames: dict[str, list[float]] = {"pyqtgraph": [], "quick": []}
    for _round in range(args.rounds):
        for condition, cpu in frames.items():
            use(condition, [timeline.plot], args.swap or SWAPPED)
            drags(12)
            cpu += drags(96)
    use("quick", [timeline.plot])
    print("| frames | GUI CPU median ms | 90th percentile ms |\n|---|---:|---:|")
    for condition, cpu in frames.items():
        cpu.sort()
        print(f"| {condition} | {statistics.median(cpu):.2f} | {cpu[int(len(cpu) * 0.9)]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
