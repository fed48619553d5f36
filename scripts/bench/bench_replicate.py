#!/usr/bin/env python3
"""Big kineto traces for the benchmarks: N MB of shifted copies of a real trace, one per shape.

    python scripts/bench/bench_replicate.py SHAPE SIZE_MB OUT   # e.g. nccl 100 /tmp/nccl_100MB.json

A replica is the source's top-level keys (deviceProperties, distributedInfo, baseTimeNanoseconds,
...) and its events, then copy after copy of the events without the `M` metadata, each copy later
in time than the one before (by the source's span + 10%) so the result reads like a longer run of
the same program. Everything that must stay unique, or point within its own copy, is moved too:

* times: every event's `ts` (slices, instants, counters, flow points) and args `external ts`;
* ids: a flow's `id` (`s`/`t`/`f`: ac2g launch arrows, fwdbwd arrows) and the args that link
  events (`correlation`, `External id`, `Python id` / `Python parent id` of `python_function`
  stacks, `Ev Idx`, autograd `Sequence number`); copy k adds k times one step (the largest such
  value + 1), so ids stay unique across copies and links stay inside their copy.

pid/tid, names and every other arg are kept. The output is written copy by copy (a 1 GB replica
never sits in memory whole); the last copy is cut at an event boundary so the file is about the
size asked for and stays valid JSON. Used by bench_load.py, bench_cache.py and bench_query.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))
KINETO_GPU = SAMPLES / "kineto_gpu"
DEFAULT_SOURCE = KINETO_GPU / "kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
TRAIN_SCRIPT = Path(__file__).resolve().parent / "bench_train_cpu.py"
MB = 1_000_000

# args that link events to each other; an event's own `id` (flows) is moved the same way
ID_ARGS = (
    "correlation",
    "External id",
    "external id",
    "Python id",
    "Python parent id",
    "Ev Idx",
    "Sequence number",
)
TIME_ARGS = ("external ts",)
MOVED_ARGS = ID_ARGS + TIME_ARGS


@dataclass(frozen=True)
class Shape:
    """One trace shape: its source file (None: recorded with `perfview record`) and a line."""

    name: str
    source: Path | None
    about: str


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("resnet50", DEFAULT_SOURCE, "2021 kineto, V100: ops, kernels, memory instants"),
        Shape("nccl", KINETO_GPU / "hta_nccl_data.json.gz", "A100 NCCL kernels, dense ac2g flows"),
        Shape("sampled", KINETO_GPU / "hta_sampled_rank-0.json.gz", "128-rank job, X events only"),
        Shape("rocm", KINETO_GPU / "hta_mi250_rocm6.2.json.gz", "AMD MI250, ROCm 6.2"),
        Shape("cpu-stack", None, "torch CPU, python_function stacks (recorded here)"),
    )
}


@dataclass(frozen=True)
class Replica:
    """What make_replica wrote: events in the file, whole copies begun, bytes."""

    events: int
    copies: int
    size: int


def shape_source(shape: Shape, workdir: Path) -> Path:
    """The file a shape replicates; the CPU-stack trace is recorded once into `workdir`."""
    if shape.source is not None:
        return shape.source
    out = workdir / "cpu_stack_source.pt.trace.json"
    if not out.exists():
        record_cpu_trace(out)
    return out


def record_cpu_trace(out: Path, steps: int = 8) -> None:
    """`perfview record --mode torch --with-stack` of scripts/bench/bench_train_cpu.py (needs
    torch)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "perfview", "record", "--mode", "torch", "--with-stack"]
    cmd += ["-o", str(out), "--", str(TRAIN_SCRIPT), str(steps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"recording the CPU trace failed:\n{proc.stderr[-2000:]}")


def read_trace(path: Path) -> dict[str, Any]:
    """A trace as a dict with `traceEvents` (the bare-array form is wrapped)."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    opener: Any = gzip.open if gz else open
    with opener(path, "rb") as fh:
        data = json.load(fh)
    if isinstance(data, list):
        data = {"traceEvents": data}
    return data  # type: ignore[no-any-return]


def _num(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def shift_plan(events: list[dict[str, Any]]) -> tuple[float, int]:
    """Time step between copies (span + 10%) and the id step that keeps ids unique."""
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
    """Copy k of the events: later by k*dt, ids offset by k*id_step, no `M` metadata."""
    shift, offset = k * dt, k * id_step
    out = []
    for e in events:
        if e.get("ph") == "M":
            continue  # process/thread names once are enough
        e = dict(e)
        if (t := _num(e.get("ts"))) is not None:
            e["ts"] = t + shift
        if (i := _num(e.get("id"))) is not None:
            e["id"] = int(i) + offset
        args = e.get("args")
        if isinstance(args, dict) and any(key in args for key in MOVED_ARGS):
            args = dict(args)
            for key in ID_ARGS:
                if (i := _num(args.get(key))) is not None:
                    args[key] = int(i) + offset
            for key in TIME_ARGS:
                if (t := _num(args.get(key))) is not None:
                    args[key] = t + shift
            e["args"] = args
        out.append(e)
    return out


def _encode(value: Any) -> bytes:
    try:
        import msgspec

        return msgspec.json.encode(value)
    except ImportError:  # plain json is fine, only slower
        return json.dumps(value, separators=(",", ":")).encode()


def make_replica(source: Path, size_mb: float, dest: Path, copies: int = 0) -> Replica:
    """Write a kineto trace of about `size_mb` MB (decimal) made of shifted copies of `source`
    (or, with `copies`, exactly that many whole copies whatever their size)."""
    data = read_trace(source)
    events = data.pop("traceEvents")
    dt, id_step = shift_plan(events)
    target = 2**62 if copies else int(size_mb * MB)
    head = _encode(data)[:-1] + b',"traceEvents":[' if data else b'{"traceEvents":['
    written, count, k = len(head), 0, 0
    with open(dest, "wb") as fh:
        fh.write(head)
        while written < target and (k < copies or not copies):
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
            count += keep
            k += 1
        fh.write(b"]}")
    return Replica(events=count, copies=k, size=dest.stat().st_size)


def make_trace(source: Path, size_mb: float, dest: Path) -> Path:
    """make_replica, returning the path (the form bench_cache.py and bench_query.py call)."""
    make_replica(source, size_mb, dest)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("shape", choices=list(SHAPES))
    parser.add_argument("size_mb", type=float)
    parser.add_argument("out", type=Path)
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    out = args.out
    source = shape_source(SHAPES[args.shape], out.parent)
    rep = make_replica(source, args.size_mb, out)
    if args.json:  # for bench_load.py, which runs this in a child to stay small itself
        print(json.dumps({"events": rep.events, "copies": rep.copies, "size": rep.size}))
    else:
        print(f"{out}: {rep.size / MB:.1f} MB, {rep.events:,} events, {rep.copies} copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
