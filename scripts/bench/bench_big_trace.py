#!/usr/bin/env python3
"""`perfview summary` of a big trace as a whole process: wall time, peak RSS and the RSS curve.

    python scripts/bench/bench_big_trace.py --size-gb 10 [--shape nccl] [--keep] [--repeat 3]
    python scripts/bench/bench_big_trace.py --file BIG.json          # an existing trace
    python scripts/bench/bench_big_trace.py --file BIG.json --repo /work/main   # other code

Makes the trace with the replicator (`bench_replicate.py`, in --dir, deleted afterwards unless
--keep or --file), reads it once (page cache warm, as `docs/performance.md`'s figures), then
runs `python -m perfview summary FILE --view VIEW` from --repo (this checkout by default: the
code compared is the folder the process starts in) and samples the child's RSS (psutil, its
children included) every --every seconds. Prints one line per run (wall; CPU seconds, user +
system, the steadier figure on a shared machine; the peak RSS, the kernel's, and its ratio to
the file; the 1-minute load average before and after: on 2 cores above ~1 others ran) and
writes the curve of the last run to --csv (seconds, RSS MB). The
parsed-trace cache is off (a cold parse) unless --cache; the pre-open memory estimate is lifted
(`PERFVIEW_MEMORY_LIMIT`) so what is measured is the load, not the refusal. A benchmark, not a
test: nothing here is timed in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
REPLICATE = Path(__file__).resolve().parent / "bench_replicate.py"
MB = 1_000_000


def make(shape: str, size_gb: float, folder: Path) -> Path:
    out = folder / f"{shape}_{size_gb:g}GB.json"
    if not out.exists():
        subprocess.run(
            [sys.executable, str(REPLICATE), shape, str(size_gb * 1000), str(out)], check=True
        )
    return out


def warm(path: Path) -> None:
    """Read the file once so the run measures perfview, not the disk (where it fits)."""
    with open(path, "rb") as fh:
        while fh.read(64 << 20):
            pass


def rss(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def run(
    path: Path, repo: Path, view: str, every: float, cache: bool
) -> tuple[float, float, int, list[tuple[float, int]], int]:
    env = dict(os.environ, PERFVIEW_MEMORY_LIMIT=str(10**15))
    env.pop("PYTHONPATH", None)  # the code run is the one in `repo` (cwd wins)
    if not cache:
        env["PERFVIEW_CACHE_MAX_MB"] = "0"
    cmd = [sys.executable, "-m", "perfview", "summary", str(path), "--view", view]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.DEVNULL)
    proc = psutil.Process(child.pid)
    curve: list[tuple[float, int]] = []
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        with contextlib.suppress(psutil.Error):
            curve.append((time.perf_counter() - t0, rss(proc)))
        time.sleep(every)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    # the kernel's own peak (KiB on Linux), never missed between two samples
    peak = max(max((r for _, r in curve), default=0), usage.ru_maxrss * 1024)
    return wall, usage.ru_utime + usage.ru_stime, peak, curve, child.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--shape", default="nccl")
    parser.add_argument("--file", type=Path, help="an existing trace instead of a replica")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--keep", action="store_true", help="keep the generated trace")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose code runs")
    parser.add_argument("--view", default="ops")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--every", type=float, default=0.1, help="seconds between samples")
    parser.add_argument("--cache", action="store_true", help="leave the parsed-trace cache on")
    parser.add_argument("--csv", type=Path, default=Path("rss_curve.csv"))
    args = parser.parse_args(argv)
    path = args.file or make(args.shape, args.size_gb, args.dir)
    size = path.stat().st_size
    try:
        warm(path)
        walls, peaks = [], []
        for k in range(args.repeat):
            before = os.getloadavg()[0]
            wall, cpu, peak, curve, rc = run(path, args.repo, args.view, args.every, args.cache)
            after = os.getloadavg()[0]
            walls.append(wall)
            peaks.append(peak)
            print(
                f"{path.name} ({size / MB:,.0f} MB) code {args.repo}: run {k + 1} rc {rc} "
                f"wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {peak / MB:,.0f} MB "
                f"({peak / size:.2f}x the file), load average {before:.1f} -> {after:.1f}",
                flush=True,
            )
            with open(args.csv, "w", newline="") as fh:
                out = csv.writer(fh)
                out.writerow(["seconds", "rss_mb"])
                out.writerows((f"{t:.2f}", f"{r / MB:.0f}") for t, r in curve)
        if args.repeat > 1:
            print(
                f"median wall {statistics.median(walls):.2f} s, "
                f"median peak RSS {statistics.median(peaks) / MB:,.0f} MB"
            )
        print(f"RSS curve of the last run: {args.csv}")
    finally:
        if args.file is None and not args.keep:
            path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
