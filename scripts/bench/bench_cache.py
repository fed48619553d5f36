#!/usr/bin/env python3
"""What trusting nothing costs: reopening a big trace from the cache with checksums on vs off.

    python scripts/bench/bench_cache.py [--sizes 100,300] [--repeat 3] [--workdir DIR]

For each size, a kineto trace is generated the way `scripts/bench/bench_load.py` does
(shifted copies of the resnet50 sample), parsed once to fill a private cache, and then:

* reopen s: `perfview.loaders.load(FILE)` in a FRESH process (imports excluded, median of
  `--repeat`), served from the cache, with `PERFVIEW_CACHE_VERIFY=1` (every column's xxHash3
  checked, the default) and `=0` side by side; `+verify` is the difference.
* In this process, on the same entry: `get` with and without verification, the hashing alone
  (every file of the entry read into fresh memory and hashed: the read dominates), the
  schema's invariants alone (`schema.validate_tables` on the tables, paid on every load: a
  parse's too) against the cold parse (`trace.load`), and `put` (writing the entry
  durably: fsync included).

The file is read once before timing so every contender starts with it in the page cache.
Not part of CI; the machine's cores are shared, so figures are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "bench"))

from bench_load import DEFAULT_SOURCE, MB, make_trace  # noqa: E402

CHILD_REOPEN = """
import json, sys, time
from perfview.loaders import load
t0 = time.perf_counter()
bundle = load(sys.argv[1])
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "warnings": bundle.warnings}))
"""


def _reopen_once(path: Path, env: dict[str, str]) -> float:
    env = dict(os.environ, **env)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD_REOPEN, str(path)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not [w for w in out["warnings"] if "cached copy" in w], out["warnings"]
    return float(out["seconds"])


def reopen(path: Path, repeat: int) -> tuple[float, float]:
    """Median reopen seconds with verification on and off, runs alternating (the machine's
    load drifts; alternating keeps the drift out of the difference)."""
    on, off = [], []
    for _ in range(repeat):
        on.append(_reopen_once(path, {"PERFVIEW_CACHE_VERIFY": "1"}))
        off.append(_reopen_once(path, {"PERFVIEW_CACHE_VERIFY": "0"}))
    return statistics.median(on), statistics.median(off)


def timed(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def hash_entry(entry: Path) -> None:
    from perfview.store import artifacts

    for file in entry.iterdir():
        with open(file, "rb") as fh:
            artifacts.digest(fh.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300", help="trace sizes in MB, comma separated")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="trace to replicate")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (median)")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) generated traces here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perfview-bench-cache-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        cache_dir = workdir / "cache"
        os.environ.update(PERFVIEW_CACHE_DIR=str(cache_dir), PERFVIEW_CACHE_MAX_MB="8000")
        from perfview.core.model import schema
        from perfview.loaders import load, trace
        from perfview.store import parsed_columns

        print(f"repeat: {args.repeat}  cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
        print("reopen: fresh process, from the cache; get: in-process; all in seconds")
        print(
            f"{'size MB':>7} {'entry MB':>8} {'parse s':>7} {'put s':>6} |"
            f" {'reopen on':>9} {'off':>6} {'+verify':>7} | {'get on':>6} {'off':>6}"
            f" {'read+hash':>9} | {'invariants':>10} {'of parse':>8}"
        )
        for size in [float(s) for s in args.sizes.split(",") if s.strip()]:
            path = workdir / f"bench_{size:g}MB.pt.trace.json"
            if not path.exists():
                make_trace(args.source, size, path)
            path.read_bytes()  # into the page cache
            shutil.rmtree(cache_dir, ignore_errors=True)
            t0 = time.perf_counter()
            bundle = trace.load(path)
            parse = time.perf_counter() - t0
            put = timed(lambda b=bundle, p=path: parsed_columns.put(p, b), 1)
            entry = cache_dir / parsed_columns.key(path)
            entry_mb = sum(f.stat().st_size for f in entry.iterdir()) / MB
            on, off = reopen(path, args.repeat)
            os.environ["PERFVIEW_CACHE_VERIFY"] = "1"
            get_on = timed(lambda p=path: parsed_columns.get(p), args.repeat)
            os.environ["PERFVIEW_CACHE_VERIFY"] = "0"
            get_off = timed(lambda p=path: parsed_columns.get(p), args.repeat)
            del os.environ["PERFVIEW_CACHE_VERIFY"]
            hashing = timed(lambda e=entry: hash_entry(e), args.repeat)
            tl = bundle.timeline
            assert tl is not None
            frames = {name: getattr(tl, name) for name in schema.TIMELINE_SCHEMAS}
            inv = timed(lambda f=frames: schema.validate_tables(f), max(args.repeat, 5))
            assert load(path).warnings == bundle.warnings
            print(
                f"{path.stat().st_size / MB:7.0f} {entry_mb:8.0f} {parse:7.2f} {put:6.2f} |"
                f" {on:9.3f} {off:6.3f} {on - off:7.3f} | {get_on:6.3f} {get_off:6.3f}"
                f" {hashing:9.3f} | {inv * 1e3:8.1f}ms {inv / parse:8.2%}",
                flush=True,
            )
            del bundle, tl, frames
            shutil.rmtree(cache_dir, ignore_errors=True)
            if not args.workdir:
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
