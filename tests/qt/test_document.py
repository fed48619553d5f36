"""Document: shared view state; ranges are int64 ns and must survive Qt's signal marshalling."""

from __future__ import annotations

from pathlib import Path

from perfview.core.model import Bundle
from perfview.qt.document import Document, Selection


def test_range_beyond_32_bits_reaches_listeners(qtbot) -> None:
    doc = Document(Bundle(format="pstats", path=Path("x.prof")))
    lo, hi = 3_000_000_000, 9_876_543_210_123  # 3 s .. 2.7 h in ns: both exceed 2**31
    with qtbot.waitSignal(doc.range_changed) as blocker:
        doc.set_range(hi, lo)
    assert blocker.args == [lo, hi]
    assert doc.range == (lo, hi)


def test_selection_emits_once_per_target(qtbot) -> None:
    doc = Document(Bundle(format="pstats", path=Path("x.prof")))
    seen: list[object] = []
    doc.selection_changed.connect(seen.append)
    doc.select(Selection("function", "main", source="a"))
    doc.select(Selection("function", "main", source="b"))  # same target from another view
    assert len(seen) == 1
