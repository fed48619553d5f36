"""The memory_profiler pages agree with memory_profiler's own report.

memory_profiler prints, on a function's first line (the `@profile` decorator), the process's
memory when the function was entered as that line's "Increment" (the line had no previous
measurement, so it counts from zero). That is a baseline, not growth: the function grew by
the sum of the other lines' increments. Figures here are read from the report text itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from perfview.core.analysis.profile_tables import line_functions_table, lines_table
from perfview.core.model.units import MIB
from perfview.loaders import load
from tests.conftest import sample

REPORTS = ["memprof_text/titanic_memory_profile.txt", "memprof_text/axelrod_memory_profiler.log"]
ROW = re.compile(r"^\s*(\d+)\s+([\d.]+) MiB\s+(-?[\d.]+) MiB")


def _report_rows(path: Path) -> list[tuple[int, float, float]]:
    """(line, mem MiB, increment MiB) of every executed row, straight from the text."""
    out = []
    for text in path.read_text().splitlines():
        m = ROW.match(text)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
    return out


@pytest.mark.parametrize("rel", REPORTS)
def test_function_growth_leaves_out_the_decorator_baseline(rel: str) -> None:
    path = sample(rel)
    rows = _report_rows(path)
    first, growth = rows[0], sum(inc for _, _, inc in rows[1:])
    report = load(path).lines
    assert report is not None
    table = line_functions_table(report)
    assert len(table) == 1
    assert table["increment_bytes"].iat[0] == pytest.approx(growth * MIB, abs=0.06 * MIB)
    assert table["start_mem_bytes"].iat[0] == pytest.approx(first[1] * MIB, abs=0.06 * MIB)
    biggest = max(rows[1:], key=lambda r: r[2])
    assert table["max_line"].iat[0] == biggest[0]
    assert table["max_increment_bytes"].iat[0] == pytest.approx(biggest[2] * MIB, abs=0.06 * MIB)


def test_titanic_grew_619_7_mib_not_1_37_gib() -> None:
    report = load(sample("memprof_text/titanic_memory_profile.txt")).lines
    assert report is not None
    grew = line_functions_table(report)["increment_bytes"].iat[0] / MIB
    assert grew == pytest.approx(619.7, abs=0.1)


def test_lines_table_ranks_growth_not_the_baseline() -> None:
    report = load(sample("memprof_text/titanic_memory_profile.txt")).lines
    assert report is not None
    table = lines_table(report)
    assert table["line"].iat[0] == 54  # the 475 MiB preprocess line, not the @profile line
    # memory_profiler's own figure for the decorator line is kept, just not ranked as growth.
    row18 = table[table["line"] == 18]
    assert row18["increment_bytes"].iat[0] == pytest.approx(779.3 * MIB, abs=0.06 * MIB)


def test_lines_page_does_not_colour_the_decorator_line(qtbot) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import Qt

    from perfview.qt.views.line_report_view import INC, LineReportView

    report = load(sample("memprof_text/titanic_memory_profile.txt")).lines
    assert report is not None
    view = LineReportView(report)
    qtbot.addWidget(view)
    lines = [view.model.index(r, 0).data() for r in range(view.model.rowCount())]
    entry = lines.index(18)
    assert view.model.index(entry, INC).data(Qt.ItemDataRole.BackgroundRole) is None
    grow = lines.index(54)
    colour = view.model.index(grow, INC).data(Qt.ItemDataRole.BackgroundRole)
    assert colour is not None
    assert colour.alpha() == max(
        c.alpha()
        for r in range(view.model.rowCount())
        if (c := view.model.index(r, INC).data(Qt.ItemDataRole.BackgroundRole)) is not None
    )
    assert "at line 54" in view.summary.text()
    assert np.isfinite(report.lines["increment_bytes"].to_numpy(np.float64)).any()
