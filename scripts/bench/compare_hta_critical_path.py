#!/usr/bin/env python3
"""perfview's critical path against HTA's (`traceinsight`): the `bound_by` split per step.

    pip install traceinsight     # HTA; not a perfview dependency
    python scripts/bench/compare_hta_critical_path.py [TRACE …]   # default: the kineto_gpu samples

For each trace and each ProfilerStep instance HTA's `critical_path_analysis(rank, "ProfilerStep",
i)` runs and its `summary()` (% of the path per bound_by class) is printed beside perfview's
path breakdown mapped onto HTA's classes (cpu_op → cpu_bound, data_loading → data_loading,
kernel and memcpy → gpu_compute_bound, communication → gpu_communication_bound, launch →
gpu_kernel_launch_overhead, kernel-to-kernel gaps → gpu_kernel_kernel_overhead, hand-offs
between CPU threads → thread_hand_off (HTA has no such edge), sync → "" (HTA leaves its sync
edges unclassified)). Where HTA fails (an exception or success False) that is printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))

from perfview.core.analysis.torch.critical_path import path  # noqa: E402
from perfview.loaders import load  # noqa: E402

TO_HTA = {
    "cpu_op": "cpu_bound", "data_loading": "data_loading", "kernel": "gpu_compute_bound",
    "memcpy": "gpu_compute_bound", "communication": "gpu_communication_bound",
    "launch": "gpu_kernel_launch_overhead", "idle": "gpu_kernel_kernel_overhead", "sync": "",
}  # fmt: skip


def ours(trace: Path) -> dict[int, dict[str, float]]:
    tl = load(trace).timeline
    assert tl is not None
    table = path.critical_path_table(tl)
    out: dict[int, dict[str, float]] = {}
    for step_key, part in table.groupby("step"):
        step = int(str(step_key))
        total = float(part["ns"].sum()) or 1.0
        hta_class = part["category"].map(TO_HTA)
        # only kernel-to-kernel gaps are HTA's overhead class; thread hand-offs have none
        hand_off = (part["category"] == "idle") & (part["name"] != "(kernel-to-kernel gap)")
        hta_class = hta_class.where(~hand_off, "thread_hand_off")
        split = part.groupby(hta_class)["ns"].sum() * 100.0 / total
        out[step] = {str(k): float(v) for k, v in split.items()}
    return out


def hta_split(trace: Path, instance: int) -> dict[str, float] | str:
    from hta.trace_analysis import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        TraceAnalysis,
    )

    folder = Path(tempfile.mkdtemp(prefix="hta-"))
    try:
        shutil.copy(trace, folder / trace.name)
        analyzer = TraceAnalysis(trace_dir=str(folder))
        rank = next(iter(analyzer.t.get_all_traces()))
        result = analyzer.critical_path_analysis(rank, "ProfilerStep", instance)
        if result is None or not result[1]:
            return "HTA: success False"
        summary = result[0].summary()
        return {str(k): float(v) for k, v in summary.items()}
    except Exception as exc:  # HTA's own failures are the finding here
        return f"HTA failed: {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("traces", nargs="*", type=Path, help="default: the kineto_gpu samples")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("hta") is None:
        print("HTA is not installed: pip install traceinsight", file=sys.stderr)
        return 2
    traces = list(args.traces) or sorted((SAMPLES / "kineto_gpu").glob("*.gz"))
    for trace in traces:
        mine = ours(trace)
        print(f"== {trace.name}")
        for i, (step, split) in enumerate(sorted(mine.items())):
            theirs = hta_split(trace, i)
            keys = sorted(set(split) | (set(theirs) if isinstance(theirs, dict) else set()))
            row = ", ".join(f"{k or 'sync'}: {split.get(k, 0):.1f}" for k in keys)
            print(f"  step {step} perfview  {row}")
            if isinstance(theirs, dict):
                row = ", ".join(f"{k or 'sync'}: {theirs.get(k, 0):.1f}" for k in keys)
                print(f"  step {step} HTA       {row}")
            else:
                print(f"  step {step} {theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
