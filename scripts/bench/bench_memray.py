"""Time to first view for a big memray capture: perfview's own reader, memray's reader, and
memray's own reporters side by side.

    python scripts/bench/bench_memray.py CAPTURE [--repeat 3] [--memray-reader] [--tools]
    python scripts/bench/bench_memray.py --make OUT.bin [--steps 30000000] [--compress]

--make records a capture of PROGRAM (`memray run --trace-python-allocators`, every small
Python object's allocation and free, ~8.5 records per step; `--no-compress` unless
--compress): 30M steps give ~254M records and ~1 GB raw (~40 MB LZ4) in ~25 s.

Rows, each a fresh process (wall and CPU seconds, children's user + system), medians of
--repeat runs:
- `perfview summary --view allocations` whole process (start, load, first table), default
  reader choice (perfview's own reader for memray 1.19/1.20 captures);
- load only, perfview's own reader: `read_capture(reader="own")` inside the process;
- load only, through memray's FileReader (--memray-reader; minutes on big captures, once);
- `memray flamegraph` and `memray stats` of the installed memray (--tools; once each).
The machine is shared: CPU seconds are the steadier figure. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """\
import sys

keep = []


def make_strings(n, base):
    s = None
    for i in range(n):
        s = str(base + i)
        if i % 4096 == 0:
            keep.append(s)
    return s


def make_lists(n):
    acc = []
    for i in range(n):
        acc.append(i * 3)
        if len(acc) > 512:
            acc = []
    return acc


def main(steps):
    chunk = 100_000
    for k in range(0, steps, chunk):
        if (k // chunk) % 2:
            make_lists(chunk)
        else:
            make_strings(chunk, k)


main(int(sys.argv[1]))
"""
LOAD = """\
import sys, time
from perfview.loaders import memray
t = time.perf_counter()
cap = memray.read_capture(sys.argv[1], reader=sys.argv[2])
print(f"{time.perf_counter() - t:.3f} {cap.meta['records']} {cap.meta['peak_bytes']}")
"""


def _timed(cmd: list[str], timeout: float) -> tuple[float, float, str]:
    """Wall and CPU seconds (children) of one fresh process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()[-400:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout


def _row(label: str, runs: list[tuple[float, float, str]], extra: str = "") -> None:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    print(f"{label:<48} {wall:8.2f} s wall {cpu:8.2f} s CPU  (n={len(runs)}) {extra}")


def _load_rows(path: Path, reader: str, repeat: int, timeout: float) -> None:
    runs = [_timed([sys.executable, "-c", LOAD, str(path), reader], timeout) for _ in range(repeat)]
    inner = statistics.median(float(r[2].split()[0]) for r in runs)
    records, peak = runs[0][2].split()[1:3]
    _row(
        f"perfview process, load via {reader} reader",
        runs,
        f"load alone {inner:.2f} s; {int(records):,} records, peak {int(peak):,} B",
    )


def bench(path: Path, repeat: int, memray_reader: bool, tools: bool) -> None:
    size = path.stat().st_size
    print(f"{path} ({size / 1e6:,.0f} MB)")
    summary = [sys.executable, "-m", "perfview", "summary", "--view", "allocations", str(path)]
    _row("perfview summary --view allocations", [_timed(summary, 900) for _ in range(repeat)])
    _load_rows(path, "own", repeat, 900)
    if memray_reader:
        _load_rows(path, "memray", 1, 3600)
    if tools:
        with tempfile.TemporaryDirectory() as tmp:
            html = Path(tmp) / "flame.html"
            flame = [sys.executable, "-m", "memray", "flamegraph", "-f", "-o", str(html), str(path)]
            _row("memray flamegraph", [_timed(flame, 3600)])
            _row(
                "memray stats", [_timed([sys.executable, "-m", "memray", "stats", str(path)], 3600)]
            )


def make(out: Path, steps: int, compress: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_alloc.py"
        script.write_text(PROGRAM)
        flags = ["--trace-python-allocators"] + ([] if compress else ["--no-compress"])
        cmd = [sys.executable, "-m", "memray", "run", "-q", "-f", *flags, "-o", str(out)]
        wall, _cpu, _ = _timed([*cmd, str(script), str(steps)], 3600)
    print(f"recorded {out} ({out.stat().st_size / 1e6:,.0f} MB) in {wall:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path, nargs="?")
    parser.add_argument("--make", type=Path, help="record a capture to this path and stop")
    parser.add_argument("--steps", type=int, default=30_000_000)
    parser.add_argument("--compress", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memray-reader", action="store_true")
    parser.add_argument("--tools", action="store_true")
    args = parser.parse_args()
    if args.make:
        make(args.make, args.steps, args.compress)
    elif args.capture:
        bench(args.capture, args.repeat, args.memray_reader, args.tools)
    else:
        parser.error("a capture to time, or --make OUT.bin")


if __name__ == "__main__":
    main()
