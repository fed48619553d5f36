#!/usr/bin/env python3
"""A big trace opened, then reopened, in one real window (offscreen), Timeline first.

    python3 scripts/bench/bench_window_reopen.py FILE [--cache DIR] [--opens 3]

Opens FILE in the main window through the real load task (`bench_gui_probe.open_and_wait`:
a 10 ms timer probe on the GUI thread, the Timeline clicked and drawn), closes the tab as a
user does, flushes the store's writes, and opens it again `--opens` times in all. Each line:
first page and Timeline drawn (seconds from the open), the longest GUI gap, the window's RSS
(anonymous + file pages) and peak (VmHWM), and the peak RSS of the helper processes (a parse
apart: sampled every 0.2 s with psutil) during that open. `--cache DIR` is the parsed-trace
cache's folder (default: a fresh temp folder, so the first open parses); point it at a folder
a run filled and every open is a reopen (the first then in a fresh window). Not part of CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        return next((int(ln.split()[1]) / 1024 for ln in fh if ln.startswith(key)), 0.0)


class ChildPeak:
    """The largest summed RSS of this process's children, sampled on a thread."""

    def __init__(self) -> None:
        import psutil

        self.me = psutil.Process()
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(0.2):
            total = 0
            for child in self.me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total / 2**20)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--cache", type=Path, help="the cache's folder (default: a fresh one)")
    parser.add_argument("--opens", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PERFVIEW_CACHE_DIR"] = str(args.cache or Path(tmp) / "cache")
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        run(args.file, args.opens)
    return 0


def run(file: Path, opens: int) -> None:
    import bench_gui_probe as probe
    from PySide6.QtWidgets import QApplication

    from perfview.qt.main_window import MainWindow
    from perfview.store import write_gates

    app = QApplication.instance() or QApplication([])
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    app.processEvents()
    print(f"{file} ({file.stat().st_size / 1e6:,.0f} MB); load average {os.getloadavg()[0]:.2f}")
    for i in range(opens):
        children = ChildPeak()
        res = probe.open_and_wait(window, file, None, "timeline")
        helper = children.stop()
        print(
            f"open {i}: first page {res.get('drawn_s', 0):.2f} s, Timeline drawn "
            f"{res.get('timeline_drawn_s', float('nan')):.2f} s, longest gap "
            f"{res['max_gap_ms']:.0f} ms; RSS {probe._rss_mb():,.0f} MB (anonymous "
            f"{_status_mb('RssAnon'):,.0f} + file {_status_mb('RssFile'):,.0f}), window peak "
            f"{_status_mb('VmHWM'):,.0f} MB, helper processes' peak {helper:,.0f} MB; "
            f"load average {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        probe._close_every_tab(window)
        started = time.perf_counter()
        write_gates.flush()
        print(f"  store writes flushed in {time.perf_counter() - started:.1f} s", flush=True)
    window.close()


if __name__ == "__main__":
    raise SystemExit(main())
