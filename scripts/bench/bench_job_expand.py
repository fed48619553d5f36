"""Benchmark a job timeline with every rank expanded to its events: window memory and frame times.

    python scripts/bench/bench_job_expand.py [--ranks 64] [--copies 6] [--out DIR] [--keep]
                                             [--gui-thread]

The job is generated as `bench_ranks.py` makes it (a real kineto trace per rank, `--copies K`
repeats it inside each rank: 6 copies ≈ 52 MB a rank). In a fresh child process (offscreen Qt)
the job is opened, its Timeline page shown at 1600×1000, every rank expanded (each rank's file
opened through the store on a worker, as a user's "Expand all ranks" does), and then:
- the process's RSS with every rank expanded (and its peak), the expand time, and the GUI
  thread's CPU while the ranks come in (in all, and its three longest passes of the event
  loop: each rank's arrival redraws every expanded rank's rows);
- frame times: the view moved and the paint the event loop then runs (what the screen gets),
  wall and GUI-thread CPU (other work shares the cores), median and worst, and the rects
  drawn on the GUI thread a frame: every rank in view (rows thinner than a pixel) at the
  whole job panning (by code); at 1/10, 1/100 and 1/1000 of the time, the zoom set by code
  where the ranks have slices, then moved by hand (as a drag emits it): dragging (a quarter
  of the view a frame, frame after frame), jumping (a new place a frame, frame after frame),
  and one jump at a time; zooming in by the wheel (a new zoom each frame: the last exact
  tiles stretched) and the zoom at rest; the whole job's time with a quarter and a
  twentieth of the rows in view, scrolled down by hand (1/40 of the view a frame); then,
  the hand gone, 60 rows of full height moved by code (a new place a frame), and rows
  dragged by hand (a quarter of the view a frame): 60 at 1/10 and 1/100 of the time, 30
  (rows tall enough for names) at 1/10.
- the window's start-up warm-up is run first, as the app runs it once its window is up
  (`qt.warmup.warm_imports`: the imports, the compiled layout steps loaded), so a frame's
  merges take the compiled way as they do in the app.
- "whole after": newer code draws a hand-moved view's new tiles on a worker; the time from
  the move (or from the last frame of a drag or of the jumps) until the frame that shows
  them all. `--gui-thread` draws them on the GUI thread, as older code did.
- a search typed at the whole job ("nccl", "Memcpy", "aten::", a key at a time, the event
  loop run after each): the longest the GUI thread was busy at once, its CPU in all, and
  the time until the highlighted picture is whole (newer code searches once the keys rest,
  on a worker).
Prints one table row per run, with the machine's load average (other work shares the cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CHILD = r"""
import json, os, resource, statistics, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import psutil
from pathlib import Path
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication
from perfview.core.analysis.torch.job import document
from perfview.jobs import open_job
from perfview.qt.views.job_view import JobView, PreparedJob

app = QApplication.instance() or QApplication([])
me = psutil.Process()
folder = Path(sys.argv[1])
try:  # as the window does once it is up: the imports, the compiled layout steps loaded
    from perfview.qt import warmup
    warmup.warm_imports()
    while not warmup.scanner_settled():
        time.sleep(0.05)
except ImportError:  # older code: nothing warmed
    pass
job = open_job([folder])
view = JobView(PreparedJob.of(document(job, folder)))
view.resize(1600, 1000)
view.show()
view.show_page("job-timeline")
app.processEvents()
timeline = view.widgets["job-timeline"]
opened_mb = me.memory_info().rss / 2**20
waiting = {r.rank for r in job.ranks}
def one_more(rank, *_):
    waiting.discard(rank)
timeline.expanded.connect(one_more)
timeline.expand_failed.connect(one_more)
t = time.perf_counter()
timeline.expand_all()
blocks = []  # the GUI thread's CPU each pass of the event loop while the ranks come in
while waiting:
    c = time.thread_time()
    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    blocks.append(time.thread_time() - c)
expand_s = time.perf_counter() - t
app.processEvents()
box = timeline.plot.getViewBox()
(x_lo, x_hi), (y_lo, y_hi) = box.viewRange()
rows = timeline._rows_total()
frames = {}
layer = getattr(timeline, "sub_pixel", None)
if layer is not None and sys.argv[2] == "gui-thread" and hasattr(layer, "hand_ms"):
    layer.hand_ms = 0  # every tile drawn on the GUI thread, as older code did
def rects_drawn():
    layer = getattr(timeline, "sub_pixel", None)
    n = layer.stats.get("rects", 0.0) if layer is not None else 0.0
    return n + sum(item.stats.get("visible", 0.0) for _t, item in timeline.tracks.values())
def until_whole(name, t):
    # newer code draws a hand-moved view's new tiles on a worker: the time from the move
    # until the frame that shows them all (older code: the frame itself)
    while getattr(layer, "drawing", False):
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    app.processEvents()
    wall = (time.perf_counter() - t) * 1e3
    frames.setdefault(name + ": whole after", []).append((wall, wall, 0.0))
