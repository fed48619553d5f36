#!/usr/bin/env python3
"""The single-trace Timeline on a big trace, in the real window: frames at every zoom while panning.

    python3 scripts/bench/bench_timeline_frames.py FILE [--size 1600x1000] [--frames 30]
        [--pan 0.1] [--kernel NAME] [--no-reopen] [--tasks] [--profile OUT.prof]
        [--cache-dir DIR] [--zooms N] [--axes-ab ROUNDS]

Opens the real main window offscreen at --size, opens FILE through the real load task (the
pieces of `bench_gui_probe.py`: a fresh cache folder, the 10 ms GUI-thread probe, the
Timeline clicked once the first page is drawn) and reports Open → Timeline drawn, the
longest GUI gap meanwhile and the window's RSS (now, and the kernel's peak, VmHWM). It then
waits for the window's background work (the critical-path track, the Overview's findings,
the cache writes) and reports how long it took and the RSS after it. Then, on the Timeline
page, it zooms from the whole trace down to one GPU kernel (the one
`screenshot_timeline_zoom.py` pictures: the longest kernel of the middle ProfilerStep, or
the longest named --kernel): each level 10× narrower than the one before down to 50 µs,
centred on the kernel, and one level twice the kernel's duration (the kernel fills half
the width), its track scrolled into view. At each level:
the first frame (it may build a level of detail), then --frames frames each panned by --pan
of the view's width (right for half of them, then back), each a synchronous repaint of the
plot (`bench_render.py`'s frame): median and worst wall ms, the GUI thread's median and
worst CPU ms (a busy machine stretches the wall beyond it), the rect item's own ms and the
rects drawn. --cache-dir keeps the cache folder (a second run reopens from it), --zooms N
measures the first N zoom levels only. --axes-ab ROUNDS then measures every level again
ROUNDS times each way, in turn: the axes drawn by pyqtgraph's methods, then by perfview's
`QuickAxis` (`scripts/probes/axes_swap.py`), and prints each level's GUI CPU and rect item
medians over the rounds for both: an A/B in one process, on the same pages.
Then, unless --no-reopen, FILE is opened again from the caches the first open wrote
(reopen → Timeline drawn). --tasks samples the RSS every 50 ms and prints each background
task's run with the RSS it ran up; --profile writes a cProfile of the frames. Targets
(issue 41): every frame ≤ 16 ms, no GUI gap over 100 ms. Not part of CI.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_gui_probe
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))  # the kernel's pick
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "probes"))  # axes_swap
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import bench_gui_probe as probe
import numpy as np
import psutil
from screenshot_timeline_zoom import pick_kernel  # type: ignore[import-not-found]

# the longest wait for the window's background work (a 10 GB trace's: minutes)
WAIT_MS = 900_000
DEEPEST_NS = 50_000.0  # the narrowest view measured besides the kernel's own: 50 µs


def _status_mb(key: str) -> float:
    """One figure of /proc/self/status (kB), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024 / 1e6  # kB (KiB) → MB
    return float("nan")


def vm_hwm_mb() -> float:
    """The kernel's peak resident set of this process (VmHWM), in MB."""
    return _status_mb("VmHWM")


def rss_split() -> str:
    """The resident set split: anonymous pages (the heap, anonymous maps: only swap frees
    them) and file pages (mapped cache entries and args: clean ones the kernel may drop)."""
    return f"anon {_status_mb('RssAnon'):,.0f} MB + file {_status_mb('RssFile'):,.0f} MB"


