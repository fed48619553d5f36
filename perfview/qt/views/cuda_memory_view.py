"""CUDA memory snapshot pages: the active-memory timeline by allocation site, the segment map."""

from __future__ import annotations

import html

import numpy as np
import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget

from perfview.core.analysis.cuda_memory_views import BEFORE, NO_STACK, band_stacks
from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.units import format_bytes
from perfview.qt.document import Document
from perfview.qt.tasks import Task
from perfview.qt.views.alloc_plots import SegmentMap, StackedBytesPlot


class CudaTimelineView(QWidget):
    """Active memory over the recorded history, stacked by the Python line that allocated it.
    Hovering a band shows the stack behind it under the plot, as memory_viz shows an
    allocation's frames (`cuda_memory_views.band_stacks`, found in a worker per device)."""

    stacks_found = Signal()  # the shown device's band stacks are in hand

    def __init__(self, snap: CudaSnapshot, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snap = snap
        self.stacks: dict[str, list[str]] = {}
        self._labels: list[str] = []
        self._found = False  # the shown device's stacks are in (`stacks` may lack a band's)
        self._generation = 0
        self.stack_panel = QLabel(HOVER_HINT)
        self.stack_panel.setTextFormat(Qt.TextFormat.RichText)
        self.stack_panel.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stack_panel.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.stack_panel.setWordWrap(True)
        self.stack_panel.setContentsMargins(8, 4, 8, 4)
        side = QScrollArea()
        side.setWidget(self.stack_panel)
        side.setWidgetResizable(True)
        side.setMinimumHeight(70)
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
        self.chart.band_hovered.connect(self.show_band)
        split = QSplitter(Qt.Orientation.Vertical)  # the stack under the plot, as memory_viz
        split.addWidget(self.chart)
        split.addWidget(side)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([4000, 1000])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.device_box)
        layout.addWidget(split, 1)
        self._find_stacks(labels)

    def _find_stacks(self, labels: list[str]) -> None:
        """Find the shown bands' stacks in a worker (a big snapshot's trace is sorted for it)."""
        self._generation += 1
        generation, snap = self._generation, self.snap
        self._labels, self.stacks, self._found = list(labels), {}, False
        task = Task(lambda _p: (generation, band_stacks(snap, labels)), name="band stacks")
        task.finished.connect(self._on_stacks)
        task.start()

    def _on_stacks(self, result: tuple[int, dict[str, list[str]]]) -> None:
        generation, stacks = result
        if generation != self._generation or not shiboken6.isValid(self):
            return
        self.stacks, self._found = stacks, True
        self.stacks_found.emit()

    def show_band(self, band: int) -> None:
        """Show band `band`'s site and stack in the side panel (the hint when -1)."""
        if not 0 <= band < len(self._labels):
            self.stack_panel.setText(HOVER_HINT)
            return
        label = self._labels[band]
        frames = self.stacks.get(label)
        if frames is None:
            if label in (BEFORE, NO_STACK):
                more = ""
            elif self._found:
                more = "<br><i>no stack recorded</i>"
            else:
                more = "<br><i>finding its stack…</i>"
            self.stack_panel.setText(f"<b>{html.escape(label)}</b>{more}")
            return
        python = [f for f in frames if _is_python_frame(f)]
        native = [f for f in frames if not _is_python_frame(f)]
        parts = [f"<b>{html.escape(label)}</b> — the stack that allocated most under it"]
        for title, group in (("Python, innermost first", python), ("C++, innermost first", native)):
            if group:
                lines = "<br>".join(html.escape(_short_frame(f)) for f in group)
                parts.append(
                    f"<i>{title}:</i><br><span style='font-family:monospace'>{lines}</span>"
                )
        self.stack_panel.setText("<br>".join(parts))

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
        self.stack_panel.setText(HOVER_HINT)
        self._find_stacks(self.snap.bands[device][1])


HOVER_HINT = "Hover a band to see the stack that allocated it."


def _is_python_frame(frame: str) -> bool:
    """A "name (file:line)" frame of a Python source file (the user's model code)."""
    where = frame.rpartition(" (")[2].rsplit(":", 1)[0]
    return where.endswith(".py") or where.startswith("<")


def _short_frame(frame: str, width: int = 110) -> str:
    """A C++ frame without its argument list ("at::native::empty_strided_cuda(…) (??:0)" →
    "at::native::empty_strided_cuda (??:0)"), cut to `width` characters."""
    name, sep, where = frame.rpartition(" (")
    if sep and name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i] if i > 0 else name
                break
        frame = f"{name} ({where}"
    return frame if len(frame) <= width else frame[: width - 1] + "…"


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
