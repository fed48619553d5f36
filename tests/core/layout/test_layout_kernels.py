"""The compiled layout steps (core/layout/layout_kernels.py) give the numpy code's answers bit
for bit: the whole Timeline layout of every trace sample (rows, rects, every level of detail),
merges at many zooms on both colour paths, and the inputs they hand back to numpy."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.core.layout import flame, flame_cull, layout_kernels, timeline_layout
from perfview.core.layout.flame import Rects
from perfview.core.layout.timeline_layout import TimelineData
from perfview.core.model import Bundle
from perfview.loaders import FRESH, load
from tests.conftest import SAMPLES, sample

FOLDERS = ("kineto_gpu", "kineto_cpu", "chrome_trace")
FIELDS = ("x0", "x1", "row", "node", "bucket", "count")


def _traces() -> list[str]:
    """Every trace sample, as a path under the samples folder (none when it is absent: the
    tests taking them are then skipped)."""
    folders = [SAMPLES / folder for folder in FOLDERS if (SAMPLES / folder).is_dir()]
    return sorted(f"{f.name}/{p.name}" for f in folders for p in f.iterdir() if p.is_file())


def _bundle(rel: str) -> Bundle:
    path = sample(rel)
    bundle = load(path, options=FRESH)
    if bundle.timeline is None or not len(bundle.timeline.events):
        pytest.skip(f"{path.name} has no slices")
    return bundle


def _same_rects(a: Rects, b: Rects) -> None:
    for name in FIELDS:
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype, name
        assert np.array_equal(left, right), name


def _layout(bundle: Bundle, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> TimelineData:
    monkeypatch.setattr(layout_kernels, "ready", lambda n: compiled)
    assert bundle.timeline is not None
    return timeline_layout.prepare_timeline(bundle.timeline)


@pytest.fixture(scope="module", autouse=True)
def compiled_steps() -> None:
    layout_kernels.warm()  # compiles once (cached on disk), like the compile-ahead child


@pytest.mark.parametrize("rel", _traces())
def test_the_compiled_layout_is_the_numpy_layout(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _bundle(rel)
    reference = _layout(bundle, False, monkeypatch)
    got = _layout(bundle, True, monkeypatch)
    assert np.array_equal(got.event_row, reference.event_row)
    _same_index(got.index, reference.index)
    # the level-of-detail chain, also where a sample is small enough to be drawn directly
    chains = []
    for compiled in (False, True):
        monkeypatch.setattr(layout_kernels, "ready", lambda n, c=compiled: c)
        index = flame_cull.FlameIndex(reference.index.rects, direct_below=0, presorted=True)
        index.build_levels()
        chains.append(index)
    assert len(chains[0].state()[1]) > 1
    _same_index(chains[1], chains[0])


def _same_index(got: flame_cull.FlameIndex, reference: flame_cull.FlameIndex) -> None:
    assert got.state()[0] == reference.state()[0]
    levels, expected = got.state()[1], reference.state()[1]
    assert len(levels) == len(expected)
    for (rects, bounds, end_max), (rects_ref, bounds_ref, end_ref) in zip(
        levels, expected, strict=True
    ):
        _same_rects(rects, rects_ref)
        assert np.array_equal(bounds, bounds_ref)
        assert np.array_equal(end_max, end_ref)


@pytest.mark.parametrize("rel", _traces())
@pytest.mark.parametrize("dense_limit", [4_000_000, 0])  # exact colours, widest member's
def test_merges_at_every_zoom_match(
    rel: str, dense_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _bundle(rel)
    rects = _layout(bundle, False, monkeypatch).index.rects
    monkeypatch.setattr(flame_cull, "_DENSE_LIMIT", dense_limit)
    span = float(rects.x1.max() - rects.x0.min()) or 1.0
    for pixels in (10, 300, 1400, 20_000, 1_000_000, 50_000_000):
        px_per_unit = pixels / span
        monkeypatch.setattr(layout_kernels, "ready", lambda n: False)
        reference = flame_cull._merged(rects, px_per_unit)
        monkeypatch.setattr(layout_kernels, "ready", lambda n: True)
        got = flame_cull._merged(rects, px_per_unit)
        _same_rects(got, reference)
        _same_rects(got, flame_cull.merge(rects, px_per_unit, 1.0))


def test_ties_and_zero_length_slices_merge_as_numpy_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # one pixel column holding equal widths in two colours, zero-length slices and a wide one
    x0 = np.array([0.0, 0.1, 0.2, 0.2, 0.3, 0.3, 5.0, 9.0], dtype=np.float64)
    x1 = np.array([0.1, 0.2, 0.2, 0.2, 0.4, 0.3, 8.0, 9.0], dtype=np.float64)
    rects = Rects.make(x0, x1, np.zeros(8), None, np.array([2, 1, 0, 3, 2, 1, 0, 3]))
    monkeypatch.setattr(layout_kernels, "ready", lambda n: True)
    for px in (0.5, 1.0, 2.0, 9.0):
        _same_rects(flame_cull._merged(rects, px), flame_cull.merge(rects, px, 1.0))


def test_inputs_numpy_must_sort_go_the_numpy_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout_kernels, "ready", lambda n: True)
    ts = np.array([30, 10, 20, 5], dtype=np.int64)  # row 0 out of time order
    dur = np.array([1, 2, 3, 4], dtype=np.int64)
    row = np.array([0, 0, 1, 1])
    got = flame.layout_events(ts, dur, row)
    assert got.is_sorted()
    assert got.x0.tolist() == [10.0, 30.0, 5.0, 20.0]
    assert got.node.tolist() == [1, 0, 3, 2]
    by_row, _merge = layout_kernels.kernels()
    *_arrays, ordered = by_row(
        ts, dur, np.array([0, -1, 0, 0], np.int32), row.astype(np.int32), ts[:0]
    )
    assert ordered == -1  # a slice not drawn: the caller never passes one


def test_read_only_columns_are_copied_not_compiled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    ts = np.arange(10, dtype=np.int64)
    ts.flags.writeable = False  # as a cached column's memory map
    out = layout_kernels.plain(ts, np.int64)
    assert out.flags.writeable
    assert np.array_equal(out, ts)
    writeable = np.arange(3, dtype=np.int64)
    assert layout_kernels.plain(writeable, np.int64) is writeable
    monkeypatch.setattr(layout_kernels, "ready", lambda n: True)
    by_row = layout_kernels.kernels()[0]
    before = len(by_row.signatures)
    flame.layout_events(ts, np.ones(10, np.int64), np.zeros(10, np.int32))
    assert len(by_row.signatures) == before  # no new compile for read-only inputs


def test_small_inputs_stay_numpy_until_numba_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "numba", raising=False)
    assert not layout_kernels.ready(layout_kernels.MIN_SLICES - 1)


def test_the_window_compiles_them_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    from perfview.loaders import service

    assert not service.layout_compile_pending()  # compiled by the fixture above
    monkeypatch.setattr(layout_kernels, "compiled", lambda: False)
    assert service.layout_compile_pending()  # compile_ahead's child is started for it
    assert "layout_kernels.warm" in inspect.getsource(service._compile_all)
