"""A frame's merge of the slices in view (level 0 of `FlameIndex`, the Timeline zoomed in)
goes through the compiled merge once numba is loaded and gives numpy's rects bit for bit, at
whole-pixel and sub-pixel-row widths (`min_px` > 1, the raster path) alike: in numpy a frame
merging ~100k slices cost 12 ms of the 16 ms a frame has, compiled 2 ms."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.layout import layout_kernels, timeline_layout
from perfview.loaders import load
from tests.conftest import sample

FIELDS = ("x0", "x1", "row", "node", "bucket", "count")


@pytest.fixture(scope="module", autouse=True)
def compiled_steps() -> None:
    layout_kernels.warm()  # compiles once (cached on disk), like the compile-ahead child


@pytest.mark.parametrize("min_px", [1.0, 2.5, 8.0])
def test_a_zoomed_in_frame_merges_compiled_as_numpy_does(
    min_px: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    timeline = load(sample("kineto_gpu/hta_nccl_data.json.gz")).timeline
    assert timeline is not None
    index = timeline_layout.prepare_timeline(timeline).index
    lo, hi = index.x_min, index.x_max
    calls: list[int] = []
    kernels = layout_kernels.kernels

    def counted() -> object:
        calls.append(1)
        return kernels()

    for share in (1.0, 0.3, 0.05, 0.002):
        width = (hi - lo) * share
        x_lo = lo + (hi - lo) * 0.4
        px_per_unit = 1400 / width
        for rows in (None, (2, 9)):
            monkeypatch.setattr(layout_kernels, "ready", lambda n: False)
            want = index._levels[0].query(x_lo, x_lo + width, px_per_unit, min_px, rows)
            monkeypatch.setattr(layout_kernels, "ready", lambda n: True)
            monkeypatch.setattr(layout_kernels, "kernels", counted)
            got = index._levels[0].query(x_lo, x_lo + width, px_per_unit, min_px, rows)
            monkeypatch.setattr(layout_kernels, "kernels", kernels)
            for name in FIELDS:
                assert np.array_equal(getattr(got, name), getattr(want, name)), name
            assert got.count.sum() == want.count.sum()
    assert calls  # the compiled merge ran
