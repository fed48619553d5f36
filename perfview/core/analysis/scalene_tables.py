"""Scalene's tables: the lines where time or memory went, and its per-function sums.

Scalene's percentages are of the program's elapsed time (CPU split into Python, native and
system; GPU) and of all memory allocated; the byte columns are Scalene's MiB figures in bytes
(`loaders/scalene.py`). These tables print them as Scalene's own JSON holds them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.model import LineReport, schema

_ORDER = ["cpu_total_pct", "alloc_bytes", "mem_peak_bytes"]


def lines_table(report: LineReport) -> pd.DataFrame:
    """The lines with any CPU, GPU or memory recorded, most CPU first (then most allocated).

    Columns: file, line, the Scalene columns of `schema.SCALENE_LINES`, content."""
    lines = report.lines
    numbers = list(schema.SCALENE_LINES)
    values = np.nan_to_num(lines[numbers].to_numpy(dtype=np.float64))
    active = (values != 0).any(axis=1)
    out: pd.DataFrame = lines.loc[active, ["file", "line", *numbers, "content"]]
    return out.sort_values(_ORDER, ascending=False, kind="stable").reset_index(drop=True)


def functions_table(report: LineReport) -> pd.DataFrame:
    """Scalene's own per-function sums, most CPU first. Columns: file, function, line, then
    the Scalene columns of `schema.SCALENE_LINES`."""
    columns = ["file", "function", "line", *schema.SCALENE_LINES]
    if report.functions is None:
        return schema.empty(dict.fromkeys(columns, "float64") | {"file": "object",
                            "function": "object", "line": "int64"})  # fmt: skip
    out: pd.DataFrame = report.functions[columns]
    return out.sort_values(_ORDER, ascending=False, kind="stable").reset_index(drop=True)


__all__ = ["functions_table", "lines_table"]
