"""Job timeline: every rank on one time axis, one track per rank, from the reductions alone.

Each rank's track shows its ProfilerSteps (thin grey bars, alternating shades) and its NCCL/RCCL
kernels (coloured by collective kind), after clock alignment. It reads only the per-rank
reductions, so it opens for a 1,024-rank job without any rank's full events; click a rank in the
Ranks page to see one rank's full timeline. Bars are drawn with one BarGraphItem per layer
(a single QPicture each), not one item per kernel.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from perfview.core.analysis.torch.job import Job
from perfview.core.analysis.torch.job_views import arrivals
from perfview.core.model.units import format_ns

KIND_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


class JobTimeline(QWidget):
    """Steps and collective kernels of every rank, x in ms from the job's first step."""

    def __init__(self, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.comms = arrivals(job)
        self.origin = self._origin()
        self.plot = pg.PlotWidget(parent=self, background="w")
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().invertY(True)
        self.plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.plot.setLabel("bottom", "ms since the first step (aligned clocks)")
        self.plot.setLabel("left", "rank")
        self.legend = QLabel(self)  # above the plot: pyqtgraph's legend sat on the bars
        self.legend.setContentsMargins(8, 4, 8, 0)
        self.kinds: list[str] = []
        self._draw_steps()
        self._draw_comms()
        ranks = [r.rank for r in job.ranks]
        every = max(1, len(ranks) // 24)
        self.plot.getAxis("left").setTicks(
            [[(i + 0.5, str(r)) for i, r in enumerate(ranks) if i % every == 0]]
        )
        self.hover = QLabel(" ", self)
        self.hover.setContentsMargins(8, 2, 8, 6)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)

    def _origin(self) -> int:
        starts = [
            int(r.steps["start_ns"].min()) + self.job.offsets.get(r.rank, 0)
            for r in self.job.ranks
            if len(r.steps)
        ]
        if starts:
            return min(starts)
        return int(self.comms["start_ns"].min()) if len(self.comms) else 0

    def _row(self) -> dict[int, int]:
        return {r.rank: i for i, r in enumerate(self.job.ranks)}

    def _draw_steps(self) -> None:
        row = self._row()
        x0, w, y, shade = [], [], [], []
        for red in self.job.ranks:
            off = self.job.offsets.get(red.rank, 0)
            s = red.steps
            x0.extend(((s["start_ns"] + off - self.origin) / 1e6).tolist())
            w.extend((s["dur_ns"] / 1e6).tolist())
            y.extend([row[red.rank] + 0.05] * len(s))
            shade.extend((s["step"] % 2).tolist())
        if not x0:
            return
        brushes = [pg.mkBrush("#c8c8c8" if k else "#e4e4e4") for k in shade]
        bars = pg.BarGraphItem(x0=x0, y0=y, width=w, height=0.18, brushes=brushes, pen=None)
        self.plot.addItem(bars)
        self._label_steps()

    def _label_steps(self) -> None:
        """Each step named on a top axis, over its middle on the first rank that has steps
        (the ranks' steps line up on the aligned clocks): the grey bars had no names."""
        first = next((r for r in self.job.ranks if len(r.steps)), None)
        if first is None:
            return
        s = first.steps
        off = self.job.offsets.get(first.rank, 0)
        mid = (s["start_ns"] + s["dur_ns"] / 2 + off - self.origin) / 1e6
        every = max(1, len(s) // 30)
        ticks = [
            (float(x), f"#{int(step)}")
            for i, (x, step) in enumerate(zip(mid, s["step"], strict=True))
            if i % every == 0
        ]
        self.plot.showAxis("top")
        top = self.plot.getAxis("top")
        top.setTicks([ticks, []])
        top.setLabel("ProfilerStep")

    def _draw_comms(self) -> None:
        c = self.comms
        if not len(c):
            return
        row = self._row()
        self.kinds = sorted(c["kind"].astype(str).unique().tolist())
        y = c["rank"].map(row).to_numpy(dtype=np.float64) + 0.3
        x0 = (c["start_ns"].to_numpy(dtype=np.float64) - self.origin) / 1e6
        w = c["dur_ns"].to_numpy(dtype=np.float64) / 1e6
        for i, kind in enumerate(self.kinds):
            sel = (c["kind"] == kind).to_numpy()
            color = KIND_COLORS[i % len(KIND_COLORS)]
            bars = pg.BarGraphItem(
                x0=x0[sel], y0=y[sel], width=w[sel], height=0.6, brush=color, pen=None, name=kind
            )
            self.plot.addItem(bars)
        self.legend.setText(
            "Collectives: "
            + " ".join(
                f'<span style="color:{KIND_COLORS[i % len(KIND_COLORS)]}">■</span> {escape(kind)}'
                for i, kind in enumerate(self.kinds)
            )
            + " · grey bars: each rank's ProfilerSteps"
        )

    def kernel_at(self, x_ms: float, y: float) -> pd.Series | None:
        """The collective kernel under view coordinates (ms, row), or None."""
        ranks = [r.rank for r in self.job.ranks]
        i = int(np.floor(y))
        if not len(self.comms) or not 0 <= i < len(ranks):
            return None
        t = self.origin + x_ms * 1e6
        c = self.comms
        hit = c[(c["rank"] == ranks[i]) & (c["start_ns"] <= t) & (c["end_ns"] >= t)]
        return None if not len(hit) else hit.iloc[0]

    def _on_move(self, pos: QPointF) -> None:
        point = self.plot.getViewBox().mapSceneToView(pos)
        hit = self.kernel_at(point.x(), point.y())
        if hit is None:
            self.hover.setText(" ")
            return
        self.hover.setText(
            f"rank {int(hit['rank'])}: {hit['kind']} on {hit['group']}, "
            f"{format_ns(float(hit['dur_ns']))}, {int(hit['bytes']):,} bytes"
        )


__all__ = ["JobTimeline"]