class TaskMemory:
    """With --tasks: the window's RSS every 50 ms and each `Task` run (name, start, end), so
    that the RSS a background piece of work adds is seen and named."""

    def __init__(self) -> None:
        from perfview.qt.tasks import Task

        self.t0 = time.perf_counter()
        self.rss: list[tuple[float, float]] = []
        self.runs: list[tuple[str, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="bench-rss", daemon=True)
        self._thread.start()
        call = Task._call
        runs, t0 = self.runs, self.t0

        def timed(task: Any) -> None:
            start = time.perf_counter() - t0
            try:
                call(task)
            finally:
                runs.append((task.name or "?", start, time.perf_counter() - t0))

        Task._call = timed  # type: ignore[method-assign,assignment]

    def _sample(self) -> None:
        proc = psutil.Process()
        while not self._stop.wait(0.05):
            self.rss.append((time.perf_counter() - self.t0, proc.memory_info().rss / 1e6))

    def report(self) -> None:
        """Each task: when it ran, the RSS when it started and the most during it."""
        self._stop.set()
        self._thread.join()
        print("tasks (s since the window was made; RSS MB at start → most while it ran):")
        for name, start, end in sorted(self.runs, key=lambda r: r[1]):
            inside = [mb for at, mb in self.rss if start <= at <= end]
            before = [mb for at, mb in self.rss if at <= start][-1:] or inside[:1] or [0.0]
            top = max(inside, default=before[0])
            print(f"  {start:7.2f}-{end:7.2f} s {before[0]:7,.0f} → {top:7,.0f}  {name}")
        if self.rss:
            at, mb = max(self.rss, key=lambda r: r[1])
            running = [n for n, a, b in self.runs if a <= at <= b]
            print(f"  peak {mb:,.0f} MB at {at:.2f} s, while running: {running}")


def _nbytes(value: Any) -> int:
    """Bytes of the numpy arrays and pandas frames in `value` (followed through tuples,
    lists, dicts and dataclass-like objects one level down), each array counted once."""
    import pandas as pd

    seen: set[int] = set()

    def walk(v: Any, depth: int) -> int:
        if id(v) in seen:
            return 0
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            base = v.base if isinstance(v.base, np.ndarray) else None
            if base is not None and id(base) in seen:
                return 0
            # a broadcast (counts of one: `flame.ones`) holds one value along a 0 stride
            kept = [n for n, step in zip(v.shape, v.strides, strict=True) if step != 0]
            return int(np.prod(kept, dtype=np.int64)) * v.itemsize
        if isinstance(v, pd.DataFrame):
            return int(v.memory_usage(index=True, deep=False).sum())
        if isinstance(v, pd.Series | pd.Categorical):
            return int(v.nbytes)
        if depth > 3:
            return 0
        if isinstance(v, list | tuple):
            return sum(walk(x, depth + 1) for x in v)
        if isinstance(v, dict):
            return sum(walk(x, depth + 1) for x in v.values())
        if hasattr(v, "__dict__"):
            return sum(walk(x, depth + 1) for x in vars(v).values())
        return 0

    return walk(value, 0)


def holders(view: Any) -> None:
    """What holds the window's memory for this Timeline: the model's tables, the layout's
    per-event arrays, the level-of-detail chain's rects (level 0: one per drawn slice)."""
    timeline, data = view.timeline, view.data

    def _shared(array: np.ndarray, column: str) -> bool:
        """Whether the layout's array is the events table's column (counted there)."""
        return bool(np.shares_memory(array, timeline.events[column].to_numpy()))

    n = max(len(timeline.events), 1)
    levels = data.index.state()[1]
    names = timeline.events["name"]
    codes = names.cat.codes.to_numpy() if hasattr(names, "cat") else None
    own_codes = [] if codes is not None and np.shares_memory(data.codes, codes) else [data.codes]
    where = "a read-only file map" if _file_mapped(levels[0][0].x0) else "the heap"
    parts = {
        "model: events table": _nbytes(timeline.events),
        "model: flows, counters, instants, memory, lanes": sum(
            _nbytes(getattr(timeline, k))
            for k in ("flows", "counters", "instants", "memory", "lanes")
        ),
        "layout: per-event (rows; name codes, ts and dur when not the table's)": _nbytes(
            [data.event_row, *own_codes]
            + [a for a, col in ((data.ts, "ts"), (data.dur, "dur")) if not _shared(a, col)]
        ),
        f"layout: level 0 rects (one per drawn slice) + search arrays, in {where}": _nbytes(
            levels[:1]
        ),
        f"layout: levels 1-{len(levels) - 1} (merged), in {where}": _nbytes(levels[1:]),
        "layout: curves, instants": _nbytes([data.curves, data.curve_samples, data.instants]),
    }
    print(f"what holds it ({n:,} events, {len(levels[0][0]):,} drawn slices):")
    for name, size in parts.items():
        print(f"  {size / 1e6:9,.0f} MB  {size / n:6.1f} B/event  {name}")
    total = sum(parts.values())
    print(f"  {total / 1e6:9,.0f} MB  {total / n:6.1f} B/event  all of the above")


def _file_mapped(array: np.ndarray) -> bool:
    """Whether `array` lies in a read-only file map (a layout kept in a file or read back
    from the cache): resident only where read, RssFile, not RssAnon."""
    import mmap

    base: Any = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return isinstance(base, mmap.mmap)


def zoom_levels(span: float, kernel_dur: float) -> list[float]:
    """View widths in ns: the whole span, then each 10× narrower down to 50 µs, and twice the
    kernel's duration (where it fills half the view) among them."""
    kernel = max(2.0 * kernel_dur, 2_000.0)
    widths = [span]
    while widths[-1] / 10 >= DEEPEST_NS:
        widths.append(widths[-1] / 10)
    widths = [w for w in widths if not kernel / 2 < w < kernel * 2]  # none too near the kernel's
    return sorted([*widths, kernel], reverse=True)


def measure_level(
    view: Any, centre: float, width: float, frames: int, pan: float
) -> dict[str, float]:
    """First frame at this zoom, then `frames` panned frames: ms figures."""
    vb = view.viewbox
    repaint = view.plot.viewport().repaint
    vb.setXRange(centre - width / 2, centre + width / 2, padding=0)
    t, c = time.perf_counter(), time.thread_time()
    repaint()
    first = (time.perf_counter() - t) * 1e3
    first_cpu = (time.thread_time() - c) * 1e3
    whole, cpu, item, rects = [], [], [], []
    for i in range(frames):
        vb.pan_x(pan if i < frames // 2 else -pan)
        t, c = time.perf_counter(), time.thread_time()
        repaint()
        whole.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.thread_time() - c) * 1e3)
        item.append(view.batch.stats.get("ms", float("nan")))
        rects.append(view.batch.stats.get("visible", 0.0))
    return {
        "first": first,
        "first_cpu": first_cpu,
        "median": statistics.median(whole),
        "worst": max(whole),
        "cpu": statistics.median(cpu),
        "worst_cpu": max(cpu),
        "item": statistics.median(item),
        "rects": statistics.median(rects),
    }


