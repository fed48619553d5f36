#!/usr/bin/env python3
"""Page-ready times: from a document's load done to each page's widget built and drawn.

    python3 scripts/bench/bench_page_ready.py FILE [--runs 3] [--fresh] [--pages a,b]

Opens the real main window offscreen, loads FILE through the real load task (`open_path`),
waits until the first page is drawn and the window is quiet (no put-off piece, no page
preparing), then clicks each page of the document in the navigation's order as a user does
(`tabs.setCurrentIndex`: its data prepared in a worker, its widget built in pieces) and
times the click → the page's widget built, its data in, every put-off piece run and the
window painted (`window.grab()`). Medians over --runs opens, each in a fresh window, all
with one cache folder of the script's own (no cache from before the script: its first open
parses the file, the others reopen it from the store, as a user reopening it). Pages
visited in order share what earlier pages computed (the document's tables), as they do for a
user; --fresh reopens
the file before each page instead (load → that page alone: slower to run, N × pages loads).
--settle S waits S seconds before
the first click: the window prepares the other pages' data once it is quiet
(`qt/page_prefetch.py`), so a later click only builds widgets. The goal (issue 37): every
page of a trace ≤ 100 MB ready ≤ 0.5 s. The machine's 1-minute load average is printed
before and after: on a shared machine a figure is only as good as it.
Not part of CI.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

GOAL_S = 0.5
TIMEOUT_S = 120.0
POLL_MS = 2  # how often a wait checks its condition


def _wait(app: object, until: object, timeout_s: float = TIMEOUT_S) -> bool:
    """Run the event loop until `until()` (checked every POLL_MS) or the timeout. The loop
    sleeps between events as the application's does: a loop of `processEvents` calls spins in
    Python and takes the GIL from the workers preparing the page it waits for (with the
    window's 1 ms switch interval, 2-4x their time on a busy 2-core machine)."""
    from PySide6.QtCore import QEventLoop, QTimer

    if until():  # type: ignore[operator]
        return True
    loop = QEventLoop()
    deadline = time.perf_counter() + timeout_s
    done: list[bool] = []

    def check() -> None:
        if until():  # type: ignore[operator]
            done.append(True)
            loop.quit()
        elif time.perf_counter() > deadline:
            loop.quit()

    timer = QTimer()
    timer.setInterval(POLL_MS)
    timer.timeout.connect(check)
    timer.start()
    loop.exec()
    timer.stop()
    return bool(done)


def _past(moment: float) -> bool:
    return time.perf_counter() >= moment


def _quiet(tab: object) -> bool:
    from perfview.qt import deferred

    return deferred.pending() == 0 and not tab.is_preparing()  # type: ignore[attr-defined]


def _open(app: object, window: object, path: Path) -> tuple[Any, float]:
    """Open `path`; the tab and the seconds from the load's result reaching the window to its
    first page drawn (that page's ready time)."""
    opened: list[float] = []
    tabs: list[object] = []

    def on_open(tab: object) -> None:
        opened.append(time.perf_counter())
        tabs.append(tab)

    window.document_opened.connect(on_open)  # type: ignore[attr-defined]
    window.open_path(path, remember=False)  # type: ignore[attr-defined]
    if not _wait(app, lambda: bool(tabs)):
        raise SystemExit(f"bench_page_ready: {path} did not open in {TIMEOUT_S:.0f} s")
    window.document_opened.disconnect(on_open)  # type: ignore[attr-defined]
    tab = tabs[0]
    _wait(app, lambda: _quiet(tab))
    window.grab()  # type: ignore[attr-defined]
    return tab, time.perf_counter() - opened[0]


def _time_page(app: object, window: object, tab: object, name: str) -> float:
    names = tab.view_names()  # type: ignore[attr-defined]
    start = time.perf_counter()
    tab.tabs.setCurrentIndex(names.index(name))  # type: ignore[attr-defined]
    ok = _wait(
        app,
        lambda: tab.built_view(name) is not None and _quiet(tab),  # type: ignore[attr-defined]
    )
    window.grab()  # type: ignore[attr-defined]
    took = time.perf_counter() - start
    return took if ok else float("inf")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="a trace (or any file perfview opens)")
    parser.add_argument("--runs", type=int, default=3, help="opens per page (median)")
    parser.add_argument("--fresh", action="store_true", help="reopen the file before each page")
    parser.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds to wait after the first page is drawn before the first click (the "
        "window prepares the other pages meanwhile); 0: click at once",
    )
    args = parser.parse_args(argv)
    path = Path(args.file)
    if not path.exists():
        print(f"bench_page_ready: no such file: {path}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PERFVIEW_CACHE_DIR"] = str(Path(tmp) / "cache")
        return _run(path, args)


def _run(path: Path, args: argparse.Namespace) -> int:
    from perfview.qt.app import make_app
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    app = make_app()
    load_before = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    order: list[str] = []
    for run in range(args.runs):
        window = MainWindow(Settings.ephemeral())
        window.resize(1600, 1000)
        window.show()
        tab, first_s = _open(app, window, path)
        names = [n for n in tab.view_names() if not args.pages or n in args.pages.split(",")]
        first = tab.current_view()
        order = order or names
        _wait(app, functools.partial(_past, time.perf_counter() + args.settle))
        for name in names:
            if args.fresh and name != names[0]:
                window.tabs_controller.close_current()
                tab, first_s = _open(app, window, path)
            if name == first:
                took = first_s  # the page the tab opens on: drawn with the load's result
            else:
                took = _time_page(app, window, tab, name)
            times.setdefault(name, []).append(took)
            print(f"run {run + 1}: {name:<22} {took:7.3f} s", file=sys.stderr, flush=True)
        window.close()
        window.deleteLater()
        _wait(app, functools.partial(_past, time.perf_counter() + 0.05))  # deleteLater runs
        gc.collect()
    load_after = os.getloadavg()[0]
    size_mb = path.stat().st_size / 1e6
    print(
        f"{path.name}: {size_mb:.1f} MB, {args.runs} runs, {'fresh' if args.fresh else 'in order'}"
    )
    print(f"load average (1 min): {load_before:.1f} before, {load_after:.1f} after; "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"| page | median s | min s | max s | ≤ {GOAL_S} s |")
    print("|---|---|---|---|---|")
    for name in order:
        values = times.get(name, [])
        med = statistics.median(values)
        mark = "yes" if med <= GOAL_S else "no"
        print(f"| {name} | {med:.2f} | {min(values):.2f} | {max(values):.2f} | {mark} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
