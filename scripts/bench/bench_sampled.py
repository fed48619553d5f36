"""Open time of big sampled profiles: a 1M-line collapsed file and a ~100 MB speedscope file.

    python scripts/bench/bench_sampled.py [--lines 1000000] [--distinct 50000] [--mb 100]
                                    [--folder /tmp/perfview-bench] [--repeat 3] [--node]

The files are generated (deterministic seed) the way real ones look: stacks are random walks
down a call graph of a few thousand functions (so prefixes are shared), picked with a Zipf
law like real hot paths; the collapsed file repeats stacks line by line as Austin does, the
speedscope file has four threads of py-spy-style samples. Each figure is the median of
`--repeat` loads in a fresh process (`perfview.loaders.load`, no cache), so imports are not
counted but nothing is warm either. As a yardstick for the machine, the time to read the
collapsed file and scan its bytes once with numpy is printed too.

speedscope itself is not timed: its npm package (1.25.0) ships only the minified browser
bundle, with no importer a node script can call.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LOAD = """
import sys, time
from perfview.loaders import FRESH, load
t, c = time.perf_counter(), time.process_time()
b = load(sys.argv[1], options=FRESH)
dt, cpu = time.perf_counter() - t, time.process_time() - c
print(dt, cpu, b.counts, len(b.tree))
"""


def call_graph(rng: random.Random, n_funcs: int) -> tuple[list[str], list[list[int]]]:
    names = [f"f{i} (m{i % 97}.py:{10 + i % 500})" for i in range(n_funcs)]
    callees = [rng.sample(range(n_funcs), k=rng.randint(1, 6)) for _ in range(n_funcs)]
    return names, callees


def stacks(rng: random.Random, distinct: int, n_funcs: int = 3000) -> list[list[int]]:
    """`distinct` different stacks (lists of function ids), random walks from a few roots."""
    _names, callees = call_graph(rng, n_funcs)
    seen: set[tuple[int, ...]] = set()
    out: list[list[int]] = []
    while len(out) < distinct:
        depth = rng.randint(4, 24)
        stack = [rng.randrange(8)]
        while len(stack) < depth:
            stack.append(rng.choice(callees[stack[-1]]))
        key = tuple(stack)
        if key not in seen:
            seen.add(key)
            out.append(stack)
    return out


def zipf_picks(rng: random.Random, n: int, count: int) -> list[int]:
    weights = [1.0 / (i + 1) ** 0.8 for i in range(n)]
    return rng.choices(range(n), weights=weights, k=count)


def make_collapsed(path: Path, lines: int, distinct: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    names, _ = call_graph(random.Random(seed), 3000)
    all_stacks = stacks(rng, distinct)
    text = [";".join(names[f] for f in s) for s in all_stacks]
    with open(path, "w") as fh:
        fh.write("# austin: 3.6.0\n# mode: wall\n# interval: 100\n")
        for pick in zipf_picks(rng, distinct, lines):
            fh.write(f"P4242;T0:4242;{text[pick]} {rng.randint(90, 110)}\n")


def make_speedscope(path: Path, megabytes: float, seed: int = 2) -> None:
    rng = random.Random(seed)
    names, _ = call_graph(random.Random(seed), 3000)
    all_stacks = stacks(rng, 20_000)
    frames = [
        {"name": n.split(" ")[0], "file": n.split("(")[1].split(":")[0], "line": i, "col": None}
        for i, n in enumerate(names)
    ]
    per_sample = sum(len(str(s)) for s in all_stacks[:500]) / 500 + 6
    n_samples = int(megabytes * 1e6 / per_sample)
    profiles = []
    for t in range(4):
        picks = zipf_picks(rng, len(all_stacks), n_samples // 4)
        samples = [all_stacks[p] for p in picks]
        profiles.append({
            "type": "sampled", "name": f"Thread {t}", "unit": "seconds", "startValue": 0.0,
            "endValue": len(samples) * 0.01, "samples": samples, "weights": [0.01] * len(samples),
        })  # fmt: skip
    doc = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "profiles": profiles, "shared": {"frames": frames}, "activeProfileIndex": 0,
        "exporter": "bench_sampled", "name": "bench",
    }  # fmt: skip
    path.write_text(json.dumps(doc, separators=(",", ":")))


def time_perfview(path: Path, repeat: int) -> tuple[float, float, str]:
    """Median wall and CPU time of `repeat` fresh-process loads (on a shared machine the CPU
    time shows the work itself, the wall time also the waiting)."""
    walls: list[float] = []
    cpus: list[float] = []
    info = ""
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", LOAD, str(path)],
            capture_output=True, text=True, check=True, cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        seconds, cpu, info = out.stdout.strip().split(" ", 2)
        walls.append(float(seconds))
        cpus.append(float(cpu))
    return statistics.median(walls), statistics.median(cpus), info


def scan_seconds(path: Path) -> float:
    """What the machine needs just to read the file and look at every byte once (numpy)."""
    code = (
        "import sys,time,numpy as np;t=time.perf_counter();"
        "a=np.frombuffer(open(sys.argv[1],'rb').read(),np.uint8);int((a==10).sum());"
        "print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    return float(out.stdout.strip() or "nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--distinct", type=int, default=50_000)
    p.add_argument("--mb", type=float, default=100.0)
    p.add_argument("--folder", default="/tmp/perfview-bench")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    collapsed = folder / f"bench_{args.lines}_{args.distinct}.austin"
    speedscope = folder / f"bench_{int(args.mb)}mb.speedscope.json"
    if not collapsed.exists():
        t = time.perf_counter()
        make_collapsed(collapsed, args.lines, args.distinct)
        print(f"generated {collapsed} in {time.perf_counter() - t:.1f} s")
    if not speedscope.exists():
        t = time.perf_counter()
        make_speedscope(speedscope, args.mb)
        print(f"generated {speedscope} in {time.perf_counter() - t:.1f} s")
    print(
        f"yardstick: read + one numpy scan of the collapsed file: {scan_seconds(collapsed):.2f} s"
    )
    for path, kind in ((collapsed, "collapsed"), (speedscope, "speedscope")):
        size = path.stat().st_size / 1e6
        seconds, cpu, info = time_perfview(path, args.repeat)
        print(f"{path.name}: {size:.0f} MB")
        print(f"  perfview load ({kind})  {seconds:6.2f} s wall, {cpu:.2f} s CPU   {info}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
