"""The cached Overview data: a hit equals a fresh computation table by table (values, dtypes),
a change of code, file or tables misses, and a table that would not read back exactly is
never stored. Its findings, found once, come back equal to a fresh search."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch import recommend
from perfview.core.analysis.torch.findings import Finding
from perfview.core.pages.data import OverviewData
from perfview.loaders import load
from perfview.store import overview_entries
from tests.loaders.cache_setup import loaded_copy, use_cache_dir

NCCL = "kineto_gpu/hta_nccl_data.json.gz"  # steps, GPUs, utilisation
CPU = "kineto_cpu/dtu_jc_resnet18_cpu_trace.json"  # no steps: the stand-in tables


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_cache_dir(tmp_path, monkeypatch, max_mb=500)


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert a.equals(b)
    assert list(a.dtypes) == list(b.dtypes)
    assert list(a.columns) == list(b.columns)


def assert_same(a: OverviewData, b: OverviewData) -> None:
    for name in ("devices", "steps", "utilization"):
        _same_frame(getattr(a, name), getattr(b, name))
    assert a.stats == b.stats
    assert a.findings is None
    assert b.findings is None
    assert (a.no_steps is None) == (b.no_steps is None)
    if a.no_steps is not None and b.no_steps is not None:
        for name in ("steps", "operators", "python"):
            _same_frame(getattr(a.no_steps, name), getattr(b.no_steps, name))
        assert a.no_steps.hint == b.no_steps.hint


@pytest.mark.parametrize("rel", [NCCL, CPU])
def test_reopen_reads_back_the_same_overview(rel: str, tmp_path: Path, cache_env: Path) -> None:
    bundle = loaded_copy(rel, tmp_path)
    assert bundle.timeline is not None
    first = overview_entries.overview_data(bundle)  # computed, stored in the background
    overview_entries.flush()
    assert overview_entries.entry_for(bundle.path).is_dir()
    again = load(bundle.path)
    assert again.timeline is not None
    hit = overview_entries.get(again.path, again.timeline)
    assert hit is not None
    assert_same(first, hit)
    assert_same(OverviewData.compute(again.timeline, findings=False), hit)
    if rel == NCCL:
        assert hit.stats.count == 3
        assert len(hit.utilization)
    else:
        assert hit.no_steps is not None
        assert len(hit.no_steps.operators)


def test_changes_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    other = loaded_copy(CPU, tmp_path)
    assert bundle.timeline is not None
    assert other.timeline is not None
    data = OverviewData.compute(bundle.timeline, findings=False)
    # made from other tables: dropped
    entry = overview_entries.put(bundle.path, OverviewData.compute(other.timeline, findings=False),
                           other.timeline)  # fmt: skip
    assert entry is not None
    assert overview_entries.get(bundle.path, bundle.timeline) is None
    assert not entry.exists()
    # other analysis code: another entry
    assert overview_entries.put(bundle.path, data, bundle.timeline) is not None
    monkeypatch.setattr(overview_entries, "code_id", lambda: "0123456789abcdef")
    assert overview_entries.get(bundle.path, bundle.timeline) is None
    monkeypatch.undo()
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")
    assert overview_entries.get(bundle.path, bundle.timeline) is not None
    # a changed file
    st = bundle.path.stat()
    os.utime(bundle.path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert overview_entries.get(bundle.path, bundle.timeline) is None


def test_damaged_entry_is_dropped(tmp_path: Path) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    assert bundle.timeline is not None
    entry = overview_entries.put(
        bundle.path, OverviewData.compute(bundle.timeline, findings=False), bundle.timeline
    )
    assert entry is not None
    manifest = entry / "manifest.json"
    raw = manifest.read_bytes()
    manifest.write_bytes(raw.replace(b'"count": 3', b'"count": 4'))
    assert overview_entries.get(bundle.path, bundle.timeline) is None
    assert not entry.exists()


def test_only_exact_tables_are_stored() -> None:
    frame = pd.DataFrame(
        {
            "i": np.array([1, 2**62], dtype=np.int64),
            "f": [0.1, np.nan],
            "s": pd.Series(["a", "b"], dtype="str"),
            "b": [True, False],
        }
    )
    back = overview_entries.frame_from_json(overview_entries.frame_to_json(frame))
    _same_frame(frame, back)
    with pytest.raises(overview_entries.NotExact):
        overview_entries.frame_to_json(frame.set_index("s"))
    with pytest.raises(overview_entries.NotExact):  # JSON has no tuples: it would be a list
        overview_entries.frame_to_json(pd.DataFrame({"x": pd.Series([(1, 2)], dtype=object)}))
    with pytest.raises(TypeError):  # not JSON at all: not stored (`put` returns None)
        overview_entries.frame_to_json(pd.DataFrame({"x": pd.Series([object()], dtype=object)}))


@pytest.mark.parametrize("rel", [NCCL, CPU])
def test_findings_found_once_read_back_equal(rel: str, tmp_path: Path) -> None:
    bundle = loaded_copy(rel, tmp_path)
    assert bundle.timeline is not None
    first = overview_entries.overview_data(bundle)
    assert first.findings is None  # not found yet: the tab's worker finds them
    done = overview_entries.with_findings(bundle, first)  # found, stored in the background
    overview_entries.flush()
    assert done.findings is not None
    assert overview_entries.findings_entry_for(bundle.path).is_dir()
    again = load(bundle.path)
    assert again.timeline is not None
    reopened = overview_entries.overview_data(again)  # the whole page, findings included
    fresh = recommend.recommendations(again.timeline)
    assert reopened.findings == fresh == done.findings
    assert all(isinstance(f.rows, tuple) for f in reopened.findings)
    assert overview_entries.with_findings(again, reopened) is reopened  # nothing left to find
    if rel == NCCL:
        assert fresh  # the sample has findings to store (their rows included)
        assert any(f.rows for f in fresh)


def test_findings_of_other_tables_or_code_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = loaded_copy(NCCL, tmp_path)
    other = loaded_copy(CPU, tmp_path)
    assert bundle.timeline is not None
    assert other.timeline is not None
    data = OverviewData.compute(bundle.timeline, findings=False)
    overview_entries.with_findings(bundle, data)
    overview_entries.flush()
    entry = overview_entries.findings_entry_for(bundle.path)
    assert entry.is_dir()
    monkeypatch.setattr(overview_entries, "code_id", lambda: "0123456789abcdef")
    assert overview_entries.overview_data(bundle).findings is None  # other code: not these
    monkeypatch.undo()
    use_cache_dir(tmp_path, monkeypatch, max_mb=500)
    assert overview_entries.overview_data(other).findings is None  # never found for that file
    moved = overview_entries.findings_entry_for(other.path)
    entry.rename(moved)  # another file's findings under this file's key: dropped
    assert overview_entries.overview_data(other).findings is None
    assert not moved.exists()


def test_only_exact_findings_are_stored() -> None:
    plain = Finding("t", "high", "e", "m", 0.25, 0.1, (1, 2**40), "f.py:3")
    found = [plain, Finding("u", "low", "e", "m", np.float64(1.5), 2.0)]
    assert overview_entries.findings_from_json(overview_entries.findings_to_json(found)) == found
    with pytest.raises(ValueError, match="JSON"):  # NaN is not JSON: found again on the next open
        overview_entries.findings_to_json([Finding("t", "low", "e", "m", float("nan"), 1.0)])
