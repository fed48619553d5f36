"""Job page: a multi-rank job opened from a folder, as tables and a rank × step heat map.

The job is opened by `perfview.jobs.open_job` on a worker thread (ranks are parsed in worker
processes there), so the window only ever holds the per-rank reductions, never all ranks'
events. Pages: Ranks, Collectives (every matched instance), Collective kinds, Stragglers,
Overlap and Heat map (lateness and step time, rank × step). Clicking a rank row opens that
one rank's trace as a normal document on its Timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from perfview.core.analysis.torch.job import Job, heatmap
from perfview.core.analysis.torch.job_views import JOB_VIEWS, job_table, lateness_by_step
from perfview.core.model.progress import Progress
from perfview.core.model.units import Unit, format_ns
from perfview.qt.tasks import Task
from perfview.qt.views.job_timeline import JobTimeline
from perfview.qt.views.rank_heatmap import RankHeatmap
from perfview.qt.views.table_view import TableView

PAGES = ("ranks", "collectives", "collective-kinds", "stragglers", "overlap")
PLAIN: dict[str, Unit | None] = {
    "rank": None, "steps": None, "ranks": None, "last_rank": None, "first_rank": None,
    "seq": None, "times_last": None, "collectives": None, "instances": None, "bytes": Unit.BYTES,
}  # fmt: skip


class JobView(QWidget):
    """Heading (ranks, clock, warnings) over one tab per job table and the heat map.

    `rank_opened(str)` carries the path of the rank the user clicked.
    """

    rank_opened = Signal(str)

    def __init__(self, job: Job, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.frames: dict[str, pd.DataFrame] = {name: job_table(job, name) for name in PAGES}
        self.heading = QLabel(self._heading_text(title), self)
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(8, 8, 8, 4)
        self.pages = QTabWidget(self)
        self.tables: dict[str, TableView] = {}
        for name in PAGES:
            table = TableView(self.frames[name], None, kind="op", units=PLAIN)
            self.tables[name] = table
            self.pages.addTab(table, JOB_VIEWS[name][0])
        self.heat = RankHeatmap(heatmap(job, "dur_ns"), "Step time per rank", self)
        self.late = RankHeatmap(
            lateness_by_step(job), "Lateness at the step's collectives (straggler: bright)", self
        )
        maps = QSplitter(Qt.Orientation.Vertical, self)
        maps.addWidget(self.late)
        maps.addWidget(self.heat)
        self.pages.addTab(maps, "Heat map")
        self.timeline = JobTimeline(job, self)
        self.pages.addTab(self.timeline, "Timeline")
        self.tables["ranks"].table.clicked.connect(lambda index: self.open_rank_at(index.row()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.pages, 1)

    def _heading_text(self, title: str) -> str:
        job = self.job
        text = f"<h3>Job {title}</h3>{len(job.ranks)} ranks · {job.clock}."
        worst = self.frames["stragglers"]
        if len(job.ranks) > 1 and len(worst) and int(worst["times_last"].iloc[0]) > 0:
            row = worst.iloc[0]
            text += (
                f" Straggler: <b>rank {int(row['rank'])}</b>, last at {int(row['times_last'])}"
                f" collectives, {format_ns(float(row['mean_lateness_ns']))} late on average."
            )
        for warning in job.warnings[:4]:
            text += f"<br><span style='color:#a33'>⚠ {warning}</span>"
        return text + "<br>Click a rank to open its timeline."

    def show_page(self, name: str) -> None:
        """Bring a page to front by view name (`ranks`, …, `heatmap` or `timeline`)."""
        extra = {"heatmap": len(PAGES), "timeline": len(PAGES) + 1}
        index = PAGES.index(name) if name in PAGES else extra.get(name, 0)
        self.pages.setCurrentIndex(index)

    def slowest_ranks(self) -> list[int]:
        frame = self.frames["ranks"]
        return [int(r) for r in frame.loc[frame["slowest"], "rank"].tolist()]

    def path_at(self, proxy_row: int) -> str | None:
        table = self.tables["ranks"]
        src = table.proxy.mapToSource(table.proxy.index(proxy_row, 0)).row()
        if src < 0:
            return None
        rank = int(table.model.raw(src, table.model.column_index("rank")))
        return self.job.by_rank()[rank].path

    def open_rank_at(self, proxy_row: int) -> None:
        path = self.path_at(proxy_row)
        if path is not None:
            self.rank_opened.emit(path)


def open_job_task(folder: Path) -> Task:
    """A Task (not started) that opens the job in `folder` → Job (reductions only)."""
    from perfview.jobs import open_job

    def work(progress: Progress) -> Job:
        progress(0.02, "parsing ranks in worker processes")
        return open_job(
            [folder], progress=lambda done, total: progress(done / total, f"{done}/{total} ranks")
        )

    return Task(work, name=str(folder))


def open_job_folder(window: Any, folder: str | Path) -> Task:
    """Open `folder` as a job in the background, then add a Job tab to `window` (a MainWindow).

    A click on a rank opens that rank's file like any file, then shows its Timeline.
    """
    folder = Path(folder)
    task = open_job_task(folder)

    def open_rank(path: str) -> None:
        target = Path(path)

        def on_open(tab: Any) -> None:
            if Path(tab.document.path) == target:
                window.document_opened.disconnect(on_open)
                tab.show_view("timeline")

        window.document_opened.connect(on_open)
        window.open_path(target, remember=False)

    def shown(job: Job) -> None:
        view = JobView(job, folder.name)
        view.rank_opened.connect(open_rank)
        index = window.tabs.addTab(view, f"Job: {folder.name}")
        window.tabs.setTabToolTip(index, str(folder))
        window.tabs.setCurrentIndex(index)
        window.stack.setCurrentWidget(window.tabs)
        window.ranks_view = view  # the latest, for scripts and tests

    def failed(message: str) -> None:
        window.error_bar.show_message(f"perfview: cannot open {folder}: {message}", "error",
                                      task.traceback)  # fmt: skip

    task.finished.connect(shown)
    task.failed.connect(failed)
    window.track_task(task, folder, f"Opening the ranks of {folder.name}…")
    task.start()
    return task


__all__ = ["JobView", "open_job_folder", "open_job_task"]
