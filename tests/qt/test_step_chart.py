"""The painted step-breakdown chart: its ticks, bars, legend and hover text (no samples needed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor

from perfview.core.analysis.torch import overview
from perfview.qt.views.step_chart import BREAKDOWN_COLORS, StepBreakdownChart, nice_ticks

pytestmark = pytest.mark.gui


def _steps(n: int, **ns: float) -> pd.DataFrame:
    cols = {f"{name}_ns": np.full(n, float(ns.get(name, 0.0))) for name in overview.BREAKDOWN}
    frame = pd.DataFrame({"step": np.arange(5, 5 + n), **cols})
    frame["dur_ns"] = sum(frame[f"{name}_ns"] for name in overview.BREAKDOWN)
    return frame


def _colors(chart: StepBreakdownChart) -> set[str]:
    image = chart.grab().toImage()
    step = 3
    return {
        QColor(image.pixel(x, y)).name()
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    }


def test_nice_ticks_are_round_and_cover_the_top() -> None:
    assert nice_ticks(181.0).tolist() == [0, 50, 100, 150, 200]
    assert nice_ticks(9.0).tolist() == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(0.0).tolist() == [0, 1]


def test_bars_legend_and_hover(qtbot: Any) -> None:
    chart = StepBreakdownChart(_steps(3, kernel=90e6, dataloader=60e6, other=2e6))
    qtbot.addWidget(chart)
    chart.resize(800, 300)
    assert chart.labels == ["#5", "#6", "#7"]
    assert chart.legend_names == ["kernel", "dataloader", "other"]  # only the ones present
    painted = _colors(chart)
    assert {BREAKDOWN_COLORS[n] for n in ("kernel", "dataloader")} <= painted
    assert BREAKDOWN_COLORS["comm"] not in painted
    text = chart.bar_tooltip(1)
    assert text.startswith("<b>#6</b>: 152 ms")
    assert "Kernel: 90 ms (59.2 %)" in text
    assert "Communication" not in text
    left, right = chart._plot.left(), chart._plot.right()
    assert chart._bar_at(left + 1) == 0
    assert chart._bar_at(right - 1) == 2
    assert chart._bar_at(left - 5) is None


def test_more_steps_than_pixels_and_no_steps_paint(qtbot: Any) -> None:
    many = StepBreakdownChart(_steps(20_000, cpu_exec=5e6, runtime=1e6))
    qtbot.addWidget(many)
    many.resize(600, 300)
    assert {BREAKDOWN_COLORS["cpu_exec"], BREAKDOWN_COLORS["runtime"]} <= _colors(many)
    none = StepBreakdownChart(_steps(0), labels=[], x_title="recording")
    qtbot.addWidget(none)
    none.resize(600, 300)
    none.grab()  # axes only, no error
    assert none.legend_names == list(overview.BREAKDOWN)