def frame(name, xr, yr, hand=False, whole=False):
    # what the screen gets: the view moved, then the paint the event loop runs; `hand`:
    # moved as a drag or the wheel moves it
    for _t, item in timeline.tracks.values():
        item.stats = {}
    if layer is not None:
        layer.stats = {}
    if hand and layer is not None:
        box.sigRangeChangedManually.emit([True, False])
    t, cpu = time.perf_counter(), time.thread_time()
    box.setRange(xRange=xr, yRange=yr, padding=0)
    app.processEvents()
    wall, cpu = (time.perf_counter() - t) * 1e3, (time.thread_time() - cpu) * 1e3
    frames.setdefault(name, []).append((wall, cpu, rects_drawn()))
    if whole:
        until_whole(name, t)
span = x_hi - x_lo
every = (0, rows)
if layer is not None:  # a cache of tiles (newer code): start empty
    layer.invalidate()
frame("all ranks, whole job: first frame", (x_lo, x_hi), every)
for k in range(12):  # panning: 1/50 of the view a frame
    d = span * 0.02 * (k + 1)
    frame("all ranks, whole job, panning", (x_lo + d, x_hi + d), every)
# where the expanded ranks have slices (the job's steps and collectives reach further)
if layer is not None:
    ranks_lo, ranks_w = layer.boundingRect().left(), layer.boundingRect().width()
else:
    ranks_lo, ranks_w = x_lo, span
for zoom in (10, 100, 1000):
    w = span / zoom
    # the zoom set by code (drawn on the spot), and rested: the hand then moves at this zoom
    lo = ranks_lo + ranks_w / 2 - 1.5 * w - w / 4
    frame(f"all ranks, 1/{zoom} of the time, set by code", (lo, lo + w), every)
    time.sleep(max(getattr(layer, "settle_ms", 0), 0) / 1e3 + 0.05)
    name = f"all ranks, 1/{zoom} of the time, dragging"
    for k in range(12):  # a drag by hand: a quarter of the view a frame, frame after frame
        lo = ranks_lo + ranks_w / 2 - 1.5 * w + k * w / 4
        frame(name, (lo, lo + w), every, hand=True)
    until_whole(name + " (the last frame)", time.perf_counter())
    name = f"all ranks, 1/{zoom} of the time, jumping"
    for k in range(12):  # a jump by hand: a new place each frame, frame after frame
        lo = ranks_lo + (k / 12) * (ranks_w - w)
        frame(name, (lo, lo + w), every, hand=True)
    until_whole(name + " (the last frame)", time.perf_counter())
    for k in range(6):  # a jump to where no tile is kept, then nothing until the view is whole
        if layer is not None:
            layer.cache.clear()
        lo = ranks_lo + ((k + 0.3) / 6) * (ranks_w - w)  # places the jumps above left
        frame(f"all ranks, 1/{zoom} of the time, one jump", (lo, lo + w), every, hand=True,
              whole=True)
c = x_lo + span * 0.41
for k in range(12):  # zooming in at a point, wheel steps of 1.5x: each a new zoom
    w = span / 1.5 ** (k + 1)
    frame("all ranks, zooming in (1.5x a frame)", (c - w / 2, c + w / 2), every, hand=True)
if layer is not None and layer.settle_ms > 0:  # the zoom rests: its exact frame
    time.sleep(layer.settle_ms / 1e3 + 0.05)
    t, cpu = time.perf_counter(), time.thread_time()
    app.processEvents()
    app.processEvents()
    wall, cpu = (time.perf_counter() - t) * 1e3, (time.thread_time() - cpu) * 1e3
    frames["all ranks, the zoom at rest: its exact frame"] = [(wall, cpu, rects_drawn())]
    until_whole("all ranks, the zoom at rest", t)
for part in (4, 20):  # the whole job's time, part of the rows, scrolled down by hand
    h = rows / part
    name = f"all ranks, 1/{part} of the rows, scrolling by hand"
    frame(name + " (set by code)", (x_lo, x_hi), (0, h))
    for k in range(12):  # 1/40 of the rows in view a frame, down
        frame(name, (x_lo, x_hi), (h * k / 40, h + h * k / 40), hand=True)
    until_whole(name + " (the last frame)", time.perf_counter())
# a search typed at the whole job: older code searched every rank and redrew on the GUI thread
# at each key; newer code searches once the keys rest, on a worker, and draws on the layer's
searched = [False]
if hasattr(timeline, "searched"):
    timeline.searched.connect(lambda _n: searched.__setitem__(0, True))
