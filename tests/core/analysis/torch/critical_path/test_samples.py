"""The critical path on every GPU trace among the real samples: per step its length lies within
80 %-100.5 % of the step, its categories add up to it, an empty what-if gives back the measured
step and halving every link halves it. Skips cleanly where the samples are absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfview.core.analysis.torch.critical_path import idle_gaps, path, what_if
from perfview.core.model import Timeline
from perfview.loaders import load
from tests.conftest import SAMPLES

GPU_DIRS = ("kineto_gpu", "ranks", "chrome_trace")


def _gpu_traces() -> list[str]:
    found = []
    for folder in GPU_DIRS:
        base = SAMPLES / folder
        if base.is_dir():
            found += [str(p.relative_to(SAMPLES)) for p in sorted(base.rglob("*")) if p.is_file()]
    return found or ["(no samples)"]


def _timeline(rel: str) -> Timeline:
    if rel == "(no samples)" or not (SAMPLES / rel).exists():
        pytest.skip(f"real samples folder {SAMPLES} is absent")
    tl = load(Path(SAMPLES / rel)).timeline
    if tl is None or not tl.is_torch:
        pytest.skip(f"{rel} is not a torch trace")
    kinds = set(tl.events["kind"].astype(str))
    if not kinds & {"kernel", "memcpy", "memset", "runtime"}:
        pytest.skip(f"{rel} has no GPU work")
    return tl


@pytest.mark.parametrize("rel", _gpu_traces())
def test_path_covers_the_step(rel: str) -> None:
    tl = _timeline(rel)
    steps = path.steps_table(tl)
    assert len(steps)
    ratio = steps["path_ns"] / steps["step_ns"]
    assert ((ratio >= 0.8) & (ratio <= 1.005)).all(), steps
    table = path.critical_path_table(tl)
    sums = table.groupby("step")["ns"].sum().to_dict()
    for row in steps.to_dict("records"):
        assert abs(int(sums[row["step"]]) - int(row["path_ns"])) <= len(table), row
        assert row["bound_by"] in set(table[table["step"] == row["step"]]["category"])


@pytest.mark.parametrize("rel", _gpu_traces())
def test_what_if_replays(rel: str) -> None:
    tl = _timeline(rel)
    same = what_if.what_if_table(tl, [])
    m = same["measured_ns"].to_numpy(np.float64)
    assert np.all(np.abs(same["predicted_ns"] - m) <= 0.01 * m)
    half = what_if.what_if_table(tl, ["all=0.5"])
    assert np.all(np.abs(half["predicted_ns"] - m / 2) <= 0.02 * m / 2)


@pytest.mark.parametrize("rel", _gpu_traces())
def test_idle_gaps_fit_in_the_steps(rel: str) -> None:
    tl = _timeline(rel)
    gaps = idle_gaps.idle_gaps(tl)
    frame = path.steps_of(tl)
    windows = dict(zip(frame["step"], frame["end_ns"] - frame["start_ns"], strict=True))
    assert (gaps["idle_ns"] > 0).all()
    assert set(gaps["cause"]) <= set(idle_gaps.CAUSES)
    for (step, stream), part in gaps.groupby(["step", "stream"]):
        assert part["idle_ns"].sum() <= windows[step], (step, stream)