def _width_text(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:,.3g} {unit}"
    return f"{ns:,.0f} ns"


def frames_table(view: Any, args: argparse.Namespace) -> list[dict[str, float]]:
    """Every zoom level's figures, printed as a table."""
    row = pick_kernel(view.timeline, np.asarray(view.event_row) >= 0, args.kernel)
    lo, hi = view.data.span
    if row < 0:
        print("no GPU kernel found: centring on the trace's middle")
        centre, dur = (lo + hi) / 2, (hi - lo) / 1e5
    else:
        ts, dur = float(view.data.ts[row]), float(max(view.data.dur[row], 1))
        centre = ts + dur / 2
        name = view.timeline.events["name"].iat[row]
        print(f"kernel: row {row}, {name!r}, {_width_text(dur)}")
        view.fit_event(row)  # scrolls its track into view (then each level sets x)
    print(
        f"{'view width':>12} {'of trace':>10} {'first (CPU)':>15} {'median':>8} {'worst':>8}"
        f" {'CPU':>8} {'worst CPU':>8} {'rect item':>10} {'rects':>8}"
    )
    out = []
    pauses: list[float] = []  # the garbage collector's runs meanwhile, ms (a worst frame's cause?)
    began: list[float] = []

    def timed_gc(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            pauses.append((time.perf_counter() - began.pop()) * 1e3)

    gc.callbacks.append(timed_gc)
    widths = zoom_levels(hi - lo, dur)
    for width in widths[: args.zooms or len(widths)]:
        fig = measure_level(view, centre, width, args.frames, args.pan)
        fig["width_ns"] = width
        out.append(fig)
        print(
            f"{_width_text(width):>12} {width / (hi - lo):>10.2g}"
            f" {fig['first']:>6.1f} ({fig['first_cpu']:>5.1f})ms"
            f" {fig['median']:>6.1f}ms {fig['worst']:>6.1f}ms {fig['cpu']:>6.1f}ms"
            f" {fig['worst_cpu']:>8.1f}ms {fig['item']:>8.1f}ms"
            f" {fig['rects']:>8,.0f}",
            flush=True,
        )
    gc.callbacks.remove(timed_gc)
    longest = f", longest {max(pauses):.1f} ms" if pauses else ""
    print(f"garbage collections during the frames: {len(pauses)}{longest}")
    return out


def axes_ab(view: Any, args: argparse.Namespace) -> None:
    """The frames with pyqtgraph's axis methods and with `QuickAxis`'s, alternated."""
    from axes_swap import CONDITIONS, use  # type: ignore[import-not-found]

    runs: dict[str, list[list[dict[str, float]]]] = {c: [] for c in CONDITIONS}
    for _round in range(args.axes_ab):
        for condition in CONDITIONS:
            use(condition, [view.plot])
            print(f"axes drawn by {condition}'s methods:")
            runs[condition].append(frames_table(view, args))
    use("quick", [view.plot])
    print(
        f"axes A/B, {args.axes_ab} rounds; median over the rounds of each level's median (ms);"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print(
        "| view width | GUI CPU, pyqtgraph | GUI CPU, QuickAxis | rect item, pyqtgraph |"
        " rect item, QuickAxis |\n|---|---:|---:|---:|---:|"
    )
    for level, first in enumerate(runs[CONDITIONS[0]][0]):
        cells = [
            statistics.median(run[level][key] for run in runs[condition])
            for key in ("cpu", "item")
            for condition in CONDITIONS
        ]
        print(
            f"| {_width_text(first['width_ns'])} | " + " | ".join(f"{c:.1f}" for c in cells) + " |"
        )


def run(file: Path, args: argparse.Namespace) -> None:
    """Open `file` in a real window, measure the Timeline's frames, then reopen it."""
    probe._read_through(file)
    width, height = (int(v) for v in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory(prefix="perfview-frames-") as tmp:
        os.environ["PERFVIEW_CACHE_DIR"] = str(args.cache_dir or Path(tmp) / "cache")
        os.environ.setdefault("XDG_CONFIG_HOME", str(Path(tmp) / "config"))  # no user settings
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance() or QApplication([])
        from perfview import startup_gc
        from perfview.qt import deferred
        from perfview.qt.main_window import MainWindow
        from perfview.store import layout_entries, overview_entries, parsed_columns

        tasks = TaskMemory() if args.tasks else None
        window = MainWindow()
        window.resize(width, height)
        window.show()
        app.processEvents()
        # as the application does once its window is up (`qt.app`): what start-up made is
        # frozen, so that no full collection during a frame walks it again
        startup_gc.release()
        print(f"file: {file} ({file.stat().st_size / 1e6:,.0f} MB), window {width}x{height}")
        rss_start = probe._rss_mb()
        res = probe.open_and_wait(window, file, None, "timeline")
        tab: Any = window.tabs.currentWidget()
        view = tab.built_view("timeline")
        if view is None or tab.current_view() != "timeline":
            print("the Timeline page was not drawn", file=sys.stderr)
            return
        drawn = res.get("timeline_drawn_s", res.get("drawn_s", float("nan")))
        print(
            f"open → Timeline drawn {drawn:.2f} s (first page {res.get('drawn_s', 0):.2f} s);"
            f" longest GUI gap {res['max_gap_ms']:.0f} ms, {res['gaps_over_100ms']:.0f} over"
            f" 100 ms; {len(view.data.ts):,} events"
        )
        print(
            f"RSS: window before {rss_start:,.0f} MB, Timeline drawn {probe._rss_mb():,.0f} MB,"
            f" ({rss_split()}), peak (VmHWM) {vm_hwm_mb():,.0f} MB;"
            f" load average {os.getloadavg()[0]:.2f}"
        )
        t = time.perf_counter()
        _quiet(deferred.flush, (parsed_columns, layout_entries, overview_entries))
        print(
            f"background work (critical paths, findings, cache writes) done"
            f" {time.perf_counter() - t:.2f} s later: RSS {probe._rss_mb():,.0f} MB"
            f" ({rss_split()}), peak {vm_hwm_mb():,.0f} MB"
        )
        if tasks is not None:
            tasks.report()
        holders(view)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        frames_table(view, args)
        if args.axes_ab:
            axes_ab(view, args)
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        print(
            f"after the frames: RSS {probe._rss_mb():,.0f} MB ({rss_split()}),"
            f" peak {vm_hwm_mb():,.0f} MB"
        )
        if not args.no_reopen:
            _reopen(window, file)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        probe._close_every_tab(window)
        window.close()


def _quiet(flush: Callable[[int], object], stores: tuple[Any, ...]) -> None:
    """Wait for the window's background work (the critical-path track, the Overview's
    findings, the caches written once quiet): frames measured meanwhile would share the GIL
    with it. The reopen reads those caches."""
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication

    flush(WAIT_MS)
    for store in stores:
        store.flush()
    QThreadPool.globalInstance().waitForDone(WAIT_MS)
    QApplication.processEvents()


def _reopen(window: Any, file: Path) -> None:
    """Open the file again, from the caches the first open wrote."""
    res = probe.open_and_wait(window, file, None, "timeline")
    drawn = res.get("timeline_drawn_s", res.get("drawn_s", float("nan")))
    print(
        f"reopen → Timeline drawn {drawn:.2f} s; longest GUI gap {res['max_gap_ms']:.0f} ms;"
        f" RSS {probe._rss_mb():,.0f} MB, peak {vm_hwm_mb():,.0f} MB"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--size", default="1600x1000", help="window size WxH")
    parser.add_argument("--frames", type=int, default=30, help="panned frames per zoom level")
    parser.add_argument("--pan", type=float, default=0.1, help="pan per frame, share of the view")
    parser.add_argument("--kernel", default="", help="centre on the longest kernel of this name")
    parser.add_argument("--no-reopen", action="store_true", help="skip the reopen from the cache")
    parser.add_argument(
        "--tasks", action="store_true", help="the RSS each background task ran up, by name"
    )
    parser.add_argument("--profile", type=Path, help="write a cProfile of the frames here")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="the cache folder, kept after the run (a second run reopens from it; default: a"
        " fresh one, removed after)",
    )
    parser.add_argument(
        "--zooms", type=int, default=0, help="measure only the first N zoom levels (0: all)"
    )
    parser.add_argument(
        "--axes-ab",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="then the frames with pyqtgraph's axis methods and QuickAxis's, alternated",
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), cpus {os.cpu_count()}")
    from perfview import startup_gc

    startup_gc.hold()  # the window's start-up collects rarely, as `python3 -m perfview` does
    run(args.file, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
