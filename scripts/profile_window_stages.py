#!/usr/bin/env python3
"""Where the window's Open → Timeline time goes: each stage's start and end (seconds since
Open), wall, process CPU and its own thread's CPU, and the thread it ran on.

    python scripts/profile_window_stages.py FILE [bench_gui_probe options]

Runs `scripts/bench_gui_probe.py` (a real main window, offscreen; the open, then a reopen
from the cache) with timers around the load's stages (`profile_trace_stages.STAGES`) and
the window's own steps: the load task, the first page, the Timeline's layout (on the load's
thread, `qt/document_ahead`, or the tab's), the tab's builds, the column-cache write and
the scanner's warm-up. Stages overlap (they run on several threads): read the start/end
columns against `result_at_s` / `timeline_drawn_s`. For the issue notes, not for CI.
"""

from __future__ import annotations

import functools
import importlib
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PERFVIEW_CACHE_MAX_MB", "100000")  # profile_trace_stages turns it off

import bench_gui_probe
import profile_trace_stages

WINDOW_STEPS: list[tuple[str, str, str]] = [
    ("load task", "perfview.qt.tasks", "load_and_prepare"),
    ("load (service)", "perfview.loaders", "load"),
    ("column cache read", "perfview.store.parsed_columns", "get"),
    ("column cache write", "perfview.store.parsed_columns", "put"),
    ("first page (prepare_pages)", "perfview.qt.tasks", "prepare_pages"),
    ("Timeline data (load's thread)", "perfview.qt.document_ahead", "page_data"),
    ("Timeline data (tab)", "perfview.qt.document_tab", "page_data"),
    ("  prepare_timeline", "perfview.core.layout.timeline_layout", "prepare_timeline"),
    ("tab builds a page", "perfview.qt.document_tab", "DocumentTab._build"),
    ("scanner warm-up", "perfview.loaders.trace.scan.parallel", "warm"),
]
EVENTS: list[tuple[str, float, float, float, float, str]] = []


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, cpu, own = time.perf_counter(), _cpu(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            name = threading.current_thread().name
            spent = (time.perf_counter(), _cpu() - cpu, time.thread_time() - own)
            EVENTS.append((label, start, *spent, name))

    return wrapper


def install() -> None:
    stages = [(label.strip(), m, a) for label, m, a in profile_trace_stages.STAGES]
    for label, module_name, attr in stages + WINDOW_STEPS:
        if attr == "schema":
            continue
        owner: Any = importlib.import_module(module_name)
        if "." in attr:
            cls, attr = attr.split(".")
            owner = getattr(owner, cls)
        setattr(owner, attr, _timed(label, getattr(owner, attr)))
    from perfview.loaders.trace import build as build_mod

    build_mod.nesting = importlib.import_module("perfview.core.analysis.nesting")


def main(argv: list[str]) -> int:
    install()
    probe = bench_gui_probe.open_and_wait

    def timed_open(
        window: object, path: Path, cancel_after: float | None, view: str = "", *more: Any
    ) -> Any:
        EVENTS.clear()
        t0, cpu0 = time.perf_counter(), _cpu()
        result = probe(window, path, cancel_after, view, *more)
        print(f"  process CPU, Open → Timeline drawn: {_cpu() - cpu0:.2f} s")
        print(f"  {'stage':<30} {'from':>6} {'to':>6} {'wall':>6} {'cpu':>6} {'own':>6}  thread")
        for label, start, end, cpu, own, thread in sorted(EVENTS, key=lambda e: e[1]):
            print(
                f"  {label:<30} {start - t0:6.2f} {end - t0:6.2f} {end - start:6.2f}"
                f" {cpu:6.2f} {own:6.2f}  {thread}"
            )
        return result

    bench_gui_probe.open_and_wait = timed_open
    return bench_gui_probe.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
