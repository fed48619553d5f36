"""Benchmark multi-rank jobs: a generated job of N ranks, local workers vs one file vs Dask.

    python scripts/bench/bench_ranks.py [--ranks 16] [--copies 1] [--straggler 5] [--out DIR]
                                  [--template TRACE] [--no-cluster] [--keep]

The job is made from a real kineto trace (default: samples kineto_gpu/hta_nccl_data.json.gz,
~10 MB of JSON, rank 0 of an all-reduce job): every rank gets its own `distributedInfo.rank`,
a clock shifted by 7.3 s per rank (`baseTimeNanoseconds`, so ranks must be aligned at their
first ProfilerStep), a per-rank jitter (a clock up to ±0.05 % fast or slow, and each collective
reached up to 0.3 ms late) and one straggler rank that reaches every collective 2 ms late. The
other ranks' NCCL kernels wait for it: all kernels of one collective end together, as NCCL's
do. `--copies K`
repeats the trace K times inside each rank file (steps renumbered) to make bigger ranks:
16 ranks × 1 copy is ~140 MB (the default: 2 shared cores here), 64 × 6 is ~3.3 GB
(~52 MB per rank).

Figures (each measured in a fresh child process so peak RSS is its own):
- one file: the same events, all ranks, parsed as ONE trace (perfview.loaders.load): the peer;
- job, local: `open_job` with one worker process per core + every cross-rank view; reopen;
- job, serial: the same in one process (workers=1), to show the parallel gain;
- Dask LocalCluster with 1 and 2 worker processes: speed-up, efficiency, per-task overhead;
- whether the injected straggler is the worst rank of the `stragglers` view;
- a paper estimate for 1,024 ranks × 1 GB from the measured per-rank rates.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))
TEMPLATE = SAMPLES / "kineto_gpu" / "hta_nccl_data.json.gz"
BIG = 10_000_000  # id offset between copies, so correlation / flow ids stay unique
CLOCK_SHIFT_NS = 7_300_000_000
CLOCK_JITTER = 0.0005  # a rank's clock runs up to ±0.05 % fast or slow
ARRIVAL_JITTER_US = 300.0  # each rank reaches each collective up to 0.3 ms late
STRAGGLER_DELAY_US = 2_000.0  # the straggler: 2 ms more, at every collective


# ------------------------------------------------------------------------------ generation


def _read(path: Path) -> dict[str, Any]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _first_step_us(events: list[dict[str, Any]]) -> float:
    starts = [e["ts"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    return float(min(starts)) if starts else float(min(e.get("ts", 0) for e in events))


def _is_comm(event: dict[str, Any]) -> bool:
    return event.get("cat") == "kernel" and "nccl" in str(event.get("name", "")).lower()


@dataclass
class Plan:
    """How each rank differs: clock rate, collective arrival delay and per-collective jitter."""

    stretch: list[float]  # per rank, around the first step (clock-rate jitter)
    delay_us: list[float]  # per rank: the straggler's extra arrival delay
    jitter_us: list[list[float]]  # per rank, per collective (copy-major)


def _start(plan: Plan, r: int, t0: float, ts: float, col: int | None) -> float:
    start = t0 + (ts - t0) * plan.stretch[r]
    return start if col is None else start + plan.delay_us[r] + plan.jitter_us[r][col]


def _rank_events(events: list[dict[str, Any]], copies: int, plan: Plan, r: int) -> list[Any]:
    """Rank r's events: the template `copies` times, its clock and collectives as planned.

    Every rank's kernel of one collective ends at the same time (last arrival + the template's
    duration), as NCCL's do: an early rank's kernel waits for the last one.
    """
    timed = [e for e in events if isinstance(e.get("ts"), int | float)]
    t0 = _first_step_us(timed)
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)
    n_steps = len({e["name"] for e in timed if str(e.get("name", "")).startswith("ProfilerStep#")})
    n_comm = sum(1 for e in timed if _is_comm(e))
    out: list[Any] = [e for e in events if not isinstance(e.get("ts"), int | float)]
    for k in range(copies):
        i = 0
        for e in timed:
            new = dict(e)
            ts = e["ts"] + k * span
            if _is_comm(e):
                col = k * n_comm + i
                i += 1
                last = max(_start(plan, q, t0, ts, col) for q in range(len(plan.stretch)))
                start = _start(plan, r, t0, ts, col)
                new["ts"], new["dur"] = round(start, 3), round(last - start + e["dur"], 3)
            else:
                new["ts"] = round(_start(plan, r, t0, ts, None), 3)
                if "dur" in e:
                    new["dur"] = round(e["dur"] * plan.stretch[r], 3)
            _renumber(new, e, k, n_steps)
            if _is_comm(e) and isinstance(new.get("args"), dict):
                new["args"] = {**new["args"], "Group size": len(plan.stretch)}
            out.append(new)
    return out


def _renumber(new: dict[str, Any], e: dict[str, Any], k: int, n_steps: int) -> None:
    """Copy k's steps, flow ids and correlation ids made distinct from the other copies'."""
    if not k:
        return
    name = str(e.get("name", ""))
    if name.startswith("ProfilerStep#"):
        new["name"] = f"ProfilerStep#{int(name.split('#')[1]) + k * n_steps}"
    if isinstance(e.get("id"), int):
        new["id"] = e["id"] + k * BIG
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in ("correlation", "External id"):
            if isinstance(args.get(key), int):
                args[key] += k * BIG
        new["args"] = args


def make_job(
    folder: Path, template: Path, ranks: int, copies: int, straggler: int, seed: int = 0
) -> list[Path]:
    """Write `ranks` rank files into `folder` (see the module docstring); returns their paths."""
    doc = _read(template)
    events = doc["traceEvents"]
    rng = random.Random(seed)
    n_comm = copies * sum(1 for e in events if _is_comm(e))
    plan = Plan(
        stretch=[1.0 + rng.uniform(-CLOCK_JITTER, CLOCK_JITTER) for _ in range(ranks)],
        delay_us=[STRAGGLER_DELAY_US if r == straggler else 0.0 for r in range(ranks)],
        jitter_us=[
            [rng.uniform(0, ARRIVAL_JITTER_US) for _ in range(n_comm)] for _ in range(ranks)
        ],
    )
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(ranks):
        rank_doc = {k: v for k, v in doc.items() if k != "traceEvents"}
        info = dict(doc.get("distributedInfo") or {})
        info.update(rank=r, world_size=ranks)
        rank_doc["distributedInfo"] = info
        base = int(doc.get("baseTimeNanoseconds", 0))
        rank_doc["baseTimeNanoseconds"] = base + r * CLOCK_SHIFT_NS
        rank_doc["traceEvents"] = _rank_events(events, copies, plan, r)
        path = folder / f"host{r // 8}_rank{r}.pt.trace.json"
        path.write_text(json.dumps(rank_doc))
        paths.append(path)
    return paths


def make_one_file(paths: list[Path], target: Path) -> None:
    """All ranks' events in one trace (pids made unique per rank): the one-file peer."""
    merged: dict[str, Any] = {}
    events: list[dict[str, Any]] = []
    for r, path in enumerate(paths):
        doc = json.loads(path.read_text())
        if not merged:
            merged = {k: v for k, v in doc.items() if k != "traceEvents"}
        for e in doc["traceEvents"]:
            if isinstance(e.get("pid"), int):
                e["pid"] = e["pid"] + r * 1_000_000
            events.append(e)
    merged["traceEvents"] = events
    target.write_text(json.dumps(merged))


