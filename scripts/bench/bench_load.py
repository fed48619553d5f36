#!/usr/bin/env python3
"""Load benchmark: perfview and HTA's parser on every trace shape at 100 MB, 500 MB and 1 GB.

    python scripts/bench/bench_load.py [--shapes resnet50,nccl,sampled,rocm,cpu-stack]
        [--sizes 100,500,1000] [--repeat 3] [--hta-repeat 3,1,1] [--workdir DIR] [--keep]
        [--markdown] [--save FILE.json] [--render FILE.json] [--reopen] [--baseline]

Each shape (scripts/bench/bench_replicate.py: the resnet50, NCCL, 128-rank-sampled and ROCm kineto
samples, and a CPU trace with Python stacks recorded here with `perfview record --mode torch
--with-stack`) is replicated to each size, and every file is measured in fresh child processes,
two ways for each side, so nobody has to guess which figure is which:

* whole process: `perfview summary FILE` (cache off) and a script that imports HTA and parses
  FILE with `hta.common.trace_parser.parse_trace_dataframe`: wall time from the parent's spawn
  to the child's exit (interpreter start, imports, numba's start-up, the parse, perfview's
  summary table, exit), CPU time and peak RSS of the child from `os.wait4`;
* load only: a timer inside the child around `perfview.loaders.load(FILE, options=FRESH)` (the
  compiled scanner's code loaded first) and around HTA's `parse_trace_dataframe` (the same HTA
  run as its whole-process figure: one child gives both).

Before each timed run the file is read once, so every run starts with it in the page cache.
Times are medians of --repeat runs (HTA: --hta-repeat, one figure or one per size, since HTA
takes about a minute per GB); RSS is the largest peak. The 1 GB goals of issue 20 are checked
on each row: summary ≥ 15× faster than HTA as whole processes, ≥ 300 MB/s as a whole process,
peak RSS ≤ 2× the file. The estimated total time is printed first and the time left after
each row. Not part of CI: the full run (--hta-repeat 3,1,1) takes roughly 20-40 minutes on 2
cores and HTA needs several GB at 1 GB; test the script itself with --sizes 20 --repeat 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_load_table as table  # scripts/bench/ is not a package
from bench_replicate import (  # noqa: F401  (DEFAULT_SOURCE, make_trace: bench_cache/query)
    DEFAULT_SOURCE,
    MB,
    ROOT,
    SHAPES,
    make_trace,
)

# Load only, perfview: the compiled scanner's code loaded before the clock (numba's import and
# JIT start-up, ~0.35 s once per process, are in the whole-process figure instead).
CHILD_PERFVIEW = """
import json, resource, sys, time
from perfview.loaders import FRESH, load
from perfview.loaders.trace.scan import parallel
parallel.warm()
t0 = time.perf_counter()
bundle = load(sys.argv[1], options=FRESH)
seconds = time.perf_counter() - t0
events = bundle.counts.get("events") or sum(bundle.counts.values())
print(json.dumps({"seconds": seconds, "events": events}))
"""
# HTA: the parser's own time inside the child; the parent times the whole process.
CHILD_HTA = """
import json, logging, sys, time
logging.disable(logging.WARNING)
from hta.common.trace_parser import parse_trace_dataframe
from hta.configs.parser_config import ParserConfig
t0 = time.perf_counter()
meta, frame, symbols = parse_trace_dataframe(sys.argv[1], ParserConfig())
print(json.dumps({"seconds": time.perf_counter() - t0, "events": len(frame)}))
"""
CHILD_BASELINE = """
import json, sys, time
import pandas as pd
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as fh:
    data = json.load(fh)