def settle_search(blocks):
    searched[0] = not hasattr(timeline, "searched")
    while True:
        c = time.thread_time()
        if searched[0] and not getattr(layer, "drawing", False):
            app.processEvents()
            blocks.append(time.thread_time() - c)
            if layer.stats and not layer.stats.get("tiles_later", 0):
                return
            continue
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        blocks.append(time.thread_time() - c)
def typed(text):
    blocks = []
    t = time.perf_counter()
    for ch in text:
        c = time.thread_time()
        timeline.search.insert(ch)
        app.processEvents()
        blocks.append(time.thread_time() - c)
    settle_search(blocks)
    wall = (time.perf_counter() - t) * 1e3
    frames.setdefault(f"search typed, {text!r}: worst GUI-thread block", []).append(
        (max(blocks) * 1e3, max(blocks) * 1e3, 0.0))
    frames.setdefault(f"search typed, {text!r}: GUI-thread CPU in all", []).append(
        (sum(blocks) * 1e3, sum(blocks) * 1e3, 0.0))
    frames.setdefault(f"search typed, {text!r}: picture whole after", []).append(
        (wall, wall, 0.0))
    timeline.search.clear()
    settle_search([])
frame("all ranks, whole job, before a search", (x_lo, x_hi), every)
for text in ("nccl", "Memcpy", "aten::"):
    typed(text)
time.sleep(1.2)  # the hand has left the view: what follows is moved by code, drawn on the spot
for zoom in (10, 100, 1000):
    for k in range(12):
        lo = x_lo + (k / 12) * (span - span / zoom)
        top = (k / 12) * max(rows - 60, 0)
        frame(f"1/{zoom} of the time, 60 rows", (lo, lo + span / zoom), (top, top + 60))
# rows dragged by hand, a quarter of the view a frame: 60 rows (thinner than a name at
# 1600x1000: the layer draws them) and 30 (names: the ranks draw them)
for zoom, shown in ((10, 60), (100, 60), (10, 30)):
    w = span / zoom
    lo, top = x_lo + 0.45 * (span - w), 0.4 * max(rows - shown, 0)
    name = f"1/{zoom} of the time, {shown} rows, dragging by hand"
    for k in range(12):
        frame(name, (lo + k * w / 4, lo + w + k * w / 4), (top, top + shown), hand=True)
    until_whole(name + " (the last frame)", time.perf_counter())
slices = sum(t.slices for t, _ in timeline.tracks.values())
print(json.dumps({
    "ranks": len(job.ranks), "expanded": len(timeline.tracks), "slices": slices,
    "opened_mb": opened_mb, "rss_mb": me.memory_info().rss / 2**20,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "expand_s": expand_s,
    "expand_blocks_ms": sorted(b * 1e3 for b in blocks)[-3:],
    "expand_gui_s": sum(blocks),
    "frames": {
        k: [statistics.median(w for w, _c, _r in v), max(w for w, _c, _r in v),
            statistics.median(c for _w, c, _r in v), max(c for _w, c, _r in v),
            statistics.median(r for _w, _c, r in v)]
        for k, v in frames.items()
    },
}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the generated job")
    parser.add_argument(
        "--gui-thread", action="store_true",
        help="draw every tile on the GUI thread (as older code did), not a hand-moved "
        "view's on the worker",
    )  # fmt: skip
    args = parser.parse_args()
    from bench_ranks import TEMPLATE, make_job

    if not TEMPLATE.exists():
        print(f"template {TEMPLATE} is absent", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="perfview-bench-expand-"))
    job_dir = out / "job"
    if not job_dir.exists() or not any(job_dir.iterdir()):
        t = time.perf_counter()
        make_job(job_dir, TEMPLATE, args.ranks, args.copies, straggler=min(5, args.ranks - 1))
        print(f"generated in {time.perf_counter() - t:.0f} s")
    files = sorted(job_dir.iterdir())
    total_mb = sum(p.stat().st_size for p in files) / 1e6
    load = os.getloadavg()[0]
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(job_dir), "gui-thread" if args.gui_thread else "worker"],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
        return 1
    r = json.loads(run.stdout.strip().splitlines()[-1])
    print(
        f"job: {len(files)} ranks × {total_mb / len(files):.0f} MB = {total_mb:.0f} MB; "
        f"load average {load:.1f} → {os.getloadavg()[0]:.1f}"
    )
    print(
        f"expanded {r['expanded']} of {r['ranks']} ranks, {r['slices']:,} slices, "
        f"in {r['expand_s']:.1f} s; RSS {r['opened_mb']:.0f} MB opened → {r['rss_mb']:.0f} MB "
        f"all expanded (peak {r['peak_mb']:.0f} MB)"
    )
    if "expand_blocks_ms" in r:
        worst = " / ".join(f"{b:.0f}" for b in reversed(r["expand_blocks_ms"]))
        print(
            f"while expanding: GUI-thread CPU {r['expand_gui_s']:.1f} s, its longest passes "
            f"of the event loop {worst} ms"
        )
    print(
        "| view | frame median / worst ms | GUI-thread CPU median / worst ms | rects a frame |"
        "\n|---|---:|---:|---:|"
    )
    for name, (median, worst, cpu, cpu_worst, rects) in r["frames"].items():
        print(
            f"| {name} | {median:.1f} / {worst:.1f} | {cpu:.1f} / {cpu_worst:.1f} | {rects:,.0f} |"
        )
    if not args.keep and args.out is None:
        for p in files:
            p.unlink()
        job_dir.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
