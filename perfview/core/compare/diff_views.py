"""What each compare view compares: one table per run (from `analysis.aggregate`) plus a total.

A view fixes the metrics and the default metric; `build()` turns a Bundle into a `Side`: the
table, its string key columns for the chosen `match`, info columns and the run total. Totals are
chosen so that two runs of different lengths still compare fairly:

- `functions` (pstats): pstats' own total time (`total_tt`).
- `ops`, `ops-by-shape`: time inside operators, the sum of op *self* time (nested ops are not
  counted twice, and a longer trace window with idle gaps does not inflate it).
- `kernels`: the sum of kernel durations.
- `steps`: the *mean* ProfilerStep duration, so runs that recorded different step counts compare.
- `memory` (mprof): the peak RSS over every run in the file.
- `lines` (memory_profiler report): the highest "Mem usage" of the last report in the file.
- `live-bytes` (CUDA snapshot): active bytes, rows by allocating Python line (or op).
- `peak`, `leaks` (memray): bytes at the high-water mark / never freed, rows by location.
- `frames`, `frames-samples`, `frames-bytes` (sampled profiles weighted in time, in plain
  sample counts, in bytes): the weight of all samples. Rows are frames (function, file, line)
  with self and total weight, recursion counted once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis import aggregate
from perfview.core.compare import diff_alloc
from perfview.core.model import Bundle, Timeline
from perfview.core.model.units import Unit

MATCHES = ("basename", "name", "full")
STEP_PREFIX = "ProfilerStep#"


@dataclass(frozen=True)
class ViewSpec:
    """Fixed facts about a view: its metrics, default metric, total and whether rows sort by Δ."""

    name: str
    format: str
    metrics: tuple[str, ...]
    default_metric: str
    total_label: str
    total_unit: Unit = Unit.NS
    sort: bool = True  # False: keep the run's order (steps are read in order)
    tree: bool = False  # True: also diff the bundles' call trees


@dataclass
class Side:
    """One run's table for a view, ready for `compare_tables`."""

    frame: pd.DataFrame
    key: list[str]
    info: list[str]
    total: float


_SPECS = [
    ViewSpec("functions", "pstats", ("tottime_ns", "cumtime_ns", "ncalls"), "tottime_ns",
             "total time (pstats total_tt)", tree=True),
    ViewSpec("ops", "trace", ("self_ns", "total_ns", "calls"), "self_ns",
             "time in operators (sum of op self time)", tree=True),
    ViewSpec("ops-by-shape", "trace", ("self_ns", "total_ns", "calls"), "self_ns",
             "time in operators (sum of op self time)", tree=True),
    ViewSpec("kernels", "trace", ("total_ns", "calls"), "total_ns", "time in GPU kernels"),
    ViewSpec("steps", "trace", ("dur_ns",), "dur_ns", "mean ProfilerStep duration", sort=False),
    ViewSpec("memory", "mprof", ("peak_bytes", "final_bytes", "duration_ns"), "peak_bytes",
             "peak memory", Unit.BYTES),
    ViewSpec("lines", "memprof_text", ("increment_bytes", "mem_bytes", "occurrences"),
             "increment_bytes", "peak line memory", Unit.BYTES),
    ViewSpec("live-bytes", "cuda_snapshot", ("size_bytes", "count"), "size_bytes",
             "active CUDA memory (live blocks)", Unit.BYTES),
    ViewSpec("peak", "memray", ("size_bytes", "count"), "size_bytes",
             "peak memory (memray high-water mark)", Unit.BYTES),
    ViewSpec("leaks", "memray", ("size_bytes", "count"), "size_bytes",
             "leaked bytes", Unit.BYTES),
    # Multi-rank jobs (folders of rank traces), built by perfview.core.analysis.torch.job_diff
    ViewSpec("job-ranks", "job", ("step_mean_ns", "comm_ns", "compute_ns", "idle_ns",
             "collectives"), "step_mean_ns", "mean step time over ranks"),
    ViewSpec("job-collectives", "job", ("total_transfer_ns", "mean_arrival_skew_ns",
             "mean_wait_ns", "instances", "total_bytes"), "total_transfer_ns",
             "time moving data in collectives (sum of transfer time)"),
    ViewSpec("frames", "sampled", ("self_ns", "total_ns", "samples"), "self_ns",
             "weight of all samples", tree=True),
    ViewSpec("frames-samples", "sampled", ("self_samples", "total_samples", "samples"),
             "self_samples", "weight of all samples", Unit.COUNT, tree=True),
    ViewSpec("frames-bytes", "sampled", ("self_bytes", "total_bytes", "samples"), "self_bytes",
             "weight of all samples", Unit.BYTES, tree=True),
]  # fmt: skip
# The frames view of each sampled-profile unit.
_SAMPLED_VIEWS = {"ns": "frames", "samples": "frames-samples", "bytes": "frames-bytes"}
VIEWS: dict[str, ViewSpec] = {spec.name: spec for spec in _SPECS}


