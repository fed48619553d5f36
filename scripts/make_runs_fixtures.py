"""Record the several-runs-per-side fixtures of `perfview diff --baseline … --candidate …`.

One small pipeline script (load, parse, transform, render, checksum) profiles itself with the
real `cProfile.Profile` many times, timed in process CPU time (`time.process_time`) so that
the other jobs of a shared machine do not drown the effect. Each run draws its own noise:
every function's amount of work is scaled by a seeded random factor within ±`NOISE` (busy
loops of varying length, no sleeps), on top of the machine's own timing noise. Variants:

- `a`: the baseline, recorded 10 times (runs 1-5 are the A side; 6-10 serve an A/A test).
- `b`: `parse` (about a quarter of the run) does 30 % more work.
- `c`: `checksum` (about 3 % of the run) does 30 % more work: a small share still counts.

Runs are interleaved (a1, b1, c1, a6, a2, …) so a slow spell of the machine hits every variant
alike. Outputs go to tests/data/diff/runs/{variant}_{i}.prof. Usage:

    python3 scripts/make_runs_fixtures.py [--out tests/data/diff/runs] [--runs 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOISE = 0.03  # ± share of each function's work drawn per run
EFFECT = 1.30  # the slowed function's work in the candidate

WORKLOAD = '''\
"""perfview runs fixture: python pipeline.py VARIANT SEED OUT.prof (variant a, b or c)."""
import cProfile
import random
import sys
import time

NOISE, EFFECT = {noise}, {effect}


def load(n):
    total = 0
    for i in range(n):
        total += (i * 7) % 13
    return total


def parse(n):
    total = 0
    for i in range(n):
        total += (i * 5) % 11
    return total


def transform(n):
    total = 0
    for i in range(n):
        total += (i * 3) % 17
    return total


def render(n):
    total = 0
    for i in range(n):
        total += (i * 9) % 19
    return total


def checksum(n):
    total = 0
    for i in range(n):
        total += (i * 11) % 23
    return total


def pipeline(work):
    for _ in range(5):
        load(work["load"])
        parse(work["parse"])
        transform(work["transform"])
        render(work["render"])
        checksum(work["checksum"])


if __name__ == "__main__":
    variant, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    work = {{"load": 60_000, "parse": 60_000, "transform": 75_000, "render": 40_000,
             "checksum": 8_000}}
    slowed = {{"b": "parse", "c": "checksum"}}.get(variant)
    work = {{name: int(n * rng.uniform(1 - NOISE, 1 + NOISE) * (EFFECT if name == slowed else 1))
             for name, n in work.items()}}
    # CPU time, not wall time: a shared machine's scheduling would drown a 30 % effect.
    profiler = cProfile.Profile(time.process_time)
    profiler.runcall(pipeline, work)
    profiler.dump_stats(out)
'''


def record(out: Path, runs: int) -> list[Path]:
    """Profile every variant `runs` times (the baseline twice as often); return the files."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="perfview-runs-") as tmp:
        script = Path(tmp) / "pipeline.py"
        script.write_text(WORKLOAD.format(noise=NOISE, effect=EFFECT))
        for i in range(1, runs + 1):
            for variant, number in (("a", i), ("b", i), ("c", i), ("a", runs + i)):
                prof = out / f"{variant}_{number}.prof"
                seed = 1000 * "abc".index(variant) + number
                argv = [sys.executable, str(script), variant, str(seed), str(prof)]
                subprocess.run(argv, cwd=tmp, check=True)
                written.append(prof)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "diff" / "runs")
    parser.add_argument("--runs", type=int, default=5, help="runs per side (default 5)")
    args = parser.parse_args(argv)
    for path in record(args.out, args.runs):
        print(f"{path.name}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
