"""CUDA snapshot pages against torch's own `torch.cuda._memory_viz`, on every snapshot we have.

`_memory_viz.segsum` prints the segment count, total reserved, total allocated and free
memory, and one line per segment of 20 MiB or more; its sizes are printed rounded, so the
test swaps its size formatter for one that prints whole bytes (the module's own arithmetic,
unchanged). `_memory_viz.memory` folds every block as `stream;state;frames size`: its sums
per state are the live (active) and free bytes. `_memory_viz.trace` prints each device's
history entry count.

Exact: segments, total reserved, total allocated (= the requested bytes of the Allocations
page), free (external + internal = reserved − allocated), the bytes per block state, the
flame graph's live bytes, the history's entries per device. By definition different (the
Segments page states it): segsum counts a live block's requested bytes as allocated and the
rounding up to the allocator's block size as internal free; the Segments page's `used` is the
block's whole size, so its `free` is segsum's less that rounding (2.5 MiB at most per segment on the
samples).
"""

from __future__ import annotations

import gzip
import io
import pickle
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.analysis import cuda_memory_views as views
from perfview.core.pages import PAGES
from perfview.loaders import load
from tests.conftest import DATA, SAMPLES

mv = pytest.importorskip("torch.cuda._memory_viz", reason="torch (its _memory_viz) absent")

FILES = [
    *sorted(SAMPLES.glob("cuda_memory_snapshot/*.pickle")),
    DATA / "cuda_snapshot_new.pickle",
    DATA / "cuda_snapshot_old.pickle.gz",
]
_SEG_LINE = re.compile(r"\] (\d+)B allocated, (\d+)B(?: \(([\d.]+)% internal\))? free")


class _DataOnly(pickle.Unpickler):
    """The snapshot as plain data: torch's snapshots hold no class references."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} refused")


def read_snapshot(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = _DataOnly(io.BytesIO(raw)).load()
    return data if isinstance(data, dict) else {"segments": data, "device_traces": []}


def segsum_exact(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """segsum's figures in whole bytes: its totals and its per-segment (total, free, % internal)."""
    monkeypatch.setattr(mv, "_format_size", lambda num: f"{int(num)}B")
    text = mv.segsum(data).split("\nLegend")[0]
    figures: dict[str, Any] = {
        key: int(value)
        for key, value in re.findall(r"^(segments|total_\w+): (\d+)", text, flags=re.MULTILINE)
    }
    figures["lines"] = [
        (int(m.group(1)), int(m.group(2)), float(m.group(3) or 0.0))
        for m in _SEG_LINE.finditer(text)
    ]
    return figures


def state_sums(data: dict[str, Any]) -> dict[str, int]:
    """Bytes per block state from `_memory_viz.memory`'s folded lines."""
    sums: dict[str, int] = defaultdict(int)
    for line in mv.memory(data, format_flamegraph=lambda text: text).splitlines():
        stack, size = line.rsplit(" ", 1)
        sums[stack.split(";")[1]] += int(size)
    return dict(sums)


def _ids() -> list[str]:
    return [p.name for p in FILES]


@pytest.fixture(params=FILES, ids=_ids())
def snapshot(request: pytest.FixtureRequest) -> tuple[dict[str, Any], Any]:
    path: Path = request.param
    if not path.exists():
        pytest.skip(f"{path} is absent")
    bundle = load(path)
    return read_snapshot(path), bundle