# ------------------------------------------------------------------------------ measuring


def child(code: str, *args: str) -> dict[str, Any]:
    """Run `code` in a fresh interpreter; it prints one JSON line; peak RSS of it and its kids.

    Each child gets an empty cache folder of its own: its open parses every rank, its reopen
    reads the reductions that open stored (`perfview.jobs.reductions`), and no child sees
    another's entries."""
    with tempfile.TemporaryDirectory(prefix="perfview-bench-cache-") as cache:
        env = dict(os.environ, PYTHONPATH=str(ROOT), PERFVIEW_CACHE_DIR=cache)
        env["PERFVIEW_CACHE_MAX_MB"] = "8000"
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
            check=False,
        )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


RSS = """
import resource
def rss_mb():
    # VmHWM: this process's own peak (ru_maxrss would carry the bench's peak across exec)
    with open("/proc/self/status") as f:
        me = next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, kids
"""

ONE_FILE = (
    RSS
    + """
import json, sys, time
from perfview.loaders import FRESH, load
t = time.perf_counter()
b = load(sys.argv[1], options=FRESH)
s = time.perf_counter() - t
me, kids = rss_mb()
print(json.dumps({"s": s, "events": len(b.timeline.events), "rss": me, "kids": kids}))
"""
)

JOB = (
    RSS
    + """
import json, sys, time
from perfview.jobs import open_job
from pathlib import Path as _P
from perfview.core.analysis.torch.job import document
from perfview.core.pages import summary
def job_tables(job):  # every job view, read through the page registry as the CLI does
    return {v: summary.summarize(document(job, _P('job')), v) for v in summary.views_for('job')}
workers = int(sys.argv[2])
times = []
for _ in range(2):  # open, then reopen
    t = time.perf_counter()
    job = open_job([sys.argv[1]], workers=workers)
    opened = time.perf_counter() - t
    tables = job_tables(job)
    times.append((opened, time.perf_counter() - t - opened))
import pickle
me, _ = rss_mb()
from perfview.jobs import local as pools  # the kept workers are not reaped: read their peaks
kids = 0.0
for pool in pools._POOLS.values():
    for pid in list(getattr(pool, "_processes", {}) or {}):
        with open(f"/proc/{pid}/status") as f:
            hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
        kids = max(kids, hwm)
worst = int(tables["stragglers"]["rank"].iloc[0])
print(json.dumps({"open": times[0][0], "views": times[0][1], "reopen": times[1][0],
                  "rss": me, "kids": kids, "worst": worst, "clock": job.clock,
                  "collectives": len(tables["collectives"]),
                  "matched_ranks": int(tables["collectives"]["ranks"].min()),
                  "reduction_bytes": len(pickle.dumps(job.ranks)) // max(1, len(job.ranks))}))
"""
)

