"""Ranks page: one row per rank of a multi-rank run, the slowest highlighted.

Built from already loaded `RankTrace`s (the folder is loaded by a task in the main window), so
this view never touches files. A click (or double-click) on a rank emits `rank_opened` with
that rank's trace; the main window opens its bundle in a normal document tab.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from perfview.core.analysis.torch.ranks import RankTrace, ranks_table
from perfview.core.model.progress import Progress
from perfview.core.model.units import format_ns
from perfview.qt.models.table_model import DataFrameModel
from perfview.qt.tasks import Task
from perfview.qt.views.table_view import TableView

SLOW_COLOR = QColor(225, 87, 89, 70)
RANK_HEADERS = {"gpu_util_pct": "GPU util %", "vs_fastest_pct": "vs fastest %"}


class _RanksModel(DataFrameModel):
    """Table model that tints the slowest rank's row."""

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:  # type: ignore[override]
        if role == Qt.ItemDataRole.BackgroundRole and index.isValid():
            col = self.column_index("slowest") if "slowest" in self.column_names() else -1
            if col >= 0 and bool(self.raw(index.row(), col)):
                return QBrush(SLOW_COLOR)
        return super().data(index, role)


class RanksView(QWidget):
    """Heading with the slowest rank, then the ranks table. `rank_opened(RankTrace)`."""

    rank_opened = Signal(object)

    def __init__(self, traces: Sequence[RankTrace], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.traces = list(traces)
        self.frame: pd.DataFrame = ranks_table(self.traces)
        self.heading = QLabel(self._heading_text(), self)
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(8, 8, 8, 4)
        self.table = TableView(self.frame, None, kind="op", key_column="file",
                               headers=RANK_HEADERS, units={"rank": None, "steps": None},
                               stretch_column="file")  # fmt: skip
        # Swap in the tinting model, keeping the TableView's proxy and widgets.
        tinted = _RanksModel(self.frame, headers=RANK_HEADERS,
                             units={"rank": None, "steps": None}, parent=self.table)  # fmt: skip
        self.table.model = tinted
        self.table.proxy.setSourceModel(tinted)
        self.table.table.clicked.connect(lambda index: self.open_rank_at(index.row()))
        hint = QLabel("Click a rank to open its timeline in a new tab.", self)
        hint.setContentsMargins(8, 0, 8, 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(hint)
        layout.addWidget(self.table, 1)

    def _heading_text(self) -> str:
        n = len(self.frame)
        if not n:
            return "<h3>Ranks</h3>No trace files were found in this folder."
        slow = self.frame[self.frame["slowest"]]
        text = f"<h3>Ranks</h3>{n} rank{'s' if n != 1 else ''}."
        if len(slow) and n > 1:
            row = slow.iloc[0]
            text += (
                f" Slowest: <b>rank {int(row['rank'])}</b> "
                f"(mean step {format_ns(float(row['step_mean_ns']))}, "
                f"{float(row['vs_fastest_pct']):.1f} % above the fastest rank)."
            )
        return text

    def slowest_ranks(self) -> list[int]:
        return [int(r) for r in self.frame.loc[self.frame["slowest"], "rank"].tolist()]

    def trace_at(self, proxy_row: int) -> RankTrace | None:
        src = self.table.proxy.mapToSource(self.table.proxy.index(proxy_row, 0)).row()
        if src < 0:
            return None
        rank = int(self.table.model.raw(src, self.table.model.column_index("rank")))
        file = str(self.table.model.raw(src, self.table.model.column_index("file")))
        for trace in self.traces:
            if trace.rank == rank and trace.path.name == file:
                return trace
        return None

    def open_rank_at(self, proxy_row: int) -> None:
        trace = self.trace_at(proxy_row)
        if trace is not None:
            self.rank_opened.emit(trace)


def load_folder_task(folder: Path) -> Task:
    """A Task (not started) that loads every rank trace of `folder` → list[RankTrace]."""
    from perfview.core.analysis.torch.ranks import load_ranks, trace_files
    from perfview.core.model.errors import LoadError
    from perfview.loaders import load

    def work(progress: Progress) -> list[RankTrace]:
        files = trace_files(folder)
        if not files:
            raise LoadError(f"{folder} holds no .json / .json.gz trace files")
        progress(0.05, f"loading {len(files)} rank traces")
        traces = load_ranks(folder, load)
        progress(1.0, "done")
        return traces

    return Task(work, name=str(folder))


def open_rank_folder(window: Any, folder: str | Path) -> Task:
    """Load `folder` in the background, then add a Ranks tab to `window` (a MainWindow).

    Clicking a rank calls `window.open_bundle(bundle)`: the rank is already loaded, so its
    document tab opens at once on the Timeline.
    """
    folder = Path(folder)
    task = load_folder_task(folder)

    def shown(traces: list[RankTrace]) -> None:
        view = RanksView(traces)
        view.rank_opened.connect(lambda trace: window.open_bundle(trace.bundle))
        index = window.tabs.addTab(view, f"Ranks: {folder.name}")
        window.tabs.setTabToolTip(index, str(folder))
        window.tabs.setCurrentIndex(index)
        window.stack.setCurrentWidget(window.tabs)
        window.ranks_view = view  # the latest, for scripts and tests

    def failed(message: str) -> None:
        window.error_bar.show_message(f"perfview: cannot open {folder}: {message}", "error",
                                      task.traceback)  # fmt: skip

    task.finished.connect(shown)
    task.failed.connect(failed)
    window.track_task(task, folder, f"Loading ranks from {folder.name}…")
    task.start()
    return task


__all__ = ["RanksView", "load_folder_task", "open_rank_folder"]