def test_segsum_totals_are_exact(snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    data, bundle = snapshot
    ref = segsum_exact(data, monkeypatch)
    snap = bundle.cuda_snapshot
    segments = views.segments_table(snap)
    allocations = views.allocations_table(snap)
    requested = int(allocations["requested_bytes"].sum())
    assert ref["segments"] == len(segments) == bundle.counts["segments"]
    assert ref["total_reserved"] == int(segments["total_bytes"].sum())
    assert ref["total_reserved"] == bundle.counts["reserved_bytes"]
    assert ref["total_allocated"] == requested
    assert ref["total_free"] == int(segments["total_bytes"].sum()) - requested


def test_segsum_segment_lines_differ_by_the_rounding(
    snapshot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per segment of 20 MiB or more, in segsum's order: the same total; segsum's free is the
    Segments page's free plus the rounding inside live blocks (used − requested)."""
    data, bundle = snapshot
    lines = segsum_exact(data, monkeypatch)["lines"]
    snap = bundle.cuda_snapshot
    table = views.segments_table(snap).sort_values(["total_bytes", "used_bytes", "segment"])
    table = table[table["total_bytes"] >= mv.PAGE_SIZE]
    allocations = views.allocations_table(snap)
    requested = allocations.groupby("segment")["requested_bytes"].sum()
    req = requested.reindex(table["segment"]).fillna(0).to_numpy(dtype=np.int64)
    assert len(lines) == len(table)
    total = table["total_bytes"].to_numpy()
    free = table["free_bytes"].to_numpy()
    rounding = table["used_bytes"].to_numpy() - req
    for (ref_total, ref_free, pct), t, f, r in zip(lines, total, free, rounding, strict=True):
        assert ref_total == t
        assert ref_free == f + r
        assert pct == pytest.approx(100.0 * r / max(ref_free, 1), abs=0.05)


def test_block_states_and_live_bytes_are_exact(snapshot: Any) -> None:
    data, bundle = snapshot
    sums = state_sums(data)
    snap = bundle.cuda_snapshot
    segments = views.segments_table(snap)
    assert sums.get("active_allocated", 0) == bundle.counts["active_bytes"]
    assert sums.get("active_allocated", 0) == int(segments["used_bytes"].sum())
    assert sum(v for k, v in sums.items() if k != "active_allocated") == int(
        segments["free_bytes"].sum()
    )
    assert bundle.tree.metrics["total_ns"][0] == sums.get("active_allocated", 0)


def test_history_entries_per_device_are_exact(snapshot: Any) -> None:
    """`trace` prints `len(entries)` per device with history; it stops at an `oom` entry
    without `device_free` (our small fixture's), where the lists' lengths are its figures."""
    data, bundle = snapshot
    try:
        text = mv.trace(data)
    except KeyError:
        text = "".join(
            f"Device {i} ---\n{len(d)} entries\n" for i, d in enumerate(data["device_traces"]) if d
        )
    ref = {
        int(m.group(1)): int(m.group(2))
        for m in re.finditer(r"Device (\d+) -+\n(\d+) entries", text)
    }
    timeline = views.timeline_table(bundle.cuda_snapshot)
    assert timeline.groupby("device").size().to_dict() == ref


def test_segments_page_states_what_used_and_free_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from perfview.cli import main

    definitions = PAGES["segments"].definitions
    assert "_memory_viz" in definitions["used"]
    assert "internal" in definitions["free"]
    assert main(["summary", str(FILES[-1]), "--view", "segments"]) == 0
    out = capsys.readouterr().out
    assert definitions["used"] in out


def test_segments_page_shows_the_definitions(qtbot) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("pytestqt")
    from PySide6.QtWidgets import QLabel

    from perfview.qt.document import Document
    from perfview.qt.views.cuda_memory_view import make_cuda_page

    page = make_cuda_page("segments", Document(load(DATA / "cuda_snapshot_old.pickle.gz")))
    assert page is not None
    qtbot.addWidget(page)
    texts = [label.text() for label in page.findChildren(QLabel)]
    assert any("_memory_viz" in text and "<b>used</b>" in text for text in texts)


def test_largest_free_block_per_segment(snapshot: Any) -> None:
    """_memory_viz prints no largest free block; the snapshot's own blocks are the reference:
    per segment, the largest block that is not active_allocated."""
    data, bundle = snapshot
    want = [
        max((b["size"] for b in seg["blocks"] if b["state"] != "active_allocated"), default=0)
        for seg in data["segments"]
    ]
    table = views.segments_table(bundle.cuda_snapshot).sort_values("segment")
    assert table["largest_free_bytes"].tolist() == want
