#!/usr/bin/env python3
"""Load-time benchmark: perfview's trace loader on big synthetic kineto traces.

    python scripts/bench_load.py [--sizes 100,500] [--source FILE] [--repeat 3] [--workdir DIR]

Builds a trace of N MB by replicating a real one (default: the resnet50 kineto sample) with
every copy shifted in time past the previous one, and its correlation / External id / flow ids
offset, so the result is valid kineto JSON that looks like a longer run. Each measurement loads
the file in a FRESH child process (so peak RSS is that load's own, read from
`resource.getrusage(RUSAGE_SELF).ru_maxrss` in the child) and reports the median time.
Side by side, on the same file and the same way: HTA's trace parser (PyPI `traceinsight`,
`pip install perfview[bench]`; skipped when absent) and a `json.load` + `pd.DataFrame(events)`
baseline. perfview is measured with its parsed-column cache off (a cold parse), and then the
reopen through the cache is timed separately (`reopen s`).

Not part of CI: it takes minutes and gigabytes at 500 MB; the machine's cores are shared.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))
DEFAULT_SOURCE = SAMPLES / "kineto_gpu" / "kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
MB = 1_000_000

# Child programs: time only the load itself (imports are excluded), report peak RSS of the child.
CHILD_PERFVIEW = """
import json, resource, sys, time
from perfview.loaders import FRESH, load
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
bundle = load(sys.argv[1], options=FRESH)
seconds = time.perf_counter() - t0
events = bundle.counts.get("events") or sum(bundle.counts.values())
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "events": events, "rss_mb": rss, "base_mb": base}))
"""
# The same, with the compiled scanner's code loaded before the clock starts: numba's import
# and JIT start-up (~0.35 s, once per process; the window pays it at start-up) left out.
CHILD_PERFVIEW_WARM = CHILD_PERFVIEW.replace(
    "from perfview.loaders import FRESH, load\n",
    "from perfview.loaders import FRESH, load\n"
    "from perfview.loaders.trace.scan import parallel\nparallel.warm()\n",
)
assert CHILD_PERFVIEW_WARM != CHILD_PERFVIEW
CHILD_BASELINE = """
import json, resource, sys, time
import pandas as pd
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    data = json.load(fh)
events = data["traceEvents"] if isinstance(data, dict) else data
frame = pd.DataFrame(events)
seconds = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "events": len(frame), "rss_mb": rss}))
"""

CHILD_REOPEN = """
import json, resource, sys, time
from perfview.loaders import cache, load
bundle = load(sys.argv[1])  # fills the cache when it is empty (PERFVIEW_CACHE_DIR)
cache.flush()
t0 = time.perf_counter()
bundle = load(sys.argv[1])
seconds = time.perf_counter() - t0
events = bundle.counts.get("events") or sum(bundle.counts.values())
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "events": events, "rss_mb": rss}))
"""
CHILD_HTA = """
import json, logging, resource, sys, time
logging.disable(logging.WARNING)
from hta.common.trace_parser import parse_trace_dataframe
from hta.configs.parser_config import ParserConfig
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
meta, frame, symbols = parse_trace_dataframe(sys.argv[1], ParserConfig())
seconds = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "events": len(frame), "rss_mb": rss, "base_mb": base}))
"""

ID_ARGS = ("correlation", "External id", "external id")


def read_trace(path: Path) -> dict[str, Any]:
    opener: Any = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rb") as fh:
        data = json.load(fh)
    if isinstance(data, list):
        data = {"traceEvents": data}
    return data  # type: ignore[no-any-return]


def _num(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def shift_plan(events: list[dict[str, Any]]) -> tuple[float, int]:
    """Time step between copies (span + 10%) and the id offset that keeps ids unique."""
    starts = [t for e in events if (t := _num(e.get("ts"))) is not None]
    ends = [s + (_num(e.get("dur")) or 0) for e in events if (s := _num(e.get("ts"))) is not None]
    span = max(ends) - min(starts)
    max_id = 0
    for e in events:
        if (i := _num(e.get("id"))) is not None:
            max_id = max(max_id, int(i))
        args = e.get("args")
        if isinstance(args, dict):
            for key in ID_ARGS:
                if (i := _num(args.get(key))) is not None:
                    max_id = max(max_id, int(i))
    return math.ceil(span * 1.1) + 1, max_id + 1


def shifted_copy(events: list[dict[str, Any]], k: int, dt: float, id_step: int) -> list[Any]:
    """Copy k of the events: later in time by k*dt, ids offset by k*id_step, no metadata."""
    out = []
    for e in events:
        if e.get("ph") == "M":
            continue  # process/thread names once are enough
        e = dict(e)
        if (t := _num(e.get("ts"))) is not None:
            e["ts"] = t + k * dt
        if (i := _num(e.get("id"))) is not None:
            e["id"] = int(i) + k * id_step
        args = e.get("args")
        if isinstance(args, dict) and any(key in args for key in ID_ARGS):
            args = dict(args)
            for key in ID_ARGS:
                if (i := _num(args.get(key))) is not None:
                    args[key] = int(i) + k * id_step
            e["args"] = args
        out.append(e)
    return out


def _encode(value: Any) -> bytes:
    try:
        import msgspec

        return msgspec.json.encode(value)
    except ImportError:  # plain json is fine, only slower
        return json.dumps(value, separators=(",", ":")).encode()


def make_trace(source: Path, size_mb: float, dest: Path) -> Path:
    """Write a kineto trace of about `size_mb` MB (decimal) made of shifted copies of `source`."""
    data = read_trace(source)
    events = data.pop("traceEvents")
    dt, id_step = shift_plan(events)
    target = int(size_mb * MB)
    head = _encode(data)[:-1] + b',"traceEvents":[' if data else b'{"traceEvents":['
    written = len(head)
    with open(dest, "wb") as fh:
        fh.write(head)
        k = 0
        while written < target:
            copy = events if k == 0 else shifted_copy(events, k, dt, id_step)
            chunk = _encode(copy)[1:-1]
            keep = len(copy)
            for _ in range(8):  # events differ in size: shrink the share until it fits
                if written + len(chunk) <= target or keep <= 1:
                    break
                # Encode only whole events, so the file stays valid JSON.
                keep = max(1, int(keep * (target - written) / len(chunk)))
                chunk = _encode(copy[:keep])[1:-1]
            fh.write(b"," if k else b"")
            fh.write(chunk)
            written += len(chunk) + 1
            k += 1
        fh.write(b"]}")
    return dest


def measure(path: Path, child: str, env_extra: dict[str, str] | None = None) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(env_extra or {})
    proc = subprocess.run(
        [sys.executable, "-c", child, str(path)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child failed on {path}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


NAN = {"seconds": math.nan, "events": math.nan, "rss_mb": math.nan, "base_mb": math.nan}


def _prime(path: Path) -> None:
    """Read the file once so every contender starts with it in the page cache (this VM's
    memory monitor evicts idle file pages, which made a first run read from disk)."""
    with open(path, "rb") as fh:
        while fh.read(16 * MB):
            pass


def bench(
    path: Path, child: str, repeat: int, env_extra: dict[str, str] | None = None
) -> dict[str, float]:
    _prime(path)
    runs = [measure(path, child, env_extra) for _ in range(repeat)]
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "events": runs[0]["events"],
        "rss_mb": max(r["rss_mb"] for r in runs),
        # peak RSS before the clock started (interpreter, libraries, compiled code)
        "base_mb": min(r.get("base_mb", math.nan) for r in runs),
    }


def have_hta() -> bool:
    return importlib.util.find_spec("hta") is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500", help="trace sizes in MB, comma separated")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="trace to replicate")
    parser.add_argument("--repeat", type=int, default=3, help="loads per size (median time)")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) generated traces here")
    parser.add_argument("--no-baseline", action="store_true", help="skip json.load + DataFrame")
    parser.add_argument("--no-hta", action="store_true", help="skip HTA's parser")
    parser.add_argument("--hta-repeat", type=int, help="runs of HTA's parser (default --repeat)")
    parser.add_argument("--keep", action="store_true", help="keep generated traces (--workdir)")
    args = parser.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    if not args.source.exists():
        print(f"bench_load: source trace {args.source} not found", file=sys.stderr)
        return 2
    use_hta = not args.no_hta and have_hta()
    with tempfile.TemporaryDirectory(prefix="perfview-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"source: {args.source}  repeat: {args.repeat}  python: {sys.version.split()[0]}")
        print(f"cpus: {os.cpu_count()}  HTA parser: {'yes' if use_hta else 'not installed'}")
        print("cold: a fresh process (numba's start-up included); warm: its compiled code loaded")
        print("xHTA: HTA's seconds / perfview's cold seconds (warm: / warm seconds)")
        print("RSS: peak of the process (cold); +load: peak minus the RSS before the clock")
        print("     (perfview warm, HTA: its imports), over the file size")
        print(
            f"{'size MB':>8} {'events':>10} {'cold s':>7} {'warm s':>7} {'MB/s':>6}"
            f" {'RSS MB':>7} {'RSS/size':>8} {'+load':>5} {'reopen s':>8} | {'HTA s':>6}"
            f" {'HTA RSS':>7} {'+load':>5}"
            f" {'xHTA':>5} {'warm':>5} | {'json+DF s':>9} {'RSS MB':>7} {'xjson':>5}"
        )
        for size in sizes:
            path = workdir / f"bench_{size:g}MB.pt.trace.json"
            if not path.exists():
                t0 = time.perf_counter()
                make_trace(args.source, size, path)
                print(f"  (generated {path.name} in {time.perf_counter() - t0:.1f} s)")
            real_mb = path.stat().st_size / MB
            ours = bench(path, CHILD_PERFVIEW, args.repeat)
            warm = bench(path, CHILD_PERFVIEW_WARM, args.repeat)
            cache_env = {
                "PERFVIEW_CACHE_DIR": str(workdir / "cache"),
                "PERFVIEW_CACHE_MAX_MB": "8000",
            }
            reopen = bench(path, CHILD_REOPEN, args.repeat, cache_env)
            hta = bench(path, CHILD_HTA, args.hta_repeat or args.repeat) if use_hta else NAN
            base = NAN if args.no_baseline else bench(path, CHILD_BASELINE, args.repeat)
            print(
                f"{real_mb:8.1f} {int(ours['events']):10,d} {ours['seconds']:7.2f}"
                f" {warm['seconds']:7.2f} {real_mb / warm['seconds']:6.0f}"
                f" {ours['rss_mb']:7.0f} {ours['rss_mb'] / real_mb:8.2f}"
                f" {(warm['rss_mb'] - warm['base_mb']) / real_mb:5.2f}"
                f" {reopen['seconds']:8.2f} | {hta['seconds']:6.2f} {hta['rss_mb']:7.0f}"
                f" {(hta['rss_mb'] - hta['base_mb']) / real_mb:5.2f}"
                f" {hta['seconds'] / ours['seconds']:5.1f} {hta['seconds'] / warm['seconds']:5.1f}"
                f" | {base['seconds']:9.2f} {base['rss_mb']:7.0f}"
                f" {base['seconds'] / ours['seconds']:5.1f}",
                flush=True,
            )
            shutil.rmtree(workdir / "cache", ignore_errors=True)
            if not (args.keep and args.workdir):
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
