#!/usr/bin/env python3
"""GUI responsiveness while a big trace loads: a 10 ms timer probe on the GUI thread.

    python3 scripts/bench/bench_gui_probe.py FILE [--cancel-after S] [--warm] [--view NAME]
        [--hog N] [--trace-gaps]
    python3 scripts/bench/bench_gui_probe.py --startup FILE [FILE…] [--runs 5] [--hog N]
        [--preload both]

Opens the real main window offscreen, loads FILE through the real load task (`open_path`),
and records every gap between ticks of a 10 ms QTimer on the GUI thread until the tab is open
and drawn (`window.grab()` forces a full paint), then clicks page --view (default: the
Timeline, when the tab opened on another page) and waits until that page is drawn. A gap is
how long the GUI thread could not run: the target is < 100 ms. `tab_stall_ms` is the gap
around the tab's construction (`result_at_s`: when the load's result reached the GUI thread);
"gaps > 50 ms" lists each long gap with when it ended, to set against those times. With
--cancel-after S it presses Cancel S seconds into the load and reports how long the load took
to stop (target < 1 s). `host_steal_ms` is the CPU time the hypervisor gave to other guests
during the open (all CPUs, /proc/stat): a slow open with a high figure ran in a slow phase of the
host, not of perfview. Without --cancel-after the file is opened twice: the first open parses
it, the second (the reopen) comes from the caches the first wrote. Those caches are a fresh
temp folder, unless --warm points them at the user's (then the first open may hit them too,
from an earlier run). Then the reopen's tab is closed as a user closes it, nobody collecting
(`close` line: the GUI thread's longest gap in the next second, and the RSS 0.3 s and 1 s
after: what the window gives back by itself). --hog N runs N busy processes
beside the probe (a loaded machine). --trace-gaps samples the GUI thread's stack and CPU clock
every 3 ms and prints, for each gap over 70 ms, the GUI thread's CPU ms within it and where it
was (a gap with little GUI CPU was spent waiting for the GIL or a core), what the other threads
ran meanwhile, and the CPU time the hypervisor took from this machine then (steal). Reading
other threads' frames every 3 ms is not safe on CPython 3.11 (frame lifetimes,
python/cpython#111363): 10-20 % of --trace-gaps runs here die of a segfault in the event
loop, so a run without a result line is run again; no plain probe did (334 runs). --startup times
fresh `perfview FILE` processes instead:
launch → window shown → first page drawn, medians of --runs (scripts/bench/startup_probe.py).
Not part of CI.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # startup_probe
if "--startup" not in sys.argv:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import psutil
from PySide6.QtCore import QEvent, QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

GAP_TRACE_MS = float(os.environ.get("PROBE_GAP_TRACE_MS", "70"))


class StackSampler:
    """With --trace-gaps: a thread that every 3 ms notes the GUI thread's CPU clock and its
    Python stack, so each long gap can be told apart: the GUI thread ran (its CPU ms, and in
    which functions) or it was not running (waiting for the GIL or for a core)."""

    def __init__(self) -> None:
        self.tid = threading.get_ident()
        self.clock = time.pthread_getcpuclockid(self.tid)
        self.native = threading.get_native_id()
        self.samples: list[tuple[float, float, str]] = []
        self.others: list[tuple[float, list[str]]] = []  # other threads' stacks, each sample
        self.sched: list[tuple[float, dict[int, tuple[int, int]]]] = []
        self.steal: list[tuple[float, float]] = []  # the machine's stolen CPU ms, each sample
        self.stalls: list[tuple[float, float, list[str]]] = []
        self.py_names: dict[int, str] = {}  # native thread id -> Python thread name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="probe-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.003):
            frames = sys._current_frames()
            now = time.perf_counter()
            where = _where(frames.get(self.tid))
            threads = threading.enumerate()
            names = {t.ident: t.name for t in threads}
            self.py_names.update((t.native_id, t.name) for t in threads if t.native_id)
            others = [
                f"{names.get(t, t)}: {_where(f)}"
                for t, f in frames.items()
                if t not in (self.tid, threading.get_ident())
            ]
            if now - last > 0.05:  # this thread waited for the GIL: who had it, and doing what
                self.stalls.append((now, now - last, others))
            last = now
            self.samples.append((now, time.clock_gettime(self.clock), where))
            self.others.append((now, [w for w in others if not w.endswith(": ")]))
            self.sched.append((now, _schedstats()))
            self.steal.append((now, _steal_ms()))

    def explain(self, start: float, end: float) -> str:
        """GUI-thread CPU ms in [start, end] and the distinct stacks seen then."""
        stalls = [
            f"sampler stalled {ms * 1000:.0f} ms; then {' ; '.join(w)}"
            for at, ms, w in self.stalls
            if start <= at <= end + 0.05
        ]
        inside = [s for s in self.samples if start <= s[0] <= end]
        inside = [s for s in self.samples if s[0] < start][-1:] + inside
        inside += [s for s in self.samples if s[0] > end][:1]
        if len(inside) < 2:
            return "no samples"
        cpu = (inside[-1][1] - inside[0][1]) * 1000
        seen: dict[str, int] = {}
        for _, _, where in inside:
            seen[where or "(idle/Qt)"] = seen.get(where or "(idle/Qt)", 0) + 1
        top = sorted(seen.items(), key=lambda kv: -kv[1])[:4]
        sched = [s for s in self.sched if s[0] < start][-1:]
        sched += [s for s in self.sched if start <= s[0] <= end]
        sched += [s for s in self.sched if s[0] > end][:1]
        ran, ran_names = "", set()
        if len(sched) >= 2:
            first, last = sched[0][1], sched[-1][1]
            gui = [(last[self.native][i] - first[self.native][i]) / 1e6 for i in (0, 1)]
            others = sorted(
                ((b[0] - first.get(t, (b[0], 0))[0]) / 1e6, t) for t, b in last.items()
            )[::-1]
            ran_names = {
                self.py_names.get(t, "") for ms, t in others if ms >= 5 and t != self.native
            }
            busy = ", ".join(
                f"{self._name(t)} {ms:.0f}" for ms, t in others if ms >= 5 and t != self.native
            )
            ran = f" (ran {gui[0]:.0f}, queued {gui[1]:.0f}; others ran: {busy})"
        steal = [s for s in self.steal if s[0] < start][-1:]
        steal += [s for s in self.steal if s[0] > end][:1]
        if len(steal) == 2:
            ran += f"; stolen by the host {steal[1][1] - steal[0][1]:.0f} ms (all CPUs)"
        text = f"gui cpu {cpu:.0f} ms{ran}; " + " | ".join(f"{n}x {w}" for w, n in top)
        busy_seen: dict[str, int] = {}
        for at, stacks in self.others:
            if start <= at <= end:
                for w in stacks:  # the threads that ran in the gap, not those that waited
                    if not ran_names or w.split(": ", 1)[0] in ran_names:
                        busy_seen[w] = busy_seen.get(w, 0) + 1
        workers = sorted(busy_seen.items(), key=lambda kv: -kv[1])[:4]
        text += "".join(f"\n        other {n}x {w}" for w, n in workers)
        return text + "".join(f"\n        {s}" for s in stalls)

    def _name(self, tid: int) -> str:
        """A thread's Python name where it has one (a Task's pool thread is `Dummy-N` there,
        `Thread (pooled)` to the kernel), else its kernel name."""
        comm = _comm(tid)
        name = self.py_names.get(tid)
        return f"{name} ({comm})" if name and name != comm else comm


def _where(frame: object) -> str:
    """The innermost perfview / pyqtgraph frames of a thread's stack."""
    if frame is None:
        return ""
    stack = [
        f"{Path(f.filename).stem}.{f.name}:{f.lineno}"
        for f in traceback.extract_stack(frame)  # type: ignore[arg-type]
        if "perfview" in f.filename or "pyqtgraph" in f.filename or "numba" in f.filename
    ]
    return " > ".join(stack[-4:])


