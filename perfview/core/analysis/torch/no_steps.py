"""The first page of a recording without `ProfilerStep#N` slices.

Traces recorded without a schedule (or with one nobody stepped) have no steps, so the step
breakdown would be empty. Rather than show nothing, the recording is cut into "pseudo steps":
each top-level user annotation (`record_function` blocks on a CPU thread) is one, and without
any the whole recorded span is one. They get the same BREAKDOWN split as real steps, next to the
operators and Python frames that took the most self time, and one line on how to get real
per-step figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import self_times
from perfview.core.analysis.torch.common import (
    I64,
    gpu_lane_mask,
    kind_mask,
    name_mask,
    names_at,
    per_events,
    text,
)
from perfview.core.analysis.torch.overview import BREAKDOWN, category_intervals
from perfview.core.analysis.torch.unions import partition
from perfview.core.model import Timeline

HOW_TO_STEP = (
    "For per-step figures call prof.step() once per iteration (with `perfview record`: "
    "--schedule W,U,A and perfview_step() in the loop, or --step-every / --step-on-optimizer)."
)
HINT = "No ProfilerStep#N slices: the whole recording is treated as one step. " + HOW_TO_STEP


def hint_for(steps: pd.DataFrame) -> str:
    """The one line above the stand-in breakdown: what stands for a step, how to get real ones."""
    if (steps["row"] < 0).all():
        return HINT
    n = len(steps)
    what = f"each of the {n} top-level annotations is" if n > 1 else "the top-level annotation is"
    return f"No ProfilerStep#N slices: {what} treated as a step. {HOW_TO_STEP}"


TOP = 10
# annotations torch makes itself (steps, DataLoader waits, optimizer calls): not user blocks
TORCH_OWN_RE = r"^(?:ProfilerStep#|enumerate\(DataLoader\)|Optimizer\.)"


@per_events  # asked three times by the Overview's stand-in (0.15 s each at 1 GB)
def pseudo_steps(tl: Timeline) -> pd.DataFrame:
    """step, row, label, start_ns, end_ns, dur_ns: the top-level user annotations on CPU
    threads (overlapping ones dropped, earliest first; torch's own, TORCH_OWN_RE, are not
    user blocks), or the whole span as one row (row -1)."""
    ev = tl.events
    ts = ev["ts"].to_numpy(dtype=I64)
    end = ts + ev["dur"].to_numpy(dtype=I64)
    ann = kind_mask(ev, ("annotation",)) & ~gpu_lane_mask(tl) & ~name_mask(ev, TORCH_OWN_RE)
    rows = np.flatnonzero(ann & (ev["depth"].to_numpy() == 0))
    rows = rows[np.argsort(ts[rows], kind="stable")]
    keep: list[int] = []
    last = np.iinfo(np.int64).min
    for r in rows.tolist():  # a handful of annotations: a plain loop is clearest
        if ts[r] >= last:
            keep.append(r)
            last = int(end[r])
    if keep:
        k = np.asarray(keep, dtype=I64)
        labels = text(names_at(ev, k))
        start, stop = ts[k], end[k]
    else:
        k = np.asarray([-1], dtype=I64)
        labels = np.asarray(["whole recording"], dtype=object)
        work = ~kind_mask(ev, ("trace",))
        start = np.asarray([ts[work].min() if work.any() else 0], dtype=I64)
        stop = np.asarray([end[work].max() if work.any() else tl.duration_ns], dtype=I64)
    return pd.DataFrame(
        {
            "step": np.arange(1, len(k) + 1, dtype=I64),
            "row": k,
            "label": labels,
            "start_ns": start,
            "end_ns": stop,
            "dur_ns": stop - start,
        }
    )


def pseudo_steps_table(tl: Timeline) -> pd.DataFrame:
    """`pseudo_steps` (less end_ns) with the BREAKDOWN split (`<category>_ns`, summing to
    dur_ns)."""
    steps = pseudo_steps(tl)
    parts = partition(
        category_intervals(tl),
        steps["start_ns"].to_numpy(dtype=I64),
        steps["end_ns"].to_numpy(dtype=I64),
    )
    out = steps[["step", "row", "label", "start_ns", "dur_ns"]].copy()
    for i, name in enumerate(BREAKDOWN):
        out[f"{name}_ns"] = parts[:, i]
    return out


def top_self(tl: Timeline, kind: str, n: int = TOP) -> pd.DataFrame:
    """The `n` slice names of `kind` ("cpu_op", "python") with the most self time: name,
    calls, self_ns, self_pct (of the recorded span). Self time counts only nested slices of
    the same kind, as torch's key_averages does for operators."""
    ev = tl.events
    mask = kind_mask(ev, (kind,)) & ~gpu_lane_mask(tl)
    cols = ["name", "calls", "self_ns", "self_pct"]
    if not mask.any():
        return pd.DataFrame(columns=cols)
    own = self_times(ev, mask)[mask]
    column = ev["name"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        # grouped by the name's code, and only the groups turned into text: text for every
        # slice was seconds on a 1 GB trace with Python stacks (millions of strings)
        codes = column.cat.codes.to_numpy()[mask]
        by_code = (
            pd.DataFrame({"code": codes, "self_ns": own})
            .groupby("code", sort=False)
            .agg(calls=("self_ns", "size"), self_ns=("self_ns", "sum"))
            .reset_index()
        )
        cats = np.append(text(column.cat.categories), str(np.nan))  # code -1: as text() says
        by_code.insert(0, "name", cats[by_code["code"].to_numpy()])
        grouped = by_code.drop(columns="code")
    else:
        grouped = (
            pd.DataFrame({"name": text(column.to_numpy()[mask]), "self_ns": own})
            .groupby("name", sort=False)
            .agg(calls=("self_ns", "size"), self_ns=("self_ns", "sum"))
            .reset_index()
        )
    out = grouped.sort_values(["self_ns", "name"], ascending=[False, True]).head(n)
    span = float(pseudo_steps(tl)["dur_ns"].sum()) or 1.0
    out["self_pct"] = out["self_ns"] * 100.0 / span
    return out[cols].reset_index(drop=True).astype({"calls": "int64", "self_ns": "int64"})


@dataclass(frozen=True)
class NoStepsData:
    """What the Overview shows in place of the step breakdown when there are no steps."""

    steps: pd.DataFrame  # pseudo_steps_table
    operators: pd.DataFrame  # top_self(tl, "cpu_op")
    python: pd.DataFrame  # top_self(tl, "python")
    hint: str = HINT

    @classmethod
    def compute(cls, tl: Timeline) -> NoStepsData:
        steps = pseudo_steps_table(tl)
        return cls(steps, top_self(tl, "cpu_op"), top_self(tl, "python"), hint_for(steps))


__all__ = ["HINT", "NoStepsData", "hint_for", "pseudo_steps", "pseudo_steps_table", "top_self"]