events = data["traceEvents"] if isinstance(data, dict) else data
frame = pd.DataFrame(events)
print(json.dumps({"seconds": time.perf_counter() - t0, "events": len(frame)}))
"""
CHILD_REOPEN = """
import json, sys, time
from perfview.loaders import load
from perfview.store import parsed_columns
bundle = load(sys.argv[1])  # fills the cache when it is empty (PERFVIEW_CACHE_DIR)
parsed_columns.flush()
t0 = time.perf_counter()
bundle = load(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""

TRAIN = "perfview record --mode torch --with-stack scripts/bench/bench_train_cpu.py 8"
# Rough costs for the up-front estimate (this 2-core machine): seconds per run = a + b * GB.
# HTA: ~66 s/GB on resnet50 (the README), more on the shapes with more events per MB.
EST = {"gen": (1.0, 30.0), "pv": (1.0, 3.5), "hta": (1.0, 100.0), "base": (1.0, 35.0)}


def _prime(path: Path) -> None:
    """Read the file once so the run starts with it in the page cache (this VM's memory
    monitor evicts idle file pages, which made a first run read from disk)."""
    with open(path, "rb") as fh:
        while fh.read(16 * MB):
            pass


def run_child(cmd: list[str], path: Path, env_extra: dict[str, str]) -> dict[str, Any]:
    """Run one fresh child on `path` (primed first): wall from spawn to exit, its CPU time and
    peak RSS (os.wait4), and the JSON its last stdout line holds, if any."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(env_extra)
    _prime(path)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([*cmd, str(path)], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise RuntimeError(f"exit {proc.returncode} on {path.name}: {last[-300:]}")
    result: dict[str, Any] = {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss * 1024 / MB,
    }
    lines = stdout.strip().splitlines()
    if lines and lines[-1].startswith("{"):
        result.update(json.loads(lines[-1]))
    return result


def bench(
    who: str, cmd: list[str], path: Path, repeat: int, env: dict[str, str]
) -> dict[str, float]:
    """Medians of `repeat` runs (RSS: the largest peak); empty for a contender that failed."""
    try:
        runs = [run_child(cmd, path, env) for _ in range(repeat)]
    except RuntimeError as exc:
        print(f"  ({who} failed, {exc}; its columns are blank)", flush=True)
        return {}
    keys = {k for r in runs for k, v in r.items() if isinstance(v, int | float)}
    med = {k: statistics.median(r.get(k, math.nan) for r in runs) for k in keys}
    med["rss_mb"] = max(r["rss_mb"] for r in runs)
    med["runs"] = repeat
    return med


def machine_facts() -> dict[str, Any]:
    model = ""
    with open("/proc/cpuinfo") as fh:
        model = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "")
    mem = 0.0
    with open("/proc/meminfo") as fh:
        mem = next((int(ln.split()[1]) / 1e6 for ln in fh if ln.startswith("MemTotal")), 0.0)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    versions = {}
    for mod, dist in (("numba", "numba"), ("msgspec", "msgspec"), ("hta", "traceinsight")):
        try:
            versions[mod] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[mod] = "absent"
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "usable cores": len(os.sched_getaffinity(0)),
        "memory GB": round(mem, 1),
        "python": platform.python_version(),
        "perfview commit": commit,
        **versions,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def estimate_s(size: float, repeat: int, hta_repeat: int, a: Any) -> float:
    """Seconds one row (a shape at a size) should take, from EST's rough per-run costs."""
    gb = size / 1000

    def cost(kind: str, runs: int) -> float:
        return runs * (EST[kind][0] + EST[kind][1] * gb)

    row = cost("gen", 1) + cost("pv", 2 * repeat) + cost("hta", hta_repeat if a.hta else 0)
    return row + cost("base", repeat if a.baseline else 0) + cost("pv", 2 * repeat * a.reopen)


def generate(shape: str, size: float, path: Path) -> dict[str, Any]:
    """Write the replica in a child process: Linux starts a child's peak RSS at its parent's
    RSS when it forks, so this process must stay small for the children's peaks to be theirs
    (a 35 MB source held as dicts here would have set every child's floor at ~260 MB)."""
    script = str(Path(__file__).resolve().parent / "bench_replicate.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, script, shape, f"{size:g}", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure_row(shape: str, size: float, a: Any, hta_repeat: int) -> dict[str, Any]:
    """Generate (or reuse) one replica and measure every contender on it."""
    path = a.workdir / f"{shape}_{size:g}MB.pt.trace.json"
    meta_path = path.with_suffix(".replica.json")
    if not path.exists() or not meta_path.exists():
        t0 = time.perf_counter()
        meta_path.write_text(json.dumps(generate(shape, size, path)))
        print(f"  (generated {path.name} in {time.perf_counter() - t0:.1f} s)", flush=True)
    meta = json.loads(meta_path.read_text())
    off = {"PERFVIEW_CACHE_MAX_MB": "0", "PERFVIEW_CACHE_DIR": str(a.workdir / "cache-off")}
    row: dict[str, Any] = {"shape": shape, "size": size, "file_mb": path.stat().st_size / MB}
    row.update(meta, load_before=os.getloadavg()[0])
    py = [sys.executable]
    row["pv_proc"] = bench(
        "perfview summary", [*py, "-m", "perfview", "summary"], path, a.repeat, off
    )
    row["pv_load"] = bench("perfview load", [*py, "-c", CHILD_PERFVIEW], path, a.repeat, off)
    if a.hta:
        row["hta"] = bench("HTA", [*py, "-c", CHILD_HTA], path, hta_repeat, {})
    if a.reopen:
        on = {"PERFVIEW_CACHE_MAX_MB": "8000", "PERFVIEW_CACHE_DIR": str(a.workdir / "cache")}
        row["reopen"] = bench("reopen", [*py, "-c", CHILD_REOPEN], path, a.repeat, on)
        shutil.rmtree(a.workdir / "cache", ignore_errors=True)
    if a.baseline:
        row["base"] = bench("json+DataFrame", [*py, "-c", CHILD_BASELINE], path, a.repeat, {})
    row["load_after"] = os.getloadavg()[0]
    if not a.keep:
        path.unlink()
        meta_path.unlink()
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument(
        "--shapes", default=",".join(SHAPES), help="comma separated: " + ",".join(SHAPES)
    )
    p.add_argument("--sizes", default="100,500,1000", help="replica sizes in MB, comma separated")
    p.add_argument("--repeat", type=int, default=3, help="runs per perfview figure (median)")
    p.add_argument("--hta-repeat", help="runs of HTA: one number, or one per size (3,1,1)")
    p.add_argument("--workdir", type=Path, help="generated traces go here (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep generated traces (with --workdir)")
    p.add_argument("--no-hta", dest="hta", action="store_false", help="skip HTA's parser")
    p.add_argument("--reopen", action="store_true", help="also time a reopen through the cache")
    p.add_argument("--baseline", action="store_true", help="also time json.load + DataFrame")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.add_argument("--save", type=Path, help="write the figures to this JSON file")
    p.add_argument("--render", type=Path, help="print the tables of a --save file; run nothing")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.render:
        try:
            saved = json.loads(a.render.read_text())
            facts, rows = saved["facts"], saved["rows"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"bench_load: {a.render} is not a --save file ({exc})", file=sys.stderr)
            return 2
        table.print_all(facts, rows, markdown=True)
        return 0
    plan = make_plan(a)
    if isinstance(plan, str):
        print(f"bench_load: {plan}", file=sys.stderr)
        return 2
    a.hta = a.hta and importlib.util.find_spec("hta") is not None
    a.keep = a.keep and a.workdir is not None
    facts = machine_facts()
    estimates = [estimate_s(size, a.repeat, hrep, a) for _, size, hrep in plan]
    hta_runs = ",".join(dict.fromkeys(f"{size:g} MB: {h}" for _, size, h in plan))
    table.print_header(facts, a.repeat, hta_runs if a.hta else "not installed", sum(estimates))
    for name in dict.fromkeys(shape for shape, *_ in plan):
        src = SHAPES[name].source
        print(f"  {name:<9} {src.name if src else 'recorded: ' + TRAIN}: {SHAPES[name].about}")
    hta, pv, gen = EST["hta"][1], EST["pv"][1], EST["gen"][1]
    costs = f"HTA ~{hta:.0f} s/GB, perfview ~{pv:.1f} s/GB, replica ~{gen:.0f} s/GB"
    print(f"  (from rough costs per run: {costs})")
    rows = run_plan(a, plan, estimates, facts)
    if a.markdown:
        table.print_markdown(facts, rows)
    return 0


def make_plan(a: argparse.Namespace) -> list[tuple[str, float, int]] | str:
    """(shape, size, HTA runs) in the order they run (small sizes first), or what is wrong."""
    shapes = [s.strip() for s in a.shapes.split(",") if s.strip()]
    sizes = [float(s) for s in a.sizes.split(",") if s.strip()]
    if unknown := [s for s in shapes if s not in SHAPES]:
        return f"unknown shape {unknown[0]!r} (known: {', '.join(SHAPES)})"
    if missing := [s for s in shapes if (src := SHAPES[s].source) and not src.exists()]:
        return f"the {missing[0]} sample is absent ({SHAPES[missing[0]].source})"
    hrep = [int(x) for x in (a.hta_repeat or str(a.repeat)).split(",")]
    hrep = hrep * len(sizes) if len(hrep) == 1 else hrep
    if len(hrep) != len(sizes):
        return "--hta-repeat takes one number or one per size"
    return [(shape, size, h) for size, h in zip(sizes, hrep, strict=True) for shape in shapes]


def run_plan(
    a: argparse.Namespace,
    plan: list[tuple[str, float, int]],
    estimates: list[float],
    facts: dict[str, Any],
) -> list[dict[str, Any]]:
    """Measure every row, printing each as it ends with the time left (the estimate scaled
    by how the rows so far compared with theirs); --save rewrites its file after each row."""
    start, rows = time.perf_counter(), []
    with tempfile.TemporaryDirectory(prefix="perfview-bench-") as tmp:
        a.workdir = a.workdir or Path(tmp)
        a.workdir.mkdir(parents=True, exist_ok=True)
        for i, (shape, size, hrep) in enumerate(plan):
            try:
                rows.append(measure_row(shape, size, a, hrep))
            except RuntimeError as exc:  # the CPU trace could not be recorded (no torch)
                print(f"  ({shape} skipped: {str(exc).splitlines()[0]})", flush=True)
                continue
            table.print_row(rows[-1], first=len(rows) == 1)
            spent = time.perf_counter() - start
            left = sum(estimates[i + 1 :]) * spent / max(sum(estimates[: i + 1]), 1e-9)
            if i + 1 < len(plan):
                print(f"  ({spent / 60:.1f} min so far, ~{left / 60:.0f} min left)", flush=True)
            if a.save:
                a.save.write_text(json.dumps({"facts": facts, "rows": rows}, indent=1))
    facts["total minutes"] = round((time.perf_counter() - start) / 60, 1)
    # every child's peak RSS starts at this process's RSS when it forked (Linux keeps the
    # forking image's high-water mark through exec): small here, so the peaks are the children's
    facts["bench parent peak RSS MB"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    print(f"\ntotal: {facts['total minutes']} min (estimated {sum(estimates) / 60:.0f} min)")
    if a.save:
        a.save.write_text(json.dumps({"facts": facts, "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    sys.exit(main())