def _schedstats() -> dict[int, tuple[int, int]]:
    """Per thread of this process: ns on a CPU and ns runnable but waiting for one."""
    out: dict[int, tuple[int, int]] = {}
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{tid}/schedstat") as f:
            run, wait, _ = f.read().split()
            out[int(tid)] = (int(run), int(wait))
    return out


def _steal_ms() -> float:
    """CPU ms the hypervisor gave to other guests, all CPUs summed (/proc/stat, 10 ms ticks):
    a gap in which the GUI thread sat queued while this process's threads barely ran."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return float(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _comm(tid: int) -> str:
    try:
        return Path(f"/proc/self/task/{tid}/comm").read_text().strip()
    except OSError:
        return str(tid)


class Probe:
    """Timestamps of a 10 ms timer's ticks; gaps between ticks show GUI-thread stalls."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def start(self) -> None:
        self.ticks = [time.perf_counter()]
        self.timer.start()

    def stop(self) -> list[float]:
        self.timer.stop()
        self.ticks.append(time.perf_counter())
        return [(b - a) * 1000 for a, b in zip(self.ticks, self.ticks[1:], strict=False)]


def open_and_wait(
    window: object,
    path: Path,
    cancel_after: float | None,
    view: str = "",
    sampler: StackSampler | None = None,
) -> dict[str, float]:
    """Open `path`; return seconds to open and draw (or to stop, when cancelled) and gaps.

    With `view` (e.g. "timeline"), once the tab is open its page `view` is clicked too, and
    the time until that page is drawn is reported (`<view>_switch_s`, `<view>_drawn_s`).
    """
    closing = time.perf_counter()
    _close_every_tab(window)  # an open tab would be reused
    loop = QEventLoop()
    result: dict[str, float] = {"close_s": time.perf_counter() - closing}
    result["rss_before_mb"] = _rss_mb()
    t0 = time.perf_counter()
    cpu0 = time.process_time()  # the whole process: every thread's CPU for this open
    steal0 = _steal_ms()  # the host's share of the machine meanwhile (a slow phase, or not)

    def opened(tab: object) -> None:
        result["opened_s"] = time.perf_counter() - t0
        # painted on a turn of its own, as a window paints (a posted update) after the slot
        # that built the tab returns; a grab inside this slot would add the paint to its gap
        QTimer.singleShot(1, lambda: drawn(tab))

    def drawn(tab: object) -> None:
        window.grab()  # type: ignore[attr-defined]  # paint everything once: the first page
        result["drawn_s"] = time.perf_counter() - t0
        if view and view in tab.view_names() and tab.current_view() != view:  # type: ignore[attr-defined]
            QTimer.singleShot(100, lambda: switch_to(tab))  # a user clicks a while after
        else:
            loop.quit()

    def switch_to(tab: object) -> None:
        """Click page `view`'s tab as a user would (it may prepare in the background), then
        wait until it is built and drawn."""
        started = time.perf_counter()
        tab.tabs.setCurrentIndex(tab.view_names().index(view))  # type: ignore[attr-defined]

        def check() -> None:
            if tab.is_preparing(view) or deferred.pending():  # type: ignore[attr-defined]
                QTimer.singleShot(5, check)
                return
            window.grab()  # type: ignore[attr-defined]
            now = time.perf_counter()
            result[f"{view}_switch_s"] = now - started
            result[f"{view}_drawn_s"] = now - t0
            loop.quit()

        QTimer.singleShot(0, check)

    def failed(_path: str, message: str) -> None:
        print(f"load failed: {message}", file=sys.stderr)
        loop.quit()

    def cancelled(_path: str) -> None:
        result["stopped_after_cancel_s"] = time.perf_counter() - result["cancel_at"]
        loop.quit()

    from perfview.qt import deferred  # the page may be built over several turns

    opener = window.open_controller  # type: ignore[attr-defined]
    build = opener._on_loaded

    def timed_build(*args: object) -> None:  # when the load's result reached the GUI thread
        result["result_at_s"] = time.perf_counter() - t0
        build(*args)

    opener._on_loaded = timed_build
    window.document_opened.connect(opened)  # type: ignore[attr-defined]
    window.load_failed.connect(failed)  # type: ignore[attr-defined]
    window.load_cancelled.connect(cancelled)  # type: ignore[attr-defined]
    probe = Probe()
    probe.start()
    if cancel_after is not None:

        def cancel() -> None:
            result["cancel_at"] = time.perf_counter()
            window.status_controller.cancel_loads()  # type: ignore[attr-defined]

        QTimer.singleShot(int(cancel_after * 1000), cancel)
    window.open_path(path, remember=False)  # type: ignore[attr-defined]
    loop.exec()
    gaps = probe.stop()
    result["process_cpu_s"] = time.process_time() - cpu0
    result["host_steal_ms"] = _steal_ms() - steal0
    result["rss_drawn_mb"] = _rss_mb()
    for signal, slot in (("document_opened", opened), ("load_failed", failed)):
        getattr(window, signal).disconnect(slot)
    window.load_cancelled.disconnect(cancelled)  # type: ignore[attr-defined]
    opener._on_loaded = build
    result.update(gap_figures(probe, gaps, t0, sampler))
    if "result_at_s" in result:  # the GUI-thread stall around the tab's construction
        at = t0 + result["result_at_s"]
        before = max((t for t in probe.ticks if t <= at), default=at)
        after = min((t for t in probe.ticks if t > at), default=at)
        result["last_tick_before_result_ms"] = (at - before) * 1000
        result["tab_stall_ms"] = (after - before) * 1000
    result["ticks"] = float(len(gaps))
    return result


