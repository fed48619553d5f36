"""CUDA memory snapshot pages: the active-memory timeline by allocation site, the segment map."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QSplitter, QVBoxLayout, QWidget

from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.units import format_bytes
from perfview.qt.document import Document
from perfview.qt.views.alloc_plots import SegmentMap, StackedBytesPlot


class CudaTimelineView(QWidget):
    """Active memory over the recorded history, stacked by the Python line that allocated it."""

    def __init__(self, snap: CudaSnapshot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snap = snap
        self.devices = sorted(snap.bands)
        self.device_box = QComboBox()
        for device in self.devices:
            self.device_box.addItem(f"cuda:{device}", device)
        self.device_box.setVisible(len(self.devices) > 1)
        x, labels, bands = snap.bands[self.devices[0]]
        self.chart = StackedBytesPlot(
            x, labels, bands, time_axis=snap.has_time, title=self._title(self.devices[0])
        )
        self.device_box.currentIndexChanged.connect(self._on_device)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.device_box)
        layout.addWidget(self.chart, 1)

    def _title(self, device: int) -> str:
        _, _, bands = self.snap.bands[device]
        peak = int(bands.sum(axis=0).max()) if bands.size else 0
        tr = self.snap.trace
        n = int((tr["device"].to_numpy() == device).sum())
        when = "" if self.snap.has_time else " — no time_us in this snapshot: x is the event index"
        return (
            f"cuda:{device}: active memory over {n:,} trace entries, peak {format_bytes(peak)}, "
            f"coloured by allocating Python line{when}"
        )

    def _on_device(self, index: int) -> None:
        device = self.devices[index]
        self.chart.set_data(*self.snap.bands[device])
        self.chart.summary.setText(self._title(device))


def segment_map(snap: CudaSnapshot) -> SegmentMap:
    """Blocks laid out inside their segments; segments ordered largest first."""
    seg = snap.segments
    order = np.lexsort((seg["segment"].to_numpy(), -seg["total_bytes"].to_numpy()))
    row_of = np.empty(len(seg), dtype=np.int64)
    row_of[seg["segment"].to_numpy()[order]] = np.arange(len(seg))
    blk = snap.blocks
    base = seg.set_index("segment")["address"].reindex(blk["segment"]).to_numpy()
    offsets = (blk["address"].to_numpy() - base).astype(np.float64)
    used = (blk["state"].astype(str) == "active_allocated").to_numpy()
    reserved = int(seg["total_bytes"].sum())
    active = int(blk["size_bytes"].to_numpy()[used].sum())
    title = (
        f"{len(seg):,} segments reserve {format_bytes(reserved)}; {used.sum():,} of "
        f"{len(blk):,} blocks are allocated ({format_bytes(active)}); grey: cached but free"
    )
    return SegmentMap(
        row_of[blk["segment"].to_numpy()],
        offsets,
        blk["size_bytes"].to_numpy().astype(np.float64),
        used,
        title,
    )


def make_cuda_page(name: str, document: Document) -> QWidget | None:
    snap = document.bundle.cuda_snapshot
    if snap is None:
        return None
    if name == "timeline" and snap.bands:
        return CudaTimelineView(snap)
    if name == "segments":
        from perfview.core.pages import PAGES
        from perfview.qt.views.answer_page import caption
        from perfview.qt.views.table_view import TableView

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(segment_map(snap))
        lower = QWidget()
        layout = QVBoxLayout(lower)
        layout.setContentsMargins(0, 0, 0, 0)
        # what used and free mean, beside torch's _memory_viz segsum (which counts them otherwise)
        layout.addWidget(caption(PAGES[name].definitions))
        layout.addWidget(TableView(document.table("segments"), None, key_column="address"))
        splitter.addWidget(lower)
        splitter.setSizes([3000, 2000])
        return splitter
    return None