def views_for(fmt: str) -> list[str]:
    """Names of the views that apply to a format, default first."""
    return [spec.name for spec in _SPECS if spec.format == fmt]


def default_view(fmt: str) -> str:
    names = views_for(fmt)
    if not names:
        raise ValueError(f"perfview cannot compare {fmt} files")
    return names[0]


def views_for_bundle(bundle: Bundle) -> list[str]:
    """The views that apply to this bundle (a sampled profile: the one of its unit)."""
    if bundle.format == "sampled" and bundle.sampled is not None:
        return [_SAMPLED_VIEWS.get(bundle.sampled.unit, "frames-samples")]
    return views_for(bundle.format)


def default_view_for(bundle: Bundle) -> str:
    names = views_for_bundle(bundle)
    return names[0] if names else default_view(bundle.format)


def spec_for(fmt: str, view: str) -> ViewSpec:
    spec = VIEWS.get(view)
    if spec is None or spec.format != fmt:
        raise ValueError(f"view {view!r} does not apply to {fmt} files; use {views_for(fmt)}")
    return spec


def basename(paths: pd.Series) -> pd.Series:
    """File names without folders (either separator), so runs from different checkouts match."""
    text = paths.astype(object).astype(str).str.replace("\\", "/", regex=False)
    return text.str.rsplit("/", n=1).str[-1].astype(object)


def _check_match(match: str) -> None:
    if match not in MATCHES:
        raise ValueError(f"match must be one of {', '.join(MATCHES)}, not {match!r}")


def _functions(bundle: Bundle, match: str) -> Side:
    if bundle.profile is None:
        raise ValueError(f"{bundle.title} holds no pstats data")
    table = aggregate.functions_table(bundle.profile)
    if match == "basename":
        table["file"] = basename(table["file"])
    if match == "name":
        return Side(table, ["function"], ["file", "line"], float(bundle.profile.total_ns))
    return Side(table, ["function", "file", "line"], [], float(bundle.profile.total_ns))


def _timeline(bundle: Bundle) -> Timeline:
    if bundle.timeline is None:
        raise ValueError(f"{bundle.title} holds no trace events")
    return bundle.timeline


def _ops(bundle: Bundle, by_shape: bool) -> Side:
    table = aggregate.ops_table(_timeline(bundle), by_shape=by_shape)
    key = ["name", "shape"] if by_shape else ["name"]
    return Side(table, key, [], float(table["self_ns"].sum()))


def _kernels(bundle: Bundle) -> Side:
    table = aggregate.kernels_table(_timeline(bundle))
    return Side(table, ["name"], [], float(table["total_ns"].sum()))


def steps_table(timeline: Timeline) -> pd.DataFrame:
    """ProfilerStep#N durations in step order, then `mean` and `median` rows.

    Steps are keyed by ordinal (`#0`, `#1`, …) so step i of A meets step i of B even when the
    runs' schedules numbered them differently; `label` keeps the recorded name. GPU-side copies
    of the annotation are skipped, and a step seen on several CPU threads counts once (longest).
    """
    events = timeline.events
    names = events["name"]
    cats = pd.Index(names.cat.categories.astype(object).astype(str))
    is_step = np.asarray(cats.str.startswith(STEP_PREFIX), dtype=bool)
    codes = names.cat.codes.to_numpy()
    mask = (codes >= 0) & is_step[np.maximum(codes, 0)]
    mask &= (events["kind"] != "gpu_annotation").to_numpy()
    steps = pd.DataFrame(
        {"label": cats.to_numpy()[codes[mask]], "dur_ns": events["dur"].to_numpy()[mask]}
    )
    steps = steps.groupby("label", sort=False)["dur_ns"].max().reset_index()
    number = pd.to_numeric(steps["label"].str.slice(len(STEP_PREFIX)), errors="coerce")
    steps = steps.assign(_n=number).sort_values(["_n", "label"], kind="stable")
    durs = steps["dur_ns"].to_numpy(dtype=np.float64)
    summary = [float(durs.mean()), float(np.median(durs))] if len(durs) else [0.0, 0.0]
    out = pd.DataFrame(
        {
            "step": [f"#{i}" for i in range(len(steps))] + ["mean", "median"],
            "label": [*steps["label"].astype(str), "", ""],
            "dur_ns": [*durs, *summary],
        }
    )
    return out.astype({"step": object, "label": object, "dur_ns": np.float64})


