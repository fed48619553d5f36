"""Time to first view of big CUDA memory snapshots: the compiled walker beside the unpickler.

    python scripts/bench/bench_cuda_snapshot.py [--mb 188 1000] [--runs 3] [--out /work/big/x]
        [--keep]

For each size a `_dump_snapshot()`-style pickle is made by replicating the real ftcourse
sample (`bench_memory_formats.make_snapshot`: fresh entry dicts and frames lists per replica,
addresses shifted, frame dicts shared as torch's pickles share them). Every row is a fresh
process, run `--runs` times; the median is printed (wall and CPU seconds, children included):

* perfview load only (`cuda_snapshot.load`, imports included), new path (compiled walker)
  and old path (restricted unpickler; the walker switched off), with the load call alone;
* `perfview summary FILE --view segments` (whole process, cache off), new and old;
* with --gui: the window opened on FILE with its first page drawn (`--screenshot`);
* plain `pickle.load` (no columns, nothing shown: what any unpickling reader pays first);
* torch's `python -m torch.cuda._memory_viz stats FILE`.

The machine may be shared: CPU seconds are the steadier figure. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bench"))
sys.path.insert(0, str(ROOT))

LOAD = """\
import sys, time
from pathlib import Path
t0, c0 = time.perf_counter(), time.process_time()
from perfview.loaders import cuda_snapshot
compiled = False if sys.argv[2] == "old" else None  # old: the restricted unpickler only
t1, c1 = time.perf_counter(), time.process_time()
bundle = cuda_snapshot.load(Path(sys.argv[1]), compiled=compiled)
t2, c2 = time.perf_counter(), time.process_time()
print(t2 - t1, c2 - c1, bundle.counts["trace_entries"])
"""
CLI = """\
import sys
import dataclasses
from perfview.loaders.cuda_snapshot import loader
if sys.argv[1] == "old":  # the CLI states no choice: the walker's threshold out of reach
    loader.WALKER = dataclasses.replace(loader.WALKER, min_bytes=1 << 62)
from perfview.cli import main
sys.argv = ["perfview", *sys.argv[2:]]
sys.exit(main())
"""
PICKLE = "import pickle, sys\nwith open(sys.argv[1], 'rb') as fh:\n    pickle.load(fh)\n"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFVIEW_CACHE_MAX_MB": "0"}
    c0, t0 = _children_cpu(), time.perf_counter()
    out = subprocess.run(
        argv, check=True, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env
    )
    return time.perf_counter() - t0, _children_cpu() - c0, out.stdout


def _median_row(label: str, argv: list[str], runs: int, inner: bool = False) -> None:
    walls, cpus, inner_walls, inner_cpus = [], [], [], []
    for _ in range(runs):
        wall, cpu, out = _run(argv)
        walls.append(wall)
        cpus.append(cpu)
        if inner:
            w, c, _n = out.split()
            inner_walls.append(float(w))
            inner_cpus.append(float(c))
    med = statistics.median
    extra = ""
    if inner:
        extra = f"   (load() call {med(inner_walls):6.2f} s wall {med(inner_cpus):6.2f} s CPU)"
    print(f"  {label:<44} {med(walls):7.2f} s wall {med(cpus):7.2f} s CPU{extra}", flush=True)


def bench(path: Path, runs: int, gui: bool) -> None:
    py = sys.executable
    for way in ("new", "old"):
        _median_row(f"perfview load only, {way} path (process)", [py, "-c", LOAD, str(path), way],
                    runs, inner=True)  # fmt: skip
    for way in ("new", "old"):
        argv = [py, "-c", CLI, way, "summary", str(path), "--view", "segments"]
        _median_row(f"perfview summary --view segments, {way} path", argv, runs)
    shot = str(path.with_suffix(".png"))
    for way in ("new", "old") if gui else ():
        _median_row(f"perfview GUI, first page drawn, {way} path",
                    [py, "-c", CLI, way, "--screenshot", shot, str(path)], runs)  # fmt: skip
    _median_row("plain pickle.load (process)", [py, "-c", PICKLE, str(path)], runs)
    viz = [py, "-W", "ignore", "-m", "torch.cuda._memory_viz", "stats", str(path)]
    _median_row("torch _memory_viz stats (process)", viz, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[188.0, 1000.0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/perfview-bench-cuda"))
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--gui", action="store_true", help="also time the window's first page")
    ns = parser.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    from bench_memory_formats import make_snapshot

    try:
        for mb in ns.mb:
            path = ns.out / f"snapshot_{mb:.0f}mb.pickle"
            if not path.exists():
                make_snapshot(path, mb)
            print(f"CUDA snapshot {path.stat().st_size / 1e6:.0f} MB, median of {ns.runs} runs:")
            bench(path, ns.runs, ns.gui)
    finally:
        if not ns.keep:
            shutil.rmtree(ns.out, ignore_errors=True)


if __name__ == "__main__":
    main()
