"""A trace range written back as Chrome JSON loads again with the same slices, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from perfview.core.analysis.trace_export import overlapping, write_range
from perfview.loaders import FRESH, load
from tests.conftest import sample


@pytest.mark.parametrize(
    "rel",
    [
        "kineto_gpu/hta_nccl_data.json.gz",
        "chrome_trace/catapult_simple_trace.json",
        "chrome_trace/devtools_trace_chrome116.json",
    ],
)
def test_range_round_trip(rel: str, tmp_path: Path) -> None:
    source = sample(rel)
    tl = load(source).timeline
    assert tl is not None
    lo, hi = tl.duration_ns // 4, tl.duration_ns // 2
    out = tmp_path / "cut.json"
    n = write_range(tl, out, lo, hi, source=source.name)
    doc = json.loads(out.read_text(encoding="utf-8"))
    other = {"exported_by": "perfview", "range_ns": [lo, hi], "source": source.name}
    assert doc["otherData"] == other
    rows = overlapping(tl, lo, hi)
    assert n == len(rows) > 0
    back = load(out, options=FRESH).timeline
    assert back is not None
    assert len(back.events) == n
    want = np.sort(tl.events["ts"].to_numpy()[rows] + tl.origin_ns)
    got = np.sort(back.events["ts"].to_numpy() + back.origin_ns)
    np.testing.assert_array_equal(got, want)  # exact ns, absolute
    assert sorted(back.events["name"].astype(str)) == sorted(tl.events["name"].astype(str)[rows])
    ins = tl.instants["ts"].to_numpy()
    assert len(back.instants) == int(((ins >= lo) & (ins <= hi)).sum())
    # args survive: the same decoded args for the first kept slice
    first = int(rows[np.argmin(tl.events["ts"].to_numpy()[rows])])
    match = np.flatnonzero(back.events["ts"].to_numpy() + back.origin_ns == want[0])
    assert tl.args.get(first) in [back.args.get(int(r)) for r in match]