def _read_through(file: Path) -> None:
    """Read the file once first, so the open finds it in the page cache as a file just
    written or looked at would be: this kind of VM pages out what nobody touched for a
    minute (DAMON), and in an A/B loop the first probe after a change of file paid the disk
    for both (slower opens, scan-start gaps: misread as one side's)."""
    with file.open("rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def _close_every_tab(window: object) -> None:
    """Close the window's tabs and free them (their bundles) now, not inside the next
    measurement: their widgets are deleted, a full collection frees the cycles among their
    wrappers, and the window's own letting go (`qt.let_go`: the args blob unmapped and
    malloc's heap trimmed on a thread, 75-150 ms of system time) is waited for. A user
    closes `close_as_a_user`."""
    while window.tabs.count():  # type: ignore[attr-defined]
        window.tabs_controller.close_tab(0)  # type: ignore[attr-defined]
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()
    gc.collect()
    for thread in threading.enumerate():
        if thread.name == "perfview-let-go":
            thread.join()


def close_as_a_user(window: object) -> dict[str, float]:
    """Close the current tab as a user does (a click, then the event loop runs on; nobody
    collects), with the 10 ms probe running: the GUI thread's longest gap over the next
    second, and the RSS before and 0.3 s and 1 s after (what the window gives back by
    itself, and when)."""
    out = {"rss_before_mb": _rss_mb()}
    probe = Probe()
    probe.start()
    QTimer.singleShot(20, window.tabs_controller.close_current)  # type: ignore[attr-defined]
    for at_ms in (300, 1000):
        loop = QEventLoop()
        QTimer.singleShot(at_ms - (300 if at_ms > 300 else 0), loop.quit)
        loop.exec()
        out[f"rss_{at_ms}ms_mb"] = _rss_mb()
    out["max_gap_ms"] = max(probe.stop())
    return {k: round(v, 1) for k, v in out.items()}


def _rss_mb() -> float:
    """This process's resident memory now (not its peak): a closed tab's memory must return."""
    return float(psutil.Process().memory_info().rss / 1e6)


def gap_figures(
    probe: Probe, gaps: list[float], t0: float, sampler: StackSampler | None
) -> dict[str, float]:
    """The longest gap, when it ended, p99 and how many over 100 ms; prints where the long
    gaps were (ended at, seconds since the open: set against opened_s / drawn_s /
    <view>_drawn_s this says which step stalled) and, with a sampler, what ran in each."""
    out = {"max_gap_ms": max(gaps) if gaps else 0.0}
    if gaps:  # when the worst stall ended, in seconds since the open started
        out["max_gap_ended_s"] = probe.ticks[gaps.index(max(gaps)) + 1] - t0
    # inclusive: within the gaps seen (the default extrapolated past the longest, few ticks)
    p99 = statistics.quantiles(gaps, n=100, method="inclusive")[98] if len(gaps) > 2 else 0.0
    out["p99_gap_ms"] = p99
    out["gaps_over_100ms"] = float(sum(g > 100 for g in gaps))
    long = [(round(probe.ticks[i + 1] - t0, 2), round(g)) for i, g in enumerate(gaps) if g > 50]
    print(f"  gaps > 50 ms (ended at s, ms): {long}", flush=True)
    for i, g in enumerate(gaps):
        if sampler is not None and g > GAP_TRACE_MS:
            why = sampler.explain(probe.ticks[i], probe.ticks[i + 1])
            print(f"    {probe.ticks[i + 1] - t0:.2f}s {g:.0f} ms: {why}", flush=True)
    return out


HOG = """
import os, sys
parent = int(sys.argv[1])  # the probe's pid, given: reading getppid() could already see init
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


@contextlib.contextmanager
def hogs(count: int) -> Iterator[None]:
    """`count` busy processes (one spinning loop each) for as long as the block runs. Each
    also ends by itself once this process is gone (killed by a timeout, say), so no hog
    outlives the probe and skews later measurements."""
    procs = [subprocess.Popen([sys.executable, "-c", HOG, str(os.getpid())]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, nargs="+")
    parser.add_argument("--cancel-after", type=float, help="press Cancel after S seconds")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="use the user's cache (the first open may hit it) instead of a fresh one",
    )
    parser.add_argument(
        "--view", default="timeline", help="page to click once open ('' for none; default timeline)"
    )
    parser.add_argument("--hog", type=int, default=0, metavar="N", help="N busy processes beside")
    parser.add_argument(
        "--trace-gaps", action="store_true", help="sample the GUI thread: what ran in each gap"
    )
    parser.add_argument("--startup", action="store_true", help="time fresh `perfview FILE` starts")
    parser.add_argument("--runs", type=int, default=5, help="--startup: launches per file")
    parser.add_argument(
        "--preload",
        choices=("auto", "on", "off", "both"),
        default="auto",
        help="--startup: parse a big .prof in a child while the window starts "
        "(perfview.preload; auto: when a CPU is idle; both: off and on alternate)",
    )
    parser.add_argument(
        "--no-bytecode", action="store_true", help="--startup: keep PYTHONDONTWRITEBYTECODE"
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min)")
    with hogs(args.hog):
        if args.hog:
            print(f"with {args.hog} busy processes beside")
        if args.startup:
            import startup_probe

            startup_probe.startup(args.file, args.runs, not args.no_bytecode, preload=args.preload)
        else:
            for file in args.file:
                probe_file(file, args)
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
    return 0


def probe_file(file: Path, args: argparse.Namespace) -> None:
    """Open `file` in a real main window (offscreen) twice: the parse, then the reopen."""
    _read_through(file)
    with tempfile.TemporaryDirectory(prefix="perfview-probe-") as tmp:
        if not args.warm:
            os.environ["PERFVIEW_CACHE_DIR"] = str(Path(tmp) / "cache")
        os.environ.setdefault("XDG_CONFIG_HOME", str(Path(tmp) / "config"))  # no user settings
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance() or QApplication([])
        from perfview.qt import deferred
        from perfview.qt.main_window import MainWindow
        from perfview.store import layout_entries, overview_entries, parsed_columns

        window = MainWindow()
        window.show()
        app.processEvents()
        size_mb = file.stat().st_size / 1e6
        print(f"file: {file} ({size_mb:,.0f} MB), cpus: {os.cpu_count()}")
        runs = [("open", args.cancel_after)]
        if args.cancel_after is None:
            runs.append(("reopen (cache)", None))
        sampler = StackSampler() if args.trace_gaps else None
        if sampler is not None:
            sampler.start()
        for label, cancel_after in runs:
            res = open_and_wait(window, file, cancel_after, args.view, sampler)
            # the Overview's findings, found by a worker once the window is quiet: done (and
            # cached, as a user's first open would have them) before the reopen closes the
            # tab, and before this run's cache folder is removed
            deferred.flush(60_000)
            parsed_columns.flush()
            layout_entries.flush()  # the Timeline's layout and the Overview's tables, stored
            overview_entries.flush()  # for the reopen
            shown = {k: round(v, 3) for k, v in res.items() if k != "cancel_at"}
            print(f"{label}: {shown}", flush=True)
        if sampler is not None:
            sampler.stop()
        if args.cancel_after is None:
            print(f"close (as a user does): {close_as_a_user(window)}", flush=True)
        _close_every_tab(window)
        print(f"every tab closed: RSS {_rss_mb():,.0f} MB", flush=True)
        window.close()


if __name__ == "__main__":
    sys.exit(main())
