"""Job timeline: every rank on one time axis, one row per rank, and any rank expanded to its events.

Each rank's row shows its ProfilerSteps (thin grey bars, alternating shades) and its NCCL/RCCL
kernels (coloured by collective kind), after clock alignment. It reads only the per-rank
reductions, so it opens for a 1,024-rank job without any rank's full events. Double-click a
rank (or "Expand all") to see its full tracks under its row, on the job's aligned clock: the
rank's file is opened on a worker (`documents.rank_tracks`, cached by the store) and drawn
by one `RectBatchItem` per expanded rank, placed by its transform (rank ns → job ms, rows
under the rank's row), except while rows are thinner than a pixel (many ranks in view):
then one `SubPixelRows` layer draws every rank's rows as one picture of tiles kept between
frames, so a frame costs the pixels that came into view, not ranks × slices. A search
highlights matching slices in every expanded rank; typed, it is made once the keys rest, on
a worker, and the picture it changes is drawn on the layer's worker, the last one shown
meanwhile. Bars are drawn with one BarGraphItem per layer (a single QPicture each), never
one item per event.
"""

from __future__ import annotations

import functools
from html import escape
from typing import Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QTransform
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from perfview.core.analysis.torch.job import Job
from perfview.core.analysis.torch.job_views import arrivals, critical_steps_table
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.model.progress import Progress
from perfview.core.model.units import format_ns
from perfview.documents.rank_tracks import RankTracks, rank_tracks
from perfview.qt.items.bars import Bars
from perfview.qt.items.quick_axis import quick_plot
from perfview.qt.items.rect_batch import RectBatchItem, highlighted
from perfview.qt.items.rules import Rules
from perfview.qt.items.sub_pixel_rows import SubPixelRows
from perfview.qt.tasks import Task

KIND_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")
LABEL_CHARS = 28  # a track's name on the left axis, cut to this many characters
RANK_LABEL_PX = 14  # ranks named on the left axis at least this far apart
SEARCH_DELAY_MS = 150  # a search typed is made once the keys have rested this long


