"""memray capture pages: memory over time with a range selection that drives a flame graph
of the allocations made in that range, and the leaks page (flame graph + table).

The peak flame graph is the generic icicle page (`bundle.tree` is the high-water-mark tree);
the allocations table is the generic table page.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from perfview.core.analysis import frame_filters, memray_views
from perfview.core.model.memray_model import MemrayCapture
from perfview.core.model.units import format_bytes, format_ns
from perfview.qt.document import Document
from perfview.qt.views.alloc_plots import StackedBytesPlot


class MemrayTemporalView(QWidget):
    """Heap and RSS over time; dragging the region shows what was allocated inside it."""

    def __init__(self, cap: MemrayCapture, document: Document | None = None) -> None:
        super().__init__()
        self.cap = cap
        self.document = document
        mem = cap.memory
        ts = mem["ts_ns"].to_numpy(dtype=np.int64)
        self.ts = ts
        x = (ts - ts[0]).astype(np.float64) if len(ts) else np.zeros(0)
        heap = mem["heap_bytes"].to_numpy(dtype=np.float64)
        rest = np.maximum(mem["rss_bytes"].to_numpy(dtype=np.float64) - heap, 0)
        peak = int(cap.meta.get("peak_bytes", 0))
        self.chart = StackedBytesPlot(
            x,
            ["heap (memory memray tracked)", "rest of the resident set (RSS − heap)"],
            np.vstack([heap, rest]) if len(x) else np.zeros((0, 0)),
            time_axis=True,
            title=f"{len(x):,} memory snapshots; heap peak {format_bytes(peak)}. Drag the "
            "shaded range: the flame graph below shows the allocations made inside it.",
            selectable=True,
        )
        self.range_label = QLabel()
        self.flame_holder = QWidget()
        self.flame_layout = QVBoxLayout(self.flame_holder)
        self.flame_layout.setContentsMargins(0, 0, 0, 0)
        self.flame: QWidget | None = None
        lower = QWidget()
        lay = QVBoxLayout(lower)
        lay.setContentsMargins(6, 0, 6, 0)
        lay.addWidget(self.range_label)
        lay.addWidget(self.flame_holder, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.chart)
        splitter.addWidget(lower)
        splitter.setSizes([2000, 3000])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.chart.range_selected.connect(self.select_range)
        if self.chart.region is not None:
            lo, hi = self.chart.region.getRegion()
            self.select_range(float(lo), float(hi))

    def select_range(self, lo_ns: float, hi_ns: float) -> None:
        """Show the flame graph of allocations made between lo_ns and hi_ns (since start)."""
        from perfview.qt.views.icicle_view import IcicleView

        if not len(self.ts):
            return
        rel = self.ts - self.ts[0]
        lo = int(np.searchsorted(rel, lo_ns, side="left")) - 1
        hi = int(np.searchsorted(rel, hi_ns, side="right")) - 1
        if hi_ns >= rel[-1]:  # past the last snapshot: what was allocated after it, too
            hi = len(rel) + 1
        sites = memray_views.range_sites(self.cap, lo, hi)
        self.range_label.setText(
            f"{format_ns(max(lo_ns, 0))} – {format_ns(hi_ns)}: {int(sites['count'].sum()):,} "
            f"allocations, {format_bytes(int(sites['size_bytes'].sum()))} allocated in range"
        )
        hidden = MEMRAY_HIDDEN  # what the user hid in the range before stays hidden
        if isinstance(self.flame, IcicleView) and self.flame.filter_bar is not None:
            hidden = frozenset(self.flame.hidden_keys)
        if self.flame is not None:
            self.flame_layout.removeWidget(self.flame)
            self.flame.deleteLater()
            self.flame = None
        if len(sites):
            self.flame = IcicleView(memray_views.site_tree(self.cap, sites), filters=hidden)
        else:
            self.flame = QLabel("Nothing was allocated in this range.")
        self.flame_layout.addWidget(self.flame)


# memray's own flame graphs hide the import system until its checkbox is ticked
MEMRAY_HIDDEN = frame_filters.HIDDEN_BY_DEFAULT["memray"]


def _leaks_page(document: Document, cap: MemrayCapture) -> QWidget:
    from perfview.qt.views.icicle_view import IcicleView
    from perfview.qt.views.table_view import TableView

    splitter = QSplitter(Qt.Orientation.Vertical)
    if len(cap.leaks):
        splitter.addWidget(
            IcicleView(memray_views.site_tree(cap, cap.leaks), filters=MEMRAY_HIDDEN)
        )
    splitter.addWidget(TableView(document.table("leaks"), None, key_column="location"))
    splitter.setSizes([3000, 2000])
    return splitter


def make_memray_page(name: str, document: Document) -> QWidget | None:
    cap = document.bundle.memray
    if cap is None:
        return None
    if name == "timeline":
        return MemrayTemporalView(cap, document)
    if name == "leaks":
        return _leaks_page(document, cap)
    return None
