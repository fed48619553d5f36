"""The findings' text helpers look at each distinct name once instead of converting every row
(issue 20: at 1 GB the per-row conversions held the GIL for most of a second while the window
was drawing). They must give exactly what the per-row conversions gave."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import backends, loops
from perfview.loaders import load
from tests.conftest import sample

SAMPLES = (
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz",
)


def test_hip_runtime_as_before() -> None:
    seen = []
    for name in SAMPLES:
        tl = load(sample(name)).timeline
        assert tl is not None
        ev = tl.events
        names = ev.loc[ev["kind"] == "runtime", "name"]
        before = bool(len(names)) and bool(names.astype(str).str.startswith("hip").any())
        assert backends._runtime_is_hip(tl) == before
        seen.append(before)
    assert seen == [True, False]  # the ROCm sample's runtime calls are hip*, resnet's cuda*


def test_text_at_and_first_dims_as_before() -> None:
    tl = load(sample(SAMPLES[1])).timeline
    assert tl is not None
    ev = tl.events
    rows = np.flatnonzero((ev["kind"] == "cpu_op").to_numpy())[::7]
    for column in ("name", "shape"):
        before = np.asarray(ev[column].to_numpy()[rows].astype(str), dtype=object)
        assert list(loops._text_at(ev[column], rows)) == list(before)
    plain = pd.Series(["a", None, "b"], dtype=object)  # not categorical, with a missing value
    assert list(loops._text_at(plain, np.arange(3))) == ["a", "None", "b"]
    shapes = loops._text_at(ev["shape"], rows)
    text = pd.Series(shapes).astype(str)
    old = text.str.extract(r"^\[(\[[^\]]*\])", expand=False).fillna("")
    assert list(loops._first_dims(shapes)) == list(old)
    assert any(d != "" for d in loops._first_dims(shapes))
    assert len(loops._first_dims(np.zeros(0, dtype=object))) == 0
