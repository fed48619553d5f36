#!/usr/bin/env python3
"""The trace loader of two checkouts side by side: load seconds per path, same files, same run.

    python scripts/bench_trace_compare.py OLD_ROOT [NEW_ROOT] --files A.json,B.json
        [--modes scan,general,text] [--repeat 3] [--cold]

Each load runs in a fresh child process with the checkout first on PYTHONPATH and the
trace scanner's compiled code loaded before the clock starts (`--cold` leaves that in the
time), the parsed-column cache off. Runs alternate between the checkouts (old, new, old, …)
so a busy machine slows both alike; the medians of wall-clock and of CPU seconds (all the
process's threads: less sensitive to other load on a shared machine) are printed. Modes:

* scan: the default choice (the compiled scanner for files of 16 MB or more);
* general: the msgspec general path (`LoadOptions(compiled=False)`);
* text: the general path with every batch's numbers read from their JSON text (the typed
  reading turned off): the slower of its two readings, what odd files (quoted numbers) get.

Used to check a refactor of `perfview.loaders.trace` keeps its speed (see bench_load.py for
absolute figures against other parsers). Generate big inputs with bench_load.py --workdir.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
mode, cold = sys.argv[2], sys.argv[3] == "1"
from perfview.loaders import load
if not cold:
    try:
        from perfview.loaders.trace.scan import parallel
    except ImportError:  # a checkout from before perfview.loaders.trace
        from perfview.loaders.trace.scan import parallel as trace_parallel as parallel
    parallel.warm()
if mode == "text":
    try:
        from perfview.loaders.trace import general
        general._typed_batch = lambda *args: None
    except ImportError:
        from perfview.loaders import trace_columns
        trace_columns._fast_batch = lambda *args: False
t0, c0 = time.perf_counter(), time.process_time()
compiled = False if mode in ("general", "text") else None
try:  # the new checkout: the load service takes explicit options
    from perfview.loaders import LoadOptions
    try:
        options = LoadOptions(read_cache=False, write_cache=False, compiled=compiled)
    except TypeError:  # a checkout from before `compiled`: the environment chooses (below)
        options = LoadOptions(read_cache=False, write_cache=False)
    bundle = load(sys.argv[1], options=options)
except ImportError:  # the base checkout
    bundle = load(sys.argv[1], use_cache=False)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
import perfview
print(json.dumps({"seconds": seconds, "cpu": cpu, "events": bundle.counts["events"],
                  "root": perfview.__file__}))
"""


def run(root: Path, path: Path, mode: str, cold: bool) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(root), PERFVIEW_CACHE_MAX_MB="0")
    old_switch = "PERFVIEW_TRACE_SCANNER"  # how checkouts from before `compiled` chose
    env.pop(old_switch, None)
    if mode in ("general", "text"):
        env[old_switch] = "0"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode, "1" if cold else "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,  # `python -c` puts the working directory first on sys.path
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{root} failed on {path}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=ROOT)
    parser.add_argument("--files", required=True, help="trace files, comma separated")
    parser.add_argument("--modes", default="scan,general,text")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="time numba's start-up too")
    args = parser.parse_args(argv)
    roots = {"old": args.old.resolve(), "new": args.new.resolve()}
    print(f"old: {roots['old']}\nnew: {roots['new']}\nrepeat: {args.repeat}  cold: {args.cold}")
    print("medians of the runs (best wall in brackets); runs: old/new wall seconds in order")
    print(
        f"{'file':>22} {'MB':>5} {'mode':>7} {'old s':>12} {'new s':>12} {'new/old':>7}"
        f" {'old cpu':>7} {'new cpu':>7} {'new/old':>7}  runs"
    )
    for name in args.files.split(","):
        path = Path(name)
        for mode in args.modes.split(","):
            times: dict[str, list[float]] = {"old": [], "new": []}
            cpus: dict[str, list[float]] = {"old": [], "new": []}
            events = {}
            for _ in range(args.repeat):
                for label, root in roots.items():
                    got = run(root, path, mode, args.cold)
                    assert str(got["root"]).startswith(str(root)), got["root"]
                    times[label].append(got["seconds"])
                    cpus[label].append(got["cpu"])
                    events[label] = got["events"]
            if events["old"] != events["new"]:
                print(f"  events differ: {events}")
            old, new = (statistics.median(times[k]) for k in ("old", "new"))
            old_cpu, new_cpu = (statistics.median(cpus[k]) for k in ("old", "new"))
            runs = " ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(*times.values(), strict=True))
            print(
                f"{path.name[-22:]:>22} {path.stat().st_size / 1e6:5.0f} {mode:>7}"
                f" {old:5.2f} ({min(times['old']):4.2f}) {new:5.2f} ({min(times['new']):4.2f})"
                f" {new / old:7.2f} {old_cpu:7.2f} {new_cpu:7.2f} {new_cpu / old_cpu:7.2f}  {runs}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
