#!/usr/bin/env python3
"""Where a trace load's time goes: wall and CPU seconds of each stage, in one fresh process.

    python scripts/probes/profile_trace_stages.py FILE [--summary] [--rss] [--rows-on-disk]

Wraps the stage functions of the Chrome-trace pipeline (read, scan, column copy, assemble,
the parts of build, args compaction) with timers and prints one row per stage: wall seconds,
CPU seconds of the whole process during it (all threads) and calls. Nested stages are
indented under the stage that calls them. With --summary the `perfview summary` tables after
the load are timed too. The parsed-column cache is off (a cold parse) and the scanner's
compiled code is loaded before the clock starts; the import and start-up cost is printed on
its own line. Build stages marked "(2nd thread)" run beside the main thread's (see
`trace.build`): their wall time overlaps the others', and the CPU columns, being the whole
process's, count both threads while they overlap. `--rss` also samples the process's resident
memory every 20 ms and prints, per stage of the main thread, the most it held (anonymous
and file pages apart). `--rows-on-disk` puts the scanner's rows in a file on disk whatever
the memory available (`limits.rows_on_disk`, which chooses that only where memory is short).
For the issue notes ("where the time went"), not for CI.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis_memory import resident_mb  # this folder, put on the path by running a probe

os.environ.setdefault("PERFVIEW_CACHE_MAX_MB", "0")

STAGES: list[tuple[str, str, str]] = [
    # (label, module, attribute) — the attribute is replaced where the caller looks it up
    ("read", "perfview.loaders.trace.loader", "read_mapped"),
    ("scan (compiled, threads)", "perfview.loaders.trace.scan.parallel", "_run"),
    ("copy batches to columns", "perfview.loaders.trace.scan.batches", "to_columns"),
    ("assemble (intern, decode)", "perfview.loaders.trace.scan.parallel", "assemble"),
    ("build", "perfview.loaders.trace.loader", "build"),
    ("  slices", "perfview.loaders.trace.build", "slices"),
    ("  overlap rows", "perfview.loaders.trace.build", "_overlap_rows"),
    ("  lanes", "perfview.loaders.trace.build", "build_lanes"),
    ("  nesting", "perfview.core.analysis.nesting", "nest"),
    ("  events table", "perfview.loaders.trace.build", "events_table"),
    ("  events table labels (2nd thread)", "perfview.loaders.trace.build", "event_labels"),
    ("  counters table", "perfview.loaders.trace.build", "counters_table"),
    ("  memory table", "perfview.loaders.trace.build", "memory_table"),
    ("  flows table (2nd thread)", "perfview.loaders.trace.build", "flows_table"),
    ("  flow pairs (2nd thread)", "perfview.loaders.trace.build", "flow_pairs"),
    ("  schema coerce", "perfview.loaders.trace.build", "schema"),
    ("build + args compaction", "perfview.loaders.trace.loader", "_build_scanned"),
    ("bundle + validate", "perfview.loaders.trace.loader", "_bundle"),
]

TOTALS: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
PEAK_AFTER: dict[str, float] = {}  # the process's peak RSS (MB) when the stage ended
RUNNING: list[str] = []  # the main thread's stages now running, innermost last (`--rss`)
HELD: dict[str, tuple[int, int]] = {}  # per stage: the most (anonymous, file) MB sampled


def _clock() -> tuple[float, float, float]:
    """Wall, user CPU and system CPU seconds of the whole process (all threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), r.ru_utime, r.ru_stime


def _sample_rss(stop: threading.Event) -> None:
    while not stop.wait(0.02):
        if RUNNING:
            label, now = RUNNING[-1], resident_mb()
            if sum(now) > sum(HELD.get(label, (0, 0))):
                HELD[label] = now


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before = _clock()
        main = threading.current_thread() is threading.main_thread()
        if main:
            RUNNING.append(label)
        try:
            return fn(*args, **kwargs)
        finally:
            if main:
                RUNNING.pop()
            after = _clock()
            t = TOTALS[label]
            for k in range(3):
                t[k] += after[k] - before[k]
            t[3] += 1
            PEAK_AFTER[label] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    return wrapper


class _TimedSchema:
    """schema.coerce timed, everything else of the module passed through."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self.coerce = _timed("  schema coerce", module.coerce)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def install() -> None:
    for label, module_name, attr in STAGES:
        module = importlib.import_module(module_name)
        if attr == "schema":
            module.schema = _TimedSchema(module.schema)
            continue
        setattr(module, attr, _timed(label, getattr(module, attr)))
    # build.py imported nest by module: patch the name it uses
    from perfview.loaders.trace import build as build_mod

    build_mod.nesting = importlib.import_module("perfview.core.analysis.nesting")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--summary", action="store_true", help="time the summary tables too")
    parser.add_argument("--rss", action="store_true", help="sample the RSS per stage")
    parser.add_argument(
        "--rows-on-disk", action="store_true", help="the scanner's rows in a file on disk"
    )
    args = parser.parse_args(argv)
    t0 = _clock()
    from perfview.loaders import FRESH, load
    from perfview.loaders.trace.scan import parallel

    parallel.warm()
    imports = [b - a for a, b in zip(t0, _clock(), strict=True)]
    install()
    if args.rows_on_disk:
        parallel.rows_on_disk = lambda _nbytes: True
    stop = threading.Event()
    if args.rss:
        threading.Thread(target=_sample_rss, args=(stop,), daemon=True).start()
    with open(args.file, "rb") as fh:  # page the file in: the figures are not the disk's
        while fh.read(1 << 24):
            pass
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.summary:  # as `perfview summary` does (cli._read_ahead): the heap stays reusable
        from perfview.loaders.trace import heap

        heap.keep_after_blocks()
    t0 = _clock()
    bundle = load(args.file, options=FRESH)
    load_s = [b - a for a, b in zip(t0, _clock(), strict=True)]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.summary:
        from perfview.core.pages import summary

        t1 = _clock()
        view = summary.default_view(bundle)
        summary.summarize(bundle, view)
        TOTALS["summary tables (after the load)"] = [
            *(b - a for a, b in zip(t1, _clock(), strict=True)),
            1,
        ]
    size = args.file.stat().st_size
    print(f"{args.file.name}: {size / 1e6:,.0f} MB, {bundle.counts.get('events', 0):,} events")
    print(f"{'stage':<34} {'wall s':>7} {'user s':>7} {'sys s':>7} {'calls':>6} {'peak MB':>8}")
    rows = [("imports + compiled code loaded", *imports, 1), *((k, *v) for k, v in TOTALS.items())]
    rows.append(("load, total", *load_s, 1))
    for label, wall, user, system, calls in rows:
        peak = PEAK_AFTER.get(label, rss)
        print(f"{label:<34} {wall:7.2f} {user:7.2f} {system:7.2f} {int(calls):>6} {peak:8,.0f}")
    stop.set()
    if HELD:
        print(f"{'main-thread stage: most resident':<34} {'anon MB':>8} {'file MB':>8}")
        for label, (anon, file) in HELD.items():
            print(f"{label:<34} {anon:8,} {file:8,}")
    rate = size / 1e6 / load_s[0]
    print(f"peak RSS {rss:,.0f} MB (before the load {rss0:,.0f} MB); {rate:,.0f} MB/s")
    print(f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
