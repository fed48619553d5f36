"""Compare perfview's figures with the reference tools on every matching real sample, and
write the table to docs/agreement.md.

    python3 scripts/agreement_table.py [--samples ../shared/samples] [--out docs/agreement.md]

Each row: the perfview view, the reference it is compared with, the files, the largest
difference found, and what that difference means. Rows run only when their reference is
installed (pstats always; memray; HTA's figures are the ones HTA 0.5.0 printed, pinned by
tests/agreement/test_hta_idle.py). tests/agreement/test_agreement_table.py runs the same
comparisons and checks that every "exact" row is exact.
"""

from __future__ import annotations

import argparse
import importlib.util
import pstats
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfview.core.analysis import profile_tables, sampled  # noqa: E402
from perfview.core.analysis.profile_tables import function_labels  # noqa: E402
from perfview.core.analysis.torch import streams  # noqa: E402
from perfview.loaders import load  # noqa: E402

MIB = 1 << 20
func_std_string: Callable[[tuple[str, int, str]], str] = pstats.func_std_string  # type: ignore[attr-defined]


@dataclass
class Row:
    view: str
    reference: str
    files: list[str]
    max_diff: float
    unit: str
    exact: bool  # the definitions match: the difference must be 0 (or the file's rounding)
    note: str


def _files(samples: Path, pattern: str) -> list[Path]:
    return sorted(samples.glob(pattern))


def pstats_rows(samples: Path) -> list[Row]:
    """functions: ncalls/primitive/tottime/cumtime per function; callers: per-edge numbers."""
    files = _files(samples, "pstats/*")
    worst_fn = worst_edge = 0.0
    for path in files:
        profile = load(path).profile
        assert profile is not None
        ref = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
        labels = function_labels(profile.functions).to_numpy()
        funcs = profile.functions
        by_label = {}
        for key, (cc, nc, tt, ct, callers) in ref.items():
            by_label[func_std_string(key)] = (cc, nc, tt, ct, callers)
        for i, label in enumerate(labels):
            cc, nc, tt, ct, _ = by_label[label]
            mine = funcs.iloc[i]
            worst_fn = max(
                worst_fn,
                abs(int(mine["ncalls"]) - nc),
                abs(int(mine["primitive_calls"]) - cc),
                abs(int(mine["tottime_ns"]) - round(tt * 1e9)),
                abs(int(mine["cumtime_ns"]) - round(ct * 1e9)),
            )
        table = profile_tables.callers_table(profile)
        for caller, callee, n, tt_ns, ct_ns in zip(
            table["caller"], table["callee"], table["ncalls"], table["tottime_ns"],
            table["cumtime_ns"], strict=True,
        ):  # fmt: skip
            edge = by_label[callee][4]
            key = next(k for k in edge if func_std_string(k) == caller)
            value = edge[key]
            ncalls, tt, ct = (
                (value[0], value[2], value[3]) if isinstance(value, tuple) else (value, 0, 0)
            )
            worst_edge = max(
                worst_edge, abs(int(n) - ncalls), abs(int(tt_ns) - round(tt * 1e9)),
                abs(int(ct_ns) - round(ct * 1e9)),
            )  # fmt: skip
    names = [p.name for p in files]
    return [
        Row("functions", "pstats.Stats (ncalls, primitive, tottime, cumtime)", names, worst_fn,
            "calls / ns", True, "exact"),
        Row("callers (and the Callers/Callees page)", "pstats print_callers / print_callees "
            "data (per-edge ncalls, tottime, cumtime; `file:line(function)` names)", names,
            worst_edge, "calls / ns", True, "exact"),
    ]  # fmt: skip


_MP_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+) MiB\s+(-?[\d.]+) MiB")


def memory_profiler_rows(samples: Path) -> list[Row]:
    files = _files(samples, "memprof_text/*")
    worst_inc = worst_fn = 0.0
    for path in files:
        rows = [m for t in path.read_text().splitlines() if (m := _MP_ROW.match(t))]
        report = load(path).lines
        assert report is not None
        mine = report.lines.dropna(subset=["mem_bytes"]).sort_values("line")
        for m, inc in zip(rows, mine["increment_bytes"], strict=True):
            worst_inc = max(worst_inc, abs(float(m.group(3)) * MIB - float(inc)) / MIB)
        growth = sum(float(m.group(3)) for m in rows[1:])
        fn = (
            float(profile_tables.line_functions_table(report)["increment_bytes"].to_numpy()[0])
            / MIB
        )
        worst_fn = max(worst_fn, abs(fn - growth))
    names = [p.name for p in files]
    return [
        Row("lines", "memory_profiler's report (Mem usage, Increment, Occurrences)", names,
            worst_inc, "MiB", True, "exact to the report's printed decimals"),
        Row("functions (memprof_text)", "sum of the report's increments after the "
            "`@profile` line", names, worst_fn, "MiB", False,
            "the decorator line's Increment is memory_profiler's baseline at entry, not "
            "growth: left out (titanic: 619.7 MiB, not 1.37 GiB)"),
    ]  # fmt: skip