CLUSTER = """
import json, sys, time, tempfile
from distributed import LocalCluster
from perfview.jobs import cluster, open_job
from pathlib import Path as _P
from perfview.core.analysis.torch.job import document
from perfview.core.pages import summary
def job_tables(job):  # every job view, read through the page registry as the CLI does
    return {v: summary.summarize(document(job, _P('job')), v) for v in summary.views_for('job')}
n = int(sys.argv[2])
with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                  dashboard_address=None) as lc:
    runs = []
    for _ in range(2):  # cold (workers import perfview, load the scanner), then warm
        t = time.perf_counter()
        job = cluster.open_job_on_cluster([sys.argv[1]], lc.scheduler_address,
                                          __import__("pathlib").Path(tempfile.mkdtemp()))
        runs.append(time.perf_counter() - t)
local = open_job([sys.argv[1]], workers=1)
same = all(t.equals(job_tables(local)[v]) for v, t in job_tables(job).items())
print(json.dumps({"cold": runs[0], "s": runs[1], "same": same}))
"""

TASK = """
import json, sys, time
from perfview.jobs.local import WORKER_COMPILED, job_files, rank_task
files = job_files([sys.argv[1]])
t = time.perf_counter()
for i, f in enumerate(files):
    rank_task(str(f), i, WORKER_COMPILED)  # as the Dask workers do
print(json.dumps({"s": time.perf_counter() - t, "n": len(files)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--straggler", type=int, default=5)
    parser.add_argument("--template", type=Path, default=TEMPLATE)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-cluster", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the generated job")
    args = parser.parse_args()
    if not args.template.exists():
        print(f"template {args.template} is absent", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="perfview-bench-ranks-"))
    job_dir = out / "job"
    t = time.perf_counter()
    paths = make_job(job_dir, args.template, args.ranks, args.copies, args.straggler)
    one = out / "one_file.json"
    make_one_file(paths, one)
    total_mb = sum(p.stat().st_size for p in paths) / 1e6
    print(
        f"generated {args.ranks} ranks × {total_mb / args.ranks:.1f} MB = {total_mb:.0f} MB "
        f"(+ one-file copy {one.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s"
    )
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    print(
        f"cores: {cores} (load average {load:.1f}: other work shares them, so parallel "
        f"figures are lower bounds); injected straggler: rank {args.straggler}\n"
    )
    try:
        report(args, job_dir, one, total_mb, cores)
    finally:
        if not args.keep:
            for p in [*job_dir.iterdir(), one]:
                p.unlink()
            job_dir.rmdir()
    return 0


def report(args: argparse.Namespace, job_dir: Path, one: Path, total_mb: float, cores: int) -> None:
    single = child(ONE_FILE, str(one))
    serial = child(JOB, str(job_dir), "1")
    local = child(JOB, str(job_dir), str(cores))
    print(f"{'what':44} {'time':>8} {'MB/s':>7} {'peak RSS (parent / largest child)':>34}")

    def row(what: str, s: float, rss: float, kids: float) -> None:
        print(f"{what:44} {s:7.2f}s {total_mb / s:7.1f} {rss:14.0f} MB / {kids:6.0f} MB")

    row("one file: parse the same bytes as one trace", single["s"], single["rss"], single["kids"])
    row("job, 1 process: open (parse+reduce)", serial["open"], serial["rss"], serial["kids"])
    row(f"job, {cores} worker processes: open", local["open"], local["rss"], local["kids"])
    row(f"job, {cores} worker processes: reopen", local["reopen"], local["rss"], local["kids"])
    print(f"{'all 5 cross-rank views on the open job':44} {local['views']:7.3f}s")
    print(f"\nclock: {local['clock']}")
    print(
        f"collectives matched: {local['collectives']} (every one on all "
        f"{args.ranks} ranks: {local['matched_ranks'] == args.ranks})"
    )
    found = local["worst"] == args.straggler
    print(f"straggler found: {found} (worst rank in the stragglers view: {local['worst']})")
    print(f"reduction sent back per rank: {local['reduction_bytes'] / 1e3:.1f} kB (pickled)")
    per_rank_s = serial["open"] / args.ranks
    if not args.no_cluster:
        tasks = child(TASK, str(job_dir))
        c1 = child(CLUSTER, str(job_dir), "1")
        c2 = child(CLUSTER, str(job_dir), "2")
        speedup = c1["s"] / c2["s"]
        print(
            f"\nDask LocalCluster, warm workers: 1 worker {c1['s']:.2f} s; 2 workers "
            f"{c2['s']:.2f} s; speed-up {speedup:.2f}x, efficiency {speedup / 2 * 100:.0f} % "
            f"(on {cores} shared cores; cold first run: {c1['cold']:.2f} s / {c2['cold']:.2f} s)"
        )
        overhead = (c1["s"] - tasks["s"]) / tasks["n"]
        print(
            f"per-task overhead vs in-process tasks ({tasks['s']:.2f} s): "
            f"{overhead * 1e3:.0f} ms/rank (scheduling, Parquet writing, result transfer)"
        )
        print(f"cluster tables identical to local: {c1['same'] and c2['same']}")
        per_rank_s = tasks["s"] / tasks["n"]
    scale = child(SCALE, "1024", "500")
    print(
        f"\nviews on 1,024 hand-made ranks × 500 collectives ({scale['rows']:,} arrivals): "
        f"{scale['s']:.1f} s (worst straggler found: {scale['worst'] == 7})"
    )
    estimate(total_mb / args.ranks, per_rank_s, local["reduction_bytes"], scale["s"])


SCALE = """
import json, sys, time
import numpy as np, pandas as pd
from perfview.core.analysis.torch.collectives import COMM_COLUMNS
from perfview.core.analysis.torch.job import STEP_COLUMNS, RankReduction, assemble
from pathlib import Path as _P
from perfview.core.analysis.torch.job import document
from perfview.core.pages import summary
def job_tables(job):  # every job view, read through the page registry as the CLI does
    return {v: summary.summarize(document(job, _P('job')), v) for v in summary.views_for('job')}
