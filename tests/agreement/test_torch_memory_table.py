"""The torch Memory page's allocation table says "not recorded" where the trace has no addresses.

Frees are paired with allocations by address. A 2021 Kineto trace records `[memory]` events
with "Bytes" but no "Addr": nothing can be paired, and "freed: no, addr 0" on every row
claimed that nothing was ever freed.
"""

from __future__ import annotations

import numpy as np

from perfview.core.pages.data import MemoryData
from perfview.loaders import load
from tests.conftest import sample

NO_ADDR = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
WITH_ADDR = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"


def test_rows_without_address_say_not_recorded() -> None:
    timeline = load(sample(NO_ADDR)).timeline
    assert timeline is not None
    shown = MemoryData.compute(timeline).shown
    assert len(shown) > 1000
    assert set(shown["freed"]) == {"not recorded"}
    assert shown["addr"].isna().all()  # blank, not 0
    assert shown["free_ts_ns"].isna().all()
    assert shown["lifetime_ns"].isna().all()


def test_rows_with_addresses_say_yes_or_no() -> None:
    timeline = load(sample(WITH_ADDR)).timeline
    assert timeline is not None
    data = MemoryData.compute(timeline)
    shown = data.shown
    assert set(shown["freed"]) <= {"yes", "no"}
    assert (shown["freed"] == "yes").sum() == int(data.allocations["freed"].sum())
    assert np.array_equal(shown["addr"].to_numpy(dtype=np.int64), data.allocations["addr"])


def test_memory_page_shows_not_recorded(qtbot) -> None:  # type: ignore[no-untyped-def]
    import pytest

    pytest.importorskip("pytestqt")
    from PySide6.QtCore import Qt

    from perfview.qt.views.torch_memory_view import TorchMemoryView

    timeline = load(sample(NO_ADDR)).timeline
    assert timeline is not None
    view = TorchMemoryView(timeline, data=MemoryData.compute(timeline))
    qtbot.addWidget(view)
    model = view.table.model
    header = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    row = {h: model.index(0, c).data() for c, h in enumerate(header)}
    assert row["freed"] == "not recorded"
    assert row["addr"] == ""