def mprof_rows(samples: Path) -> list[Row]:
    files = _files(samples, "mprof_dat/*.dat")
    worst = 0.0
    for path in files:
        peak_ref = max(
            float(line.split()[1]) for line in path.read_text().splitlines()
            if line.startswith("MEM ")
        )  # fmt: skip
        table = profile_tables.memory_table(load(path).memory)  # type: ignore[arg-type]
        worst = max(worst, abs(float(table["peak_bytes"].max()) / MIB - peak_ref))
    return [Row("memory (mprof)", "mprof's peak (largest MEM sample, as `mprof peak`)",
                [p.name for p in files], worst, "MiB", True, "exact")]  # fmt: skip


def memray_rows(samples: Path) -> list[Row]:
    if importlib.util.find_spec("memray") is None:
        return []
    from memray import FileReader

    files = _files(samples, "memray/*.bin")
    worst_peak = worst_leak = 0.0
    for path in files:
        reader = FileReader(str(path))
        cap = load(path).memray
        assert cap is not None
        worst_peak = max(worst_peak, abs(int(cap.meta["peak_bytes"]) - reader.metadata.peak_memory))
        leaked = sum(r.size for r in reader.get_leaked_allocation_records(merge_threads=True))
        worst_leak = max(worst_leak, abs(int(cap.leaks["size_bytes"].sum()) - leaked))
    names = [p.name for p in files]
    return [
        Row("overview (memray peak)", "memray FileReader metadata.peak_memory", names,
            worst_peak, "bytes", True, "exact"),
        Row("leaks (memray)", "memray FileReader leaked allocation records (summed)", names,
            worst_leak, "bytes", True, "exact"),
    ]  # fmt: skip


def sampled_rows(samples: Path) -> list[Row]:
    import json

    def is_sampled(path: Path) -> bool:
        return any(p.get("type") == "sampled" for p in json.loads(path.read_text())["profiles"])

    files = [p for p in _files(samples, "speedscope/*.json") if is_sampled(p)]
    worst = 0.0
    for path in files:
        doc = json.loads(path.read_text())
        table = sampled.threads_table(sampled.sampled(load(path)))
        for prof, weight in zip(doc["profiles"], table["weight"], strict=True):
            stated = float(sum(prof.get("weights", [])))
            worst = max(worst, abs(float(weight) - stated) / max(abs(stated), 1e-300))
    return [Row("threads (sampled)", "the speedscope file's own weights, per profile",
                [p.name for p in files], worst, "relative", True, "exact")]  # fmt: skip


def hta_rows(samples: Path) -> list[Row]:
    path = samples / "kineto_gpu/hta_nccl_data.json.gz"
    timeline = load(path).timeline
    assert timeline is not None
    table = streams.idle_table(timeline).set_index("stream")
    mine = float(table["idle_ns"].to_numpy(dtype=np.float64)[table.index == "stream 7"][0]) / 1e6
    overlap = float(streams.overlap_table(timeline)["overlap_pct"].to_numpy()[0])
    names = [path.name]
    return [
        Row("overlap", "HTA 0.5.0 get_comm_comp_overlap (14.31 %)", names, overlap - 14.31,
            "percentage points", False, streams.OVERLAP_DEFINITION),
        Row("idle", "HTA 0.5.0 get_idle_time_breakdown (stream 7: 359.402 ms)", names,
            mine - 359.402, "ms", False, streams.IDLE_DEFINITION),
    ]  # fmt: skip


SECTIONS: list[Callable[[Path], list[Row]]] = [
    pstats_rows, memory_profiler_rows, mprof_rows, memray_rows, sampled_rows, hta_rows,
]  # fmt: skip


def all_rows(samples: Path) -> list[Row]:
    return [row for section in SECTIONS for row in section(samples)]


def markdown(rows: list[Row]) -> str:
    out = [
        "# Agreement with the reference tools",
        "",
        "Generated by `python3 scripts/agreement_table.py` from the real files in",
        "`../shared/samples` (see its SOURCES.md); `tests/agreement/` checks the same figures.",
        '"exact" rows must show 0 (or the reference\'s printed rounding); the others differ by',
        "definition, stated on the page and in `perfview summary --view` output.",
        "",
        "| view | reference | files | max difference | what it means |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        files = ", ".join(f"`{f}`" for f in r.files)
        diff = f"{r.max_diff:.6g} {r.unit}"
        out.append(f"| {r.view} | {r.reference} | {files} | {diff} | {r.note} |")
    out += ["", *RECORDED_ROWS]
    return "\n".join(out) + "\n"


# Compared on a trace recorded during the test (timings differ from run to run, so the
# figures are the test's bounds, not one run's numbers).
RECORDED_ROWS = [
    "Checked on a profile recorded by the test itself (torch.profiler on a small CPU model):",
    "",
    "| view | reference | test | bound | what it means |",
    "|---|---|---|---|---|",
    "| ops (torch) | torch `key_averages()` count and self CPU time per operator | "
    "`tests/loaders/test_torch_roundtrip.py` | counts exact; self time within 5 % per op "
    "(≥ 20 µs), 2 % in total | perfview recomputes self time from the exported slices' "
    "nesting; torch from its own events |",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=ROOT.parent / "shared" / "samples")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "agreement.md")
    args = parser.parse_args()
    args.out.write_text(markdown(all_rows(args.samples)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
