"""The Timeline zoomed to one kernel (issue 41's screenshot): `fit_event(row, fill)` makes the
slice span that share of the view, centred, its track in view; and
`scripts/fixtures/screenshot_timeline_zoom.py` picks the longest kernel of the middle step and
writes both pictures from the real window."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from perfview.loaders import load
from tests.conftest import ROOT, sample

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

NCCL = "kineto_gpu/hta_nccl_data.json.gz"
SCRIPT = ROOT / "scripts" / "fixtures" / "screenshot_timeline_zoom.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_timeline_zoom", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def view(qtbot: Any) -> Any:
    from perfview.qt.views.timeline_view import TimelineView

    timeline = load(sample(NCCL)).timeline
    assert timeline is not None
    v = TimelineView(timeline)
    qtbot.addWidget(v)
    v.resize(1200, 600)
    v.show()
    qtbot.waitExposed(v)
    return v


def _middle_step_longest_kernel(view: Any) -> int:
    """Independently of the script: the sample's steps by start, the middle one, and the
    longest kernel starting inside it."""
    ev = view.timeline.events
    names = ev["name"].astype(str)
    steps = ev[names.str.fullmatch(r"ProfilerStep#\d+") & ev["kind"].isin(["cpu_op", "annotation"])]
    step = steps.sort_values("ts").iloc[len(steps) // 2]
    kernels = ev[
        (ev["kind"] == "kernel")
        & (ev["ts"] >= step["ts"])
        & (ev["ts"] <= step["ts"] + step["dur"])
        & (np.asarray(view.event_row) >= 0)
    ]
    return int(kernels["dur"].idxmax())


def test_the_longest_kernel_of_the_middle_step_is_picked(view: Any) -> None:
    row = _script().pick_kernel(view.timeline, np.asarray(view.event_row) >= 0)
    assert row == _middle_step_longest_kernel(view)
    assert view.timeline.events["kind"].iat[row] == "kernel"
    named = str(view.timeline.events["name"].iat[row])
    assert _script().pick_kernel(view.timeline, np.asarray(view.event_row) >= 0, named) >= 0
    assert _script().pick_kernel(view.timeline, np.asarray(view.event_row) >= 0, "no such") == -1


def test_fit_event_with_a_fill_centres_the_kernel_on_that_share(view: Any) -> None:
    row = _middle_step_longest_kernel(view)
    ts = int(view.timeline.events["ts"].iat[row])
    dur = int(view.timeline.events["dur"].iat[row])
    view.select_event(row)
    view.fit_event(row, fill=0.5)
    lo, hi = view.x_range()
    assert hi - lo == pytest.approx(2 * dur, rel=1e-6)
    assert (lo + hi) / 2 == pytest.approx(ts + dur / 2, rel=1e-9)
    _, (top, bottom) = view.viewbox.viewRange()
    assert top <= view.event_row[row] < bottom  # its track scrolled into view
    assert view.selected_row == row
    assert view.details.title.text() == str(view.timeline.events["name"].iat[row])
    view.plot.grab()  # drawn: the kernel is one rect of its own, not merged
    assert view.batch.drawn_at(ts + dur / 2, float(view.event_row[row]) + 0.5) == (row, 1)


def test_the_script_writes_both_pictures_of_the_real_window(tmp_path: Any, view: Any) -> None:
    from PySide6.QtGui import QImage

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PERFVIEW_CACHE_DIR": str(tmp_path)}
    env.pop("DISPLAY", None)
    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), str(sample(NCCL)), "--size", "1024x700"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"kernel: row {_middle_step_longest_kernel(view)}," in done.stdout
    for name in ("timeline_zoomed_out_1024x700.png", "timeline_one_kernel_1024x700.png"):
        image = QImage(str(out / name))
        assert (image.width(), image.height()) == (1024, 700)
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), str(sample(NCCL)), "--kernel", "no such"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert missing.returncode == 2
    assert "no GPU kernel named 'no such'" in missing.stderr
