"""The Overview as one table (`perfview summary --view overview`): devices, step statistics,
the step breakdown and utilisation as (section, key, value) rows.

Its own module because a trace without steps borrows `no_steps`' stand-in steps, and
`no_steps` builds on `overview`; neither of those imports this one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.no_steps import hint_for, pseudo_steps_table
from perfview.core.analysis.torch.overview import (
    BREAKDOWN,
    devices_table,
    step_stats,
    steps_table,
    utilization_table,
)
from perfview.core.model import Timeline
from perfview.core.model.units import Unit, column_unit, format_value


def overview_table(timeline: Timeline) -> pd.DataFrame:
    """The overview as key/value rows (what `perfview summary --view overview` prints).

    Columns: section, key, value (text formatted by the unit the key's suffix names) and
    number (the raw float, NaN for text) so a GUI can re-format or plot it. Sections: one per
    GPU used by the trace, `steps`, `step breakdown` (share of step time per category, see the
    module docstring), then one per device and per stream with the utilisation split.
    """
    rows: list[tuple[str, str, str, float]] = []

    def add(section: str, key: str, value: object) -> None:
        unit = column_unit(key)
        if isinstance(value, int | float | np.integer | np.floating) and unit is not None:
            rows.append((section, key, format_value(float(value), unit), float(value)))
        elif isinstance(value, int | float | np.integer | np.floating):
            rows.append((section, key, format_value(float(value), Unit.COUNT), float(value)))
        else:
            rows.append((section, key, str(value), np.nan))

    devices = devices_table(timeline)
    used = devices[devices["used"]]
    kind = str(used["backend"].iat[0]) if len(used) else ""
    for dev_id, name, memory, sms, capability in zip(  # a handful of GPUs at most
        used["id"].tolist(),
        used["name"].tolist(),
        used["memory_bytes"].tolist(),
        used["sms"].tolist(),
        used["compute_capability"].tolist(),
        strict=True,
    ):
        sec = f"gpu:{dev_id}"
        add(sec, "backend", kind)
        add(sec, "name", name)
        add(sec, "memory_bytes", float(memory))
        add(sec, "sms", float(sms))
        add(sec, "compute_capability", capability)
    stats = step_stats(timeline)
    add("steps", "count", stats.count)
    for key in ("mean_ns", "median_ns", "min_ns", "max_ns"):
        add("steps", f"step_{key}", float(getattr(stats, key)))
    steps = steps_table(timeline)
    section = "step breakdown"
    if not len(steps):  # the recording (or each top-level annotation) stands in for steps
        steps = pseudo_steps_table(timeline)
        add("steps", "hint", hint_for(steps))
        section = "step breakdown (no steps: " + ", ".join(dict.fromkeys(steps["label"])) + ")"
    total = float(steps["dur_ns"].sum()) if len(steps) else 0.0
    if total > 0:
        for name in BREAKDOWN:
            add(section, f"{name}_pct", float(steps[f"{name}_ns"].sum()) * 100 / total)
    for u in utilization_table(timeline).itertuples(index=False):
        sec = f"{u.device} {u.stream}" if u.stream != "all" else str(u.device)
        for key in ("utilization_pct", "compute_ns", "comm_ns", "memory_ns", "idle_ns"):
            add(sec, key, float(getattr(u, key)))
    return pd.DataFrame(rows, columns=["section", "key", "value", "number"])


__all__ = ["overview_table"]