ranks, per_rank = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
base = np.arange(per_rank, dtype=np.int64) * 2_000_000 + 1_700_000_000 * 10**9
kinds = np.array(["allreduce", "allgather", "reducescatter"], dtype=object)[np.arange(per_rank) % 3]
steps = pd.DataFrame({"step": np.arange(10), "start_ns": base[0] + np.arange(10) * 10**8,
                      "dur_ns": np.full(10, 10**8), "kernel_ns": 0, "comm_ns": 0,
                      "memcpy_ns": 0, "gpu_busy_pct": 0.0})[STEP_COLUMNS]
reds = []
for r in range(ranks):
    start = base + rng.integers(0, 200_000, per_rank) + (50_000 if r == 7 else 0)
    comms = pd.DataFrame({"start_ns": start, "dur_ns": base[0] + 1_000_000 - base[0] + 300_000,
        "kind": kinds, "process_group": "0", "pg_size": ranks, "seq": np.arange(per_rank),
        "in_nelems": 1 << 20, "out_nelems": 1 << 20, "dtype": "Float", "bytes": 4 << 20,
        "stream": 7}).astype(COMM_COLUMNS)
    reds.append(RankReduction(path=f"r{r}.json", order=r, meta_rank=r, name_rank=r,
        world_size=ranks, origin_ns=int(base[0]), duration_ns=10**9, events=0,
        steps=steps.copy(), comms=comms, totals={"comm_ns": 1, "overlap_ns": 0}))