def first_step_ns(timeline: Timeline) -> int:
    """Start (ns since the trace origin) of the first CPU-side ProfilerStep, else 0.

    Two traces are aligned on this instant for side-by-side timelines: warm-up before the
    first step differs from run to run, the steps themselves are what the user compares.
    """
    events = timeline.events
    if not len(events):
        return 0
    names = events["name"]
    cats = pd.Index(names.cat.categories.astype(object).astype(str))
    is_step = np.asarray(cats.str.startswith(STEP_PREFIX), dtype=bool)
    codes = names.cat.codes.to_numpy()
    mask = (codes >= 0) & is_step[np.maximum(codes, 0)]
    mask &= (events["kind"] != "gpu_annotation").to_numpy()
    if not mask.any():
        return 0
    return int(events["ts"].to_numpy(dtype=np.int64)[mask].min())


def _steps(bundle: Bundle) -> Side:
    table = steps_table(_timeline(bundle))
    mean = table["dur_ns"].to_numpy(dtype=np.float64)[-2]  # the `mean` summary row
    return Side(table, ["step"], ["label"], float(mean))


def _memory(bundle: Bundle) -> Side:
    if bundle.memory is None:
        raise ValueError(f"{bundle.title} holds no mprof samples")
    table = aggregate.memory_table(bundle.memory)
    peak = float(bundle.memory.samples["rss_bytes"].max()) if len(table) else 0.0
    return Side(table, ["run"], ["cmdline"], peak)


def _lines(bundle: Bundle, match: str) -> Side:
    """Executed lines of the last report, keyed by source text rather than line number.

    Text survives edits elsewhere in the file that shift numbers; `nth` numbers repeated text
    within a function (two `return x` lines) so the k-th copy in A meets the k-th in B.
    """
    if bundle.lines is None:
        raise ValueError(f"{bundle.title} holds no line report")
    table = aggregate.lines_table(bundle.lines, order="source")
    table = table[table["report"] == table["report"].max()]
    table = table.assign(content=table["content"].astype(object).astype(str).str.strip())
    table = table[table["mem_bytes"].notna() & (table["content"] != "")].copy()
    if match == "basename":
        table["file"] = basename(table["file"])
    table["nth"] = table.groupby(["file", "function", "content"], sort=False).cumcount()
    key = ["function", "content", "nth"] if match == "name" else ["file", "function", "content"]
    key = key if match == "name" else [*key, "nth"]
    info = ["file", "line"] if match == "name" else ["line"]
    peak = float(table["mem_bytes"].max()) if len(table) else 0.0
    return Side(table.reset_index(drop=True), key, info, peak)


def _frames(bundle: Bundle, view: str, match: str) -> Side:
    """Frames of a sampled profile, keyed like pstats functions (name, file, line)."""
    from perfview.core.analysis.sampled import functions_table

    if bundle.sampled is None or bundle.tree is None:
        raise ValueError(f"{bundle.title} holds no sampled profile")
    unit = bundle.sampled.unit
    own = _SAMPLED_VIEWS.get(unit, "frames-samples")
    if own != view:
        raise ValueError(f"{bundle.title} is weighted in {unit} (view {own!r}), "
                         f"so it does not compare in view {view!r}")  # fmt: skip
    table = functions_table(bundle.tree, unit).rename(columns={"name": "function"})
    table = table.drop(columns=["self_pct", "total_pct"])
    total = float(bundle.tree.metrics["total_ns"][0])
    if match == "basename":
        table["file"] = basename(table["file"])
    if match == "name":
        table = table.groupby("function", sort=False, as_index=False).agg(
            {c: "sum" if c not in ("file", "line") else "first" for c in table.columns[1:]}
        )
        return Side(table, ["function"], ["file", "line"], total)
    return Side(table, ["function", "file", "line"], [], total)


def build(bundle: Bundle, view: str, match: str = "basename") -> Side:
    """One run's side of a comparison in `view`. Raises ValueError with a readable reason."""
    _check_match(match)
    spec_for(bundle.format, view)
    if view == "functions":
        return _functions(bundle, match)
    if view in ("ops", "ops-by-shape"):
        return _ops(bundle, by_shape=view == "ops-by-shape")
    if view == "kernels":
        return _kernels(bundle)
    if view == "steps":
        return _steps(bundle)
    if view == "memory":
        return _memory(bundle)
    if view == "live-bytes":
        frame, total = diff_alloc.cuda_sites(bundle)
        return Side(frame, ["site"], [], total)
    if view in ("peak", "leaks"):
        frame, total = diff_alloc.memray_sites(bundle, leaks=view == "leaks", match=match)
        return Side(frame, ["location"], [], total)
    if view.startswith("frames"):
        return _frames(bundle, view, match)
    return _lines(bundle, match)


__all__ = [
    "MATCHES",
    "VIEWS",
    "Side",
    "ViewSpec",
    "build",
    "default_view",
    "default_view_for",
    "first_step_ns",
    "spec_for",
    "views_for_bundle",
]
