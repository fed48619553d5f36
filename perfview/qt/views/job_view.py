"""Job page: a multi-rank job opened from a folder, as tables and a rank × step heat map.

A job is a document of format "job" (`perfview.core.analysis.torch.job.document`); its pages are
the tabs of the page registry's "job" kind (`perfview.core.pages.tabs_for`), so the window and
`perfview summary FOLDER --view …` show the same pages by the same names. A page with a table
gets the generic sortable table of its `perfview summary` view; the others are built by their
registry `widget` key from `WIDGETS` (a job has no `Document` for `page_widgets.BUILDERS`).

The job is opened by `perfview.jobs.open_job` on a worker thread (`JobOpening`; ranks are parsed
in worker processes there), so the window only ever holds the per-rank reductions, never all
ranks' events. Neither the view nor the opening touches a window: they say what happened by
signals (`JobOpening.opened`/`failed`, `JobView.rank_opened`), which the window connects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from perfview.core import pages
from perfview.core.analysis.torch.job import Job, document, heatmap
from perfview.core.analysis.torch.job_views import lateness_by_step, stragglers_table
from perfview.core.model import Bundle
from perfview.core.model.progress import Progress
from perfview.core.model.units import Unit, format_ns
from perfview.core.pages import summary
from perfview.qt.tasks import Task
from perfview.qt.views.job_timeline import JobTimeline
from perfview.qt.views.rank_heatmap import RankHeatmap
from perfview.qt.views.run_browser import PreparedLogDir, RunBrowser
from perfview.qt.views.span_selector import POOLED, SpanChoice, SpanSelector
from perfview.qt.views.table_view import TableView

PLAIN: dict[str, Unit | None] = {
    "rank": None, "steps": None, "ranks": None, "last_rank": None, "first_rank": None,
    "seq": None, "times_last": None, "collectives": None, "instances": None, "bytes": Unit.BYTES,
}  # fmt: skip
RANK_PAGE = "timeline"  # the page a rank's own trace opens on: the rank is opened to be seen


class JobHeatMaps(QSplitter):
    """Lateness at each step's collectives over step time, rank × step: step times hide a
    straggler (every rank waits for it, so every step lasts as long); lateness does not."""

    def __init__(self, job: Job, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        late = "Lateness at the step's collectives (straggler: dark red)"
        self.late = RankHeatmap(lateness_by_step(job), late, self)
        self.heat = RankHeatmap(heatmap(job, "dur_ns"), "Step time per rank", self, relative=True)
        self.addWidget(self.late)
        self.addWidget(self.heat)


@dataclass(frozen=True)
class PreparedJob:
    """What a Job tab shows, computed off the GUI thread (`PreparedJob.of`, run by the opening
    task: 1,024 ranks' collectives take a while): the job document, the table of every page
    that has one (its `perfview summary` view, by page name) and the heading."""

    document: Bundle
    frames: dict[str, pd.DataFrame]
    heading: str
    # A log directory's job run with several spans per worker: what the span selector needs.
    spans: SpanChoice | None = None

    @classmethod
    def of(cls, doc: Bundle, spans: SpanChoice | None = None) -> PreparedJob:
        assert doc.job is not None, "a Job tab shows a document of format 'job'"
        tabs = pages.tabs_for(doc)
        frames = {tab.name: summary.summarize(doc, tab.table) for tab in tabs if tab.table}
        return cls(doc, frames, heading_html(doc.job, doc.title), spans)


def prepare_span(choice: SpanChoice, span: int) -> PreparedJob:
    """The Job tab's pages for one span of the run (or all pooled), from the reductions in
    memory: runs in the span selector's task, off the GUI thread."""
    from perfview.jobs.logdir import run_job, span_run

    run = choice.run if span == POOLED else span_run(choice.run, span)
    doc = document(run_job(run, choice.results), choice.folder)
    return PreparedJob.of(doc, dataclasses.replace(choice, current=span))


def heading_html(job: Job, title: str) -> str:
    """Ranks, clock, the worst straggler and the first warnings, as rich text."""
    text = f"<h3>Job {title}</h3>{len(job.ranks)} ranks · {job.clock}."
    worst = stragglers_table(job)
    if len(job.ranks) > 1 and len(worst) and int(worst["times_last"].iloc[0]) > 0:
        row = worst.iloc[0]
        text += (
            f" Straggler: <b>rank {int(row['rank'])}</b>, last at {int(row['times_last'])}"
            f" collectives, {format_ns(float(row['mean_lateness_ns']))} late on average."
        )
    for warning in job.warnings[:4]:
        text += f"<br><span style='color:#a33'>⚠ {warning}</span>"
    return text + "<br>Click a rank to open its timeline."


# How each job page without a table is built, by the registry's `widget` key.
WIDGETS: dict[str, Callable[[Job, QWidget], QWidget]] = {
    "rank-heatmap": JobHeatMaps,
    "job-timeline": JobTimeline,
}


class JobView(QWidget):
    """Heading (ranks, clock, warnings) over one tab per page of the "job" kind.

    `rank_opened(path, page)`: the user asked for one rank's own trace, to be opened like any
    file and shown on `page`. A click on a row of a table with a `rank` column (one row per
    rank: Ranks, Stragglers, Overlap) asks for that rank.
    """

    rank_opened = Signal(str, str)

    def __init__(self, prepared: PreparedJob, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tab_title = f"Job: {prepared.document.title}"
        self.heading = QLabel("", self)
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(8, 8, 8, 4)
        self.pages = QTabWidget(self)
        self.tables: dict[str, TableView] = {}
        self.widgets: dict[str, QWidget] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        self.span_selector: SpanSelector | None = None
        spans = prepared.spans
        if spans is not None and len(spans.labels) > 1:
            self.span_selector = SpanSelector(spans, prepare_span, self)
            self.span_selector.loaded.connect(self.show_prepared)
            layout.addWidget(self.span_selector)
        layout.addWidget(self.pages, 1)
        self.show_prepared(prepared)

    def show_prepared(self, prepared: PreparedJob) -> None:
        """Show a job's prepared pages (the opening's, or a span's the selector prepared),
        on the page that was shown."""
        doc = prepared.document
        assert doc.job is not None
        self.document = doc
        self.job: Job = doc.job
        self.tabs = pages.tabs_for(doc)
        self.frames = prepared.frames
        self.heading.setText(prepared.heading)
        shown = self.pages.currentIndex()
        while self.pages.count():
            old = self.pages.widget(0)
            self.pages.removeTab(0)
            if old is not None:
                old.deleteLater()
        self.tables.clear()
        self.widgets.clear()
        for tab in self.tabs:
            self.widgets[tab.name] = self._build(tab)
            self.pages.addTab(self.widgets[tab.name], tab.title)
        self.pages.setCurrentIndex(max(0, shown))

    def _build(self, tab: pages.PageTab) -> QWidget:
        if tab.table is None:
            return WIDGETS[tab.widget or ""](self.job, self)
        frame = self.frames[tab.name]
        table = TableView(frame, None, kind="op", units=PLAIN)
        self.tables[tab.name] = table
        if "rank" in frame.columns:
            table.table.clicked.connect(
                lambda index, name=tab.name: self.open_rank_at(index.row(), name)
            )
        page = pages.PAGES[tab.name]
        chart = page.charts.get(self.document.format)
        if chart is None and not page.definitions:
            return table
        from perfview.qt.views.answer_page import AnswerPage

        return AnswerPage(table, frame, chart, page.definitions)  # its chart and definitions

    def page_names(self) -> list[str]:
        return [tab.name for tab in self.tabs]

    def show_page(self, name: str) -> bool:
        """Bring a page to front by its registry name (`ranks`, …, `heatmap`, `job-timeline`)."""
        names = self.page_names()
        if name not in names:
            return False
        self.pages.setCurrentIndex(names.index(name))
        return True

    def path_at(self, proxy_row: int, page: str | None = None) -> str | None:
        """The trace file of the rank on row `proxy_row` (as sorted) of `page` (default: the
        first page, the one the view opens on)."""
        table = self.tables[page or self.tabs[0].name]
        src = table.proxy.mapToSource(table.proxy.index(proxy_row, 0)).row()
        if src < 0:
            return None
        rank = int(table.model.raw(src, table.model.column_index("rank")))
        reduction = self.job.by_rank().get(rank)
        return None if reduction is None else reduction.path

    def open_rank_at(self, proxy_row: int, page: str | None = None) -> None:
        path = self.path_at(proxy_row, page)
        if path is not None:
            self.rank_opened.emit(path, RANK_PAGE)


def open_job_task(folder: Path) -> Task:
    """A Task (not started) that opens `folder` → a PreparedJob when it is one multi-rank run
    (each worker's spans pooled), else a PreparedLogDir for the run browser (the documents
    hold per-file reductions only, never every rank's events)."""
    from perfview.jobs.logdir import (
        logdir_document,
        open_logdir,
        run_job,
        span_count,
        span_labels,
    )

    def work(progress: Progress) -> PreparedJob | PreparedLogDir:
        progress(0.02, "parsing traces in worker processes")
        logdir = open_logdir(
            folder,
            progress=lambda done, total: progress(0.9 * done / total, f"{done}/{total} traces"),
            live=True,
        )
        if len(logdir.runs) != 1 or not (logdir.runs[0].is_job or len(logdir.runs[0].files) == 1):
            return PreparedLogDir(logdir_document(logdir))
        run = logdir.runs[0]
        progress(0.95, "matching collectives across ranks")
        spans = None
        if span_count(run) > 1:  # a repeating schedule: a span selector over the cycles
            labels = span_labels(logdir, run)
            spans = SpanChoice(run, dict(logdir.results), folder, POOLED, labels)
        return PreparedJob.of(document(run_job(run, logdir.results), folder), spans)

    return Task(work, name=str(folder))


class JobOpening(QObject):
    """Opens `folder` as a job in the background and says how it went, touching no window.

    `opened(JobView | RunBrowser)`: the job's view, or a log directory's run browser, ready
    for a tab (`tab_title`; its `document.path` is the folder). `failed(text, details)`: one
    sentence to show and the traceback behind it.
    `task` is the background work, for a status bar's progress and Cancel; `status` says what
    it does. Not started: connect, then `start()`. It deletes itself once the task is done.
    """

    opened = Signal(object)
    failed = Signal(str, str)

    def __init__(self, folder: str | Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = Path(folder)
        self.status = f"Opening the traces of {self.folder.name}…"
        self.task = open_job_task(self.folder)
        self.task.finished.connect(self._on_finished)
        self.task.failed.connect(self._on_failed)
        self.task.done.connect(self.deleteLater)

    def start(self) -> Task:
        self.task.start()
        return self.task

    def _on_finished(self, prepared: PreparedJob | PreparedLogDir) -> None:
        if isinstance(prepared, PreparedLogDir):
            self.opened.emit(RunBrowser(prepared))
        else:
            self.opened.emit(JobView(prepared))

    def _on_failed(self, message: str) -> None:
        text = f"perfview: cannot open {self.folder}: {message}"
        self.failed.emit(text, self.task.traceback)


__all__ = [
    "WIDGETS",
    "JobHeatMaps",
    "JobOpening",
    "JobView",
    "PreparedJob",
    "heading_html",
    "open_job_task",
    "prepare_span",
]