t = time.perf_counter()
job = assemble(reds)
tables = job_tables(job)
s = time.perf_counter() - t
worst = int(tables["stragglers"]["rank"].iloc[0])
print(json.dumps({"s": s, "rows": ranks * per_rank, "worst": worst}))
"""


def estimate(mb: float, per_rank_s: float, red_bytes: int, scale_s: float) -> None:
    """Paper numbers for 1,024 ranks × 1 GB from this run's per-rank rates."""
    rate = mb / per_rank_s  # MB/s of one worker
    rank_s = 1000 / rate
    print("\npaper estimate, 1,024 ranks × 1 GB (linear in bytes, measured rates):")
    print(f"  one rank of 1 GB on one worker: {rank_s:.0f} s at {rate:.0f} MB/s")
    for workers in (16, 64, 256):
        print(f"  {workers:4d} workers: {1024 / workers * rank_s / 60:6.1f} min wall")
    grow = 1000 / mb  # a 1 GB rank holds this many times the collectives of this one
    print(
        f"  reductions at the client: ~{red_bytes * grow * 1024 / 1e6:.0f} MB "
        f"({grow:.0f}× the collectives of this {mb:.0f} MB rank, {red_bytes / 1e3:.1f} kB now)"
    )
    per_rank = 21 * grow  # collectives in a 1 GB rank of this template
    print(
        f"  cross-rank views: ~{scale_s * per_rank / 500:.0f} s for ~{per_rank:,.0f} "
        "collectives per rank (linear from the 1,024 × 500 measurement)"
    )
    print("  one-file peer: impossible (1 TB of JSON in one process)")


if __name__ == "__main__":
    raise SystemExit(main())