class JobTimeline(QWidget):
    """Steps and collective kernels of every rank, x in ms from the job's first step; expanded
    ranks show their full tracks under their row.

    Signals: `expanded(rank)` once a rank's tracks are drawn, `expand_failed(rank, sentence)`."""

    expanded = Signal(int)
    expand_failed = Signal(int, str)
    searched = Signal(int)

    def __init__(self, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.comms = arrivals(job)
        self.bounds = critical_steps_table(job)  # per step, the rank on the job's critical path
        self.origin = self._origin()
        self.tracks: dict[int, tuple[RankTracks, RectBatchItem]] = {}  # expanded ranks
        self._queue: list[int] = []  # ranks waiting to be expanded, in order
        self._task: Task | None = None
        self._search_task: Task | None = None  # the typed search being made on a worker
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._search_off_thread)
        self._bars: list[pg.GraphicsObject] = []  # the step and collective layers
        # the top axis is shown once the steps are named (`_label_steps`)
        self.plot = quick_plot(shown=("left", "bottom"), parent=self, background="w")
        self.plot.setMenuEnabled(False)
        self.plot.getViewBox().invertY(True)
        self.plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.plot.setLabel("bottom", "ms since the first step (aligned clocks)")
        self.plot.setLabel("left", "rank")
        for side in ("top", "bottom"):
            # a height of their own, not the tick labels' in view: panning to where no step
            # is named resized the view, a new y scale for every tile the layer kept
            self.plot.getAxis(side).setStyle(autoExpandTextSpace=False)
        # every expanded rank's rows, while thinner than a pixel, as one tiled picture
        self.sub_pixel = SubPixelRows()
        self.sub_pixel.setZValue(10)
        self.plot.addItem(self.sub_pixel)  # the ranks' extent, where they are hidden
        self.plot.getViewBox().sigRangeChangedManually.connect(self.sub_pixel.moved_by_hand)
        self._rank_ticks: list[tuple[float, str]] = []  # (row, name) of every rank named
        self._track_ticks: list[tuple[float, str]] = []  # expanded ranks' thread names
        self._track_rows = np.zeros(0)  # their rows, in order (found by bisection a frame)
        self._shown_ticks: list[list[tuple[float, str]]] | None = None
        self.plot.getViewBox().sigYRangeChanged.connect(self._fit_row_labels)
        self.plot.getViewBox().sigResized.connect(self._fit_row_labels)
        self.legend = QLabel(self)  # above the plot: pyqtgraph's legend sat on the bars
        self.legend.setContentsMargins(8, 4, 8, 0)
        self.kinds: list[str] = []
        self._draw()
        self._label_steps()  # once: the steps do not move as the rows do
        self.hover = QLabel(" ", self)
        self.hover.setContentsMargins(8, 2, 8, 6)
        self.plot.scene().sigMouseMoved.connect(self._on_move)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._toolbar())
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)

    def _toolbar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 4, 8, 0)
        self.expand_all_button = QPushButton("Expand all ranks", self)
        self.expand_all_button.setToolTip(
            "Open every rank's trace and draw its full tracks under its row "
            "(double-click a rank to expand or collapse one)"
        )
        self.expand_all_button.clicked.connect(self.expand_all)
        self.collapse_button = QPushButton("Collapse all", self)
        self.collapse_button.clicked.connect(self.collapse_all)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find slices in expanded ranks")
        self.search.setClearButtonEnabled(True)
        # typed: searched once the keys rest, on a worker (64 ranks' names and highlights
        # took 45-185 ms, and their first frame 55-530 ms, a keystroke on the GUI thread)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.status = QLabel("Double-click a rank to see its events", self)
        bar.addWidget(self.expand_all_button)
        bar.addWidget(self.collapse_button)
        bar.addWidget(self.search, 1)
        bar.addWidget(self.status, 1)
        return bar

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
        """The first row of each rank: its summary row, then its tracks when expanded."""
        rows: dict[int, int] = {}
        at = 0
        for r in self.job.ranks:
            rows[r.rank] = at
            at += 1 + (self.tracks[r.rank][0].rows + 1 if r.rank in self.tracks else 0)
        return rows

    def rank_at(self, y: float) -> int | None:
        """The rank whose summary row or tracks hold view row `y`."""
        found = None
        for rank, first in self._row().items():
            if first <= y:
                found = rank
        last = self.job.ranks[-1].rank if self.job.ranks else None
        if found is None or (found == last and y >= self._rows_total()):
            return None
        return found

    def _rows_total(self) -> int:
        return sum(1 + (self.tracks[r][0].rows + 1 if r in self.tracks else 0) for r in self._row())

    # --- drawing ------------------------------------------------------------------------------
    def _draw(self) -> None:
        """(Re)draw the summary rows at their rows and place each expanded rank's tracks."""
        for item in self._bars:
            self.plot.removeItem(item)
        self._bars = []
        rows = self._row()
        self._draw_steps(rows)
        self._draw_comms(rows)
        self._draw_bounds(rows)
        if self.tracks:  # a rule above each rank: expanded, the ranks' tracks run together
            rules = Rules(list(rows.values()), pg.mkPen("#9a9aa6", width=1))
            rules.setZValue(5)
            self.plot.addItem(rules, ignoreBounds=True)
            self._bars.append(rules)
        for rank, (tracks, item) in self.tracks.items():
            shift_ms = (tracks.origin_ns + self.job.offsets.get(rank, 0) - self.origin) / 1e6
            item.setTransform(QTransform(1e-6, 0.0, 0.0, 1.0, shift_ms, rows[rank] + 1.0))
        self.sub_pixel.set_members([item for _tracks, item in self.tracks.values()])
        self._label_rows(rows)

    def _label_rows(self, rows: dict[int, int]) -> None:
        ranks = [r.rank for r in self.job.ranks]
        every = 1 if self.tracks else max(1, len(ranks) // 24)
        self._rank_ticks = sorted(
            (rows[r] + 0.5, f"rank {r}") for i, r in enumerate(ranks) if i % every == 0
        )
        self._track_ticks = []
        for rank, (tracks, _item) in self.tracks.items():
            self._track_ticks.extend(
                (rows[rank] + 1.0 + y, text.splitlines()[-1][:LABEL_CHARS])
                for y, text in tracks.labels  # a process's first thread: "process\nthread"
                if text
            )
        self._track_ticks.sort(key=lambda tick: tick[0])
        self._track_rows = np.fromiter((y for y, _t in self._track_ticks), float)
        self._shown_ticks = None
        self._fit_row_labels()
        self.plot.getAxis("left").setWidth(200 if self.tracks else None)
        self.plot.getViewBox().setMouseEnabled(x=True, y=bool(self.tracks))

    def _fit_row_labels(self, *_changed: object) -> None:
        """Name the rows in view on the left axis, again whenever the view moves up or down
        or its height changes. Ranks' names skip one that would overlap the one above (every
        rank expanded at 700 px: 64 names in 360 px were one grey smear). Threads' names are
        given only while the axis can draw them: pyqtgraph measures every name it is given
        before it finds them too many to draw, and every rank's threads (511 names at 64
        ranks) cost 24 ms of each frame that moved the view up or down, and of each rank's
        arrival. What the axis draws is the same (`tests/qt/test_job_timeline_frames.py`)."""
        box = self.plot.getViewBox()
        _x, (y0, y1) = box.viewRange()
        length = box.height()
        px_per_row = length / max(y1 - y0, 1e-9)
        ranks: list[tuple[float, str]] = []
        last = float("-inf")
        for y, text in self._rank_ticks:
            if (y - last) * px_per_row >= RANK_LABEL_PX:
                last = y
                if y0 - 1 <= y <= y1 + 1:  # beyond: pyqtgraph skips it, unmeasured
                    ranks.append((y, text))
        first = int(np.searchsorted(self._track_rows, y0 - 1, side="left"))
        stop = int(np.searchsorted(self._track_rows, y1 + 1, side="right"))
        threads = self._track_ticks[first:stop]
        seen = sum(y0 <= y <= y1 for y, _t in ranks) + sum(y0 <= y <= y1 for y, _t in threads)
        if seen * self._label_height() >= length:
            threads = []  # they would fill the axis: pyqtgraph would draw none of them
        ticks = [ranks, threads]
        if ticks != self._shown_ticks:
            self._shown_ticks = ticks
            self.plot.getAxis("left").setTicks(ticks)

    def _label_height(self) -> float:
        """A name's height as pyqtgraph counts it when it weighs how full the axis would be
        (its text rectangle's height × 0.8); a little under, so no level it would draw is
        dropped here."""
        font = self.plot.getAxis("left").style.get("tickFont") or QFont()
        return 0.8 * 0.95 * QFontMetricsF(font).height()

    def _draw_steps(self, rows: dict[int, int]) -> None:
        """Each rank's ProfilerSteps as thin bars, alternating shades: one item per shade
        (a brush per bar drew them one by one), from arrays read once (`_step_bars`)."""
        ranks, x0, width, dark = self._step_bars
        if not len(ranks):
            return
        y = _rows_of(ranks, rows) + 0.05
        for shade, colour in ((True, "#c8c8c8"), (False, "#e4e4e4")):
            sel = dark == shade
            if sel.any():
                bars = Bars(
                    x0=x0[sel], y0=y[sel], width=width[sel], height=0.18, brush=colour, pen=None
                )
                self.plot.addItem(bars)
                self._bars.append(bars)

    @functools.cached_property
    def _step_bars(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every rank's steps: (rank, start in job ms, width in ms, dark shade?), read once:
        the rows move as ranks expand, the steps do not (read again at every rank's arrival,
        64 ranks' steps were 110 ms of pandas on the GUI thread)."""
        ranks = [np.zeros(0, dtype=np.int64)]  # a job without steps: empty columns
        x0, width = [np.zeros(0)], [np.zeros(0)]
        dark = [np.zeros(0, dtype=bool)]
        for red in self.job.ranks:
            s = red.steps
            if not len(s):
                continue
            off = self.job.offsets.get(red.rank, 0)
            ns = s["start_ns"].to_numpy(dtype=np.int64) + (off - self.origin)  # exact
            ranks.append(np.full(len(s), red.rank, dtype=np.int64))
            x0.append(ns / 1e6)
            width.append(s["dur_ns"].to_numpy(dtype=np.float64) / 1e6)
            dark.append((s["step"].to_numpy(dtype=np.int64) % 2).astype(bool))
        return (
            np.concatenate(ranks), np.concatenate(x0), np.concatenate(width),
            np.concatenate(dark),
        )  # fmt: skip

    def _draw_bounds(self, rows: dict[int, int]) -> None:
        """The job's critical path across ranks: on each step, the step bar of the rank that
        bounds it (the one the others waited for at the step's collectives) outlined in red."""
        ranks, x0, w = self._bound_bars
        if not len(ranks):
            return
        bars = Bars(
            x0=x0, y0=_rows_of(ranks, rows), width=w, height=0.96,
            brush=pg.mkBrush(214, 39, 40, 28), pen=pg.mkPen("#d62728", width=1.5),
        )  # fmt: skip
        bars.setZValue(-1)  # behind the steps and collectives it frames
        self.plot.addItem(bars)
        self._bars.append(bars)

    @functools.cached_property
    def _bound_bars(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rank, start in job ms, width in ms) of each step's bar on the rank that bounds
        it, read once, as `_step_bars` (a step at a time in pandas: 7 ms at each arrival)."""
        by_rank = self.job.by_rank()
        ranks, x0, w = [], [], []
        for step, rank in self.bounds[["step", "rank"]].itertuples(index=False):
            red = by_rank.get(int(rank))
            if red is None:
                continue
            s = red.steps[red.steps["step"] == step]
            if not len(s):
                continue
            off = self.job.offsets.get(red.rank, 0)
            ranks.append(red.rank)
            x0.append((int(s["start_ns"].iloc[0]) + off - self.origin) / 1e6)
            w.append(int(s["dur_ns"].iloc[0]) / 1e6)
        return (
            np.asarray(ranks, dtype=np.int64), np.asarray(x0, dtype=np.float64),
            np.asarray(w, dtype=np.float64),
        )  # fmt: skip

    def bound_at(self, step: int) -> int | None:
        """The rank drawn as bounding `step` (the job's critical path), or None."""
        hit = self.bounds[self.bounds["step"] == step]
        return None if not len(hit) else int(hit["rank"].iloc[0])

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

    def _draw_comms(self, rows: dict[int, int]) -> None:
        parts = self._comm_bars
        if not parts:
            return
        self.kinds = [kind for kind, _ranks, _x0, _w in parts]
        for i, (kind, ranks, x0, w) in enumerate(parts):
            color = KIND_COLORS[i % len(KIND_COLORS)]
            bars = Bars(
                x0=x0, y0=_rows_of(ranks, rows) + 0.3, width=w, height=0.6, brush=color,
                pen=None, name=kind,
            )  # fmt: skip
            self.plot.addItem(bars)
            self._bars.append(bars)
        if not self.legend.text():
            self.legend.setText(
                "Collectives: "
                + " ".join(
                    f'<span style="color:{KIND_COLORS[i % len(KIND_COLORS)]}">■</span> '
                    f"{escape(kind)}"
                    for i, kind in enumerate(self.kinds)
                )
                + " · grey bars: each rank's ProfilerSteps · red outline: the rank that bounds"
                " the step (the critical path across ranks)"
            )

    @functools.cached_property
    def _comm_bars(self) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
        """Per collective kind, in name order: (kind, rank, start in job ms, width in ms),
        read once, as `_step_bars`."""
        c = self.comms
        if not len(c):  # no collectives: the table may have no columns either
            return []
        kinds = c["kind"].astype(str).to_numpy()
        ranks = c["rank"].to_numpy(dtype=np.int64)
        x0 = (c["start_ns"].to_numpy(dtype=np.float64) - self.origin) / 1e6
        w = c["dur_ns"].to_numpy(dtype=np.float64) / 1e6
        return [
            (kind, ranks[sel], x0[sel], w[sel])
            for kind in sorted(set(kinds.tolist()))
            for sel in [kinds == kind]
        ]

    # --- expanding ranks ----------------------------------------------------------------------
    def expand(self, rank: int) -> None:
        """Open `rank`'s trace on a worker and draw its tracks under its row (`expanded`)."""
        if rank in self.tracks or rank in self._queue or rank not in self.job.by_rank():
            return
        self._queue.append(rank)
        self._next()

    def expand_all(self) -> None:
        for red in self.job.ranks:
            self.expand(red.rank)

    def collapse(self, rank: int) -> None:
        if rank in self._queue:
            self._queue.remove(rank)
        gone = self.tracks.pop(rank, None)
        if gone is not None:
            self.plot.removeItem(gone[1])
            self._draw()

    def collapse_all(self) -> None:
        self._queue.clear()
        if self._task is not None:
            self._task.cancel()
        for _tracks, item in self.tracks.values():
            self.plot.removeItem(item)
        self.tracks.clear()
        self._draw()
        self.status.setText("Double-click a rank to see its events")

    def _next(self) -> None:
        if self._task is not None or not self._queue:
            return
        rank = self._queue[0]
        path = self.job.by_rank()[rank].path

        def load(progress: Progress) -> RankTracks:
            return rank_tracks(rank, path, progress)

        task = Task(load, name=f"rank {rank}'s events")
        task.progress.connect(
            lambda fraction, message: self.status.setText(
                f"Rank {rank}: {message} ({fraction:.0%}) · {len(self._queue) - 1} more waiting"
            )
        )
        task.finished.connect(self._on_tracks)
        task.failed.connect(lambda sentence: self._on_failed(rank, sentence))
        task.done.connect(lambda: self._on_done(rank))
        self._task = task
        task.start()

    def _on_tracks(self, tracks: RankTracks) -> None:
        if tracks.rank not in self._queue:  # collapsed while it loaded
            return
        names, codes = tracks.names, tracks.codes
        item = RectBatchItem(names=lambda nodes: names[codes[nodes]].tolist())
        item.set_index(tracks.index)
        item.setZValue(10)
        self.tracks[tracks.rank] = (tracks, item)
        self.plot.addItem(item)
        # asked for by the user, each rank's arrival redraws every rank's rows: on the
        # layer's worker, the last picture shown meanwhile (64 ranks: 64 redraws of ~100 ms)
        self.sub_pixel.redraw_later()
        self._draw()
        self._highlight(item, tracks)
        self.status.setText(
            f"{len(self.tracks)} of {len(self.job.ranks)} ranks expanded · "
            f"{sum(t.slices for t, _ in self.tracks.values()):,} slices"
        )
        self.expanded.emit(tracks.rank)

    def _on_failed(self, rank: int, sentence: str) -> None:
        self.status.setText(f"Rank {rank} could not be expanded: {sentence}")
        self.expand_failed.emit(rank, sentence)

    def _on_done(self, rank: int) -> None:
        """`rank`'s load ended: off the queue (unless collapsed meanwhile: then it is off
        already, and the next rank, now first, must not be dropped in its place)."""
        if rank in self._queue:
            self._queue.remove(rank)
        self._task = None
        self._next()

    # --- search and selection -----------------------------------------------------------------
    def find_slices(self, text: str) -> int:
        """Highlight the slices whose name contains `text` in every expanded rank; how many."""
        total = 0
        for tracks, item in self.tracks.values():
            total += self._highlight(item, tracks, text)
        self._say_found(text, total)
        return total

    def _say_found(self, text: str, total: int) -> None:
        """The search's count in the status line (blank for an empty search)."""
        if self.tracks:
            self.status.setText(f"{total:,} matching slices" if text else " ")

    def _search_off_thread(self) -> None:
        """The search box's text, searched in every expanded rank on a worker; the
        highlights are applied together when it is done (`searched` then says how many)."""
        text = self.search.text()
        if self._search_task is not None:
            self._search_task.cancel()
        ranks = [
            (rank, tracks, item.index)
            for rank, (tracks, item) in self.tracks.items()
            if item.index is not None
        ]

        def find(progress: Progress) -> tuple[str, dict[int, tuple[FlameIndex | None, int]]]:
            found: dict[int, tuple[FlameIndex | None, int]] = {}
            for rank, tracks, index in ranks:
                progress(len(found) / max(len(ranks), 1), "searching")  # raises if cancelled
                found[rank] = highlighted(index, tracks.matching(text)) if text else (None, 0)
            return text, found

        task = Task(find, name="search")
        task.finished.connect(self._on_searched)
        self._search_task = task
        task.start()

    def _on_searched(self, result: tuple[str, dict[int, tuple[FlameIndex | None, int]]]) -> None:
        text, found = result
        if text != self.search.text():
            return  # typed on since: that search is on its way
        # the user's own act: the new picture is drawn on the layer's worker, the last one
        # shown until it comes
        self.sub_pixel.redraw_later()
        total = 0
        for rank, (index, count) in found.items():
            entry = self.tracks.get(rank)
            if entry is not None:
                entry[1].set_highlight_index(index)
                total += count
        self._say_found(text, total)
        self.searched.emit(total)

    def _highlight(self, item: RectBatchItem, tracks: RankTracks, text: str | None = None) -> int:
        text = self.search.text() if text is None else text
        return item.set_highlight(tracks.matching(text) if text else None)

    def slice_at(self, x_ms: float, y: float) -> tuple[int, int] | None:
        """(rank, slice) drawn at view point (ms, row) in an expanded rank, or None."""
        rank = self.rank_at(y)
        if rank is None or rank not in self.tracks:
            return None
        item = self.tracks[rank][1]
        local = item.mapFromParent(QPointF(x_ms, y))
        node, _count = item.drawn_at(local.x(), local.y(), tolerance=self._tolerance())
        return None if node < 0 else (rank, node)

    def _tolerance(self) -> float:
        """Three pixels, in the rank's ns."""
        (x_lo, x_hi), _ = self.plot.getViewBox().viewRange()
        width = max(self.plot.getViewBox().width(), 1.0)
        return 3.0 * (x_hi - x_lo) / width * 1e6

    def describe(self, rank: int, node: int) -> str:
        tracks = self.tracks[rank][0]
        pos = tracks.index.position_of(node)
        rects = tracks.index.rects
        dur = float(rects.x1[pos] - rects.x0[pos]) if pos >= 0 else 0.0
        return f"rank {rank}: {tracks.name_of(node)}, {format_ns(dur)}"

    def _on_click(self, event: Any) -> None:
        point = self.plot.getViewBox().mapSceneToView(event.scenePos())
        if event.double():
            rank = self.rank_at(point.y())
            if rank is not None and point.y() < self._row()[rank] + 1:
                (self.collapse if rank in self.tracks else self.expand)(rank)
            return
        hit = self.slice_at(point.x(), point.y())
        for rank, (_tracks, item) in self.tracks.items():
            item.set_selected(hit[1] if hit is not None and hit[0] == rank else None)
        if hit is not None:
            self.hover.setText(self.describe(*hit))

    # --- hover --------------------------------------------------------------------------------
    def kernel_at(self, x_ms: float, y: float) -> pd.Series | None:
        """The collective kernel under view coordinates (ms, row), or None."""
        rank = self.rank_at(y)
        if not len(self.comms) or rank is None or y >= self._row()[rank] + 1:
            return None
        t = self.origin + x_ms * 1e6
        c = self.comms
        hit = c[(c["rank"] == rank) & (c["start_ns"] <= t) & (c["end_ns"] >= t)]
        return None if not len(hit) else hit.iloc[0]

    def _on_move(self, pos: QPointF) -> None:
        point = self.plot.getViewBox().mapSceneToView(pos)
        slice_hit = self.slice_at(point.x(), point.y())
        if slice_hit is not None:
            self.hover.setText(self.describe(*slice_hit))
            return
        hit = self.kernel_at(point.x(), point.y())
        if hit is None:
            self.hover.setText(" ")
            return
        self.hover.setText(
            f"rank {int(hit['rank'])}: {hit['kind']} on {hit['group']}, "
            f"{format_ns(float(hit['dur_ns']))}, {int(hit['bytes']):,} bytes"
        )


def _rows_of(ranks: np.ndarray, row: dict[int, int]) -> np.ndarray:
    """Each of `ranks`' first row (`JobTimeline._row`), as floats; every rank is a job's."""
    keys = np.fromiter(row.keys(), dtype=np.int64, count=len(row))
    firsts = np.fromiter(row.values(), dtype=np.float64, count=len(row))
    order = np.argsort(keys)
    out: np.ndarray = firsts[order][np.searchsorted(keys[order], ranks)]
    return out


__all__ = ["JobTimeline"]
