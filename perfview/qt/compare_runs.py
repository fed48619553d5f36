"""Compare several runs per side in one tab: loading them all, then medians and verdicts.

File ▸ Compare… takes several files per side (separated by `;`); `MainWindow.open_compare`
splits them (`split_runs`) and starts a `RunsCompareJob` here, which loads every file
concurrently through `tasks.py` (one worker task each, in the status bar with progress and
Cancel), then builds every view's `core.compare.runs.RunsComparison` in one more task, so
nothing heavy runs on the GUI thread. A `RunsCompareTab` shows one sub-tab per view: per row
the median of each side, the change with its interval, and the verdict (docs/compare.md says
which statistics). Its Confidence box (90/95/99 %) recomputes every view's intervals and
verdicts from the samples each comparison kept (`core.compare.runs.with_confidence`), in a
worker task: no file is read again, and the GUI thread only swaps the tables in.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from perfview.compare_runs_cli import interval_text, method_line
from perfview.core.compare import significance
from perfview.core.compare.diff import MIN_SHARE_PCT
from perfview.core.compare.runs import RunsComparison, diff_runs_all, unit_of, with_confidence
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress
from perfview.qt.compare_job import TITLES, RunsLoader
from perfview.qt.models.table_model import DataFrameModel
from perfview.qt.tasks import Task

SEPARATOR = ";"
# The Confidence box's choices (%); the default is significance.DEFAULT_CONFIDENCE.
CONFIDENCES = (90, 95, 99)


def split_runs(text: str | Path) -> list[str]:
    """The files of one side of File ▸ Compare…: `a.prof; b.prof` (one file: a list of one)."""
    return [part.strip() for part in str(text).split(SEPARATOR) if part.strip()]


@dataclass
class RunsCompareResult:
    """Both sides' files and every view's comparison (errors per view that failed).

    Only paths are kept, not the loaded runs: ten bundles would stay in memory for as long as
    the tab, and the tables hold all the tab shows.
    """

    runs_a: list[Path]
    runs_b: list[Path]
    match: str
    comparisons: dict[str, RunsComparison]
    errors: dict[str, str] = field(default_factory=dict)
    # what a side's paths are: "runs", a job's "ranks", or "runs of a job" (job folders)
    what: str = "runs"
    sides: tuple[str, str] = ("", "")  # the two jobs' folders (with what == "ranks")

    def views(self) -> list[str]:
        return [*self.comparisons, *self.errors]


def build_jobs_result(
    paths_a: list[str], paths_b: list[str], progress: Progress
) -> RunsCompareResult:
    """Pure worker function: open every job (their ranks parsed and reduced in worker
    processes) and compare, every view: one job a side over its ranks
    (`core.compare.job_runs`), several runs of a job a side with one sample per run
    (`core.compare.job_sets`)."""
    from perfview import job_cli
    from perfview.cli_common import CliError
    from perfview.core.compare.job_runs import diff_job_runs_all
    from perfview.core.compare.job_sets import diff_job_sets_all

    everyone = [*paths_a, *paths_b]
    jobs = []
    for i, path in enumerate(everyone):
        progress(i / (len(everyone) + 1), f"opening the job {Path(path).name}")
        try:
            jobs.append(job_cli.open_side(path))
        except CliError as exc:
            raise LoadError(str(exc)) from exc
    progress(len(everyone) / (len(everyone) + 1), "comparing the jobs rank by rank")
    na = len(paths_a)
    if len(paths_a) == len(paths_b) == 1:
        comparisons, errors = diff_job_runs_all(jobs[0], jobs[1])
        ranks = [[Path(r.path) for r in job.ranks] for job in jobs]
        return RunsCompareResult(ranks[0], ranks[1], "basename", comparisons, errors, "ranks",
                                 (str(paths_a[0]), str(paths_b[0])))  # fmt: skip
    comparisons, errors = diff_job_sets_all(jobs[:na], jobs[na:])
    folders = [Path(p) for p in paths_a], [Path(p) for p in paths_b]
    return RunsCompareResult(folders[0], folders[1], "basename", comparisons, errors,
                             "runs of a job")  # fmt: skip


class JobsCompareJob(QObject):
    """Multi-rank jobs (folders of rank traces; one or several runs a side) compared over
    their ranks in one worker task; the same signals as `RunsCompareJob`, shown by the same
    `RunsCompareTab`."""

    finished = Signal(object)  # RunsCompareResult
    failed = Signal(str, str)
    cancelled = Signal()

    def __init__(
        self,
        paths_a: list[str],
        paths_b: list[str],
        track: Callable[[Task, Path, str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.sides = (list(paths_a), list(paths_b))
        self.paths = [Path(p) for p in [*paths_a, *paths_b]]
        self.track = track
        self.task: Task | None = None

    def start(self) -> None:
        a, b = self.sides
        task = Task(lambda progress: build_jobs_result(a, b, progress), name="compare jobs")
        task.finished.connect(self.finished.emit)
        names = " and ".join("; ".join(side) for side in self.sides)
        task.failed.connect(lambda message: self.failed.emit(names, message))
        task.cancelled.connect(self.cancelled.emit)
        self.task = task
        if self.track is not None:
            self.track(task, self.paths[-1], "Comparing the jobs rank by rank…")
        task.start()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()


def build_runs_result(
    runs_a: list[Bundle], runs_b: list[Bundle], match: str, progress: Progress
) -> RunsCompareResult:
    """Pure worker function: all comparisons of the B runs against the A runs."""
    comparisons, errors = diff_runs_all(runs_a, runs_b, match=match, progress=progress)
    paths_a, paths_b = [r.path for r in runs_a], [r.path for r in runs_b]
    return RunsCompareResult(paths_a, paths_b, match, comparisons, errors)


class RunsCompareJob(RunsLoader):
    """Load every run concurrently, then compare (`build_runs_result`); the first `n_a` files
    are side A. Loading, Cancel and the signals are `compare_job.RunsLoader`'s."""

    comparing = "Comparing runs…"

    def __init__(
        self,
        paths_a: list[str],
        paths_b: list[str],
        match: str = "basename",
        track: Callable[[Task, Path, str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__([Path(p) for p in [*paths_a, *paths_b]], track, parent)
        self.n_a = len(paths_a)
        self.match = match

    def compare(self, bundles: list[Bundle], progress: Progress) -> RunsCompareResult:
        return build_runs_result(bundles[: self.n_a], bundles[self.n_a :], self.match, progress)


def recompute(
    comparisons: dict[str, RunsComparison], confidence: float, progress: Progress
) -> dict[str, RunsComparison]:
    """Pure worker function: every comparison at another confidence (from its kept samples)."""
    out = {}
    for i, (view, c) in enumerate(comparisons.items()):
        progress(i / max(len(comparisons), 1), f"recomputing {view} at {confidence:.0%}")
        out[view] = with_confidence(c, confidence)
    return out


def display_frame(c: RunsComparison) -> pd.DataFrame:
    """Columns shown: verdict, keys, info, medians of the metric, change and its interval.

    The interval is one text column, as the CLI writes it (`[+2.5 %, +14.1 %]`, `unbounded`
    when too few samples reach the confidence): two columns of `-inf %` said less, wider."""
    m = c.metric
    cols = ["verdict", *[k for k in [*c.key, *c.info] if k != "nth"]]
    cols += [f"{m}_a", f"{m}_b", "change_pct"]
    frame = c.table[cols].copy()
    frame["interval"] = [
        interval_text(lo, hi)
        for lo, hi in zip(c.table["ci_low_pct"], c.table["ci_high_pct"], strict=True)
    ]
    frame["p_value"] = c.table["p_value"]
    frame["q_value"] = c.table["q_value"]  # Benjamini-Hochberg: the verdicts' own measure
    return frame


def _fit_columns(view: QTableView) -> None:
    view.resizeColumnsToContents()
    view.setColumnWidth(1, min(max(view.columnWidth(1), 60), 320))


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    return label


class RunsCompareTab(QWidget):
    """Header (both sides), the Confidence box with the current view's method line, and one
    table per view of the several-runs comparison.

    `recomputed(confidence)` is emitted once the tables show another confidence's verdicts.
    """

    recomputed = Signal(float)

    def __init__(self, result: RunsCompareResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = result
        self.header = QLabel(self.header_html(), self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.confidence = QComboBox(self)
        self.confidence.addItems([f"{c} %" for c in CONFIDENCES])
        first = next(iter(result.comparisons.values()), None)
        asked = round((first.confidence if first else significance.DEFAULT_CONFIDENCE) * 100)
        self.confidence.setCurrentIndex(
            CONFIDENCES.index(asked) if asked in CONFIDENCES else CONFIDENCES.index(95)
        )
        self.confidence.setToolTip(
            "Confidence of the intervals. The rows of a view are tested together "
            "(Benjamini-Hochberg: at most 100 − this % of the flagged rows are false alarms); "
            "the verdicts follow."
        )
        self.method = QLabel(self)
        self.method.setWordWrap(True)
        self.method.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 0, 4, 0)
        label = QLabel("Confidence")
        label.setBuddy(self.confidence)
        bar.addWidget(label)
        bar.addWidget(self.confidence)
        bar.addWidget(self.method, 1)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tables: dict[str, QTableView] = {}
        for name in result.views():
            self.tabs.addTab(self._make(name), TITLES.get(name, name))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)
        self._task: Task | None = None
        self.tabs.currentChanged.connect(lambda _i: self._show_method())
        self.confidence.currentIndexChanged.connect(self._confidence_changed)
        self._show_method()

    @property
    def title(self) -> str:
        r = self.result
        if r.what == "ranks":
            return f"{Path(r.sides[0]).name} ↔ {Path(r.sides[1]).name}"
        if r.what == "runs of a job":
            a, b = r.runs_a[0].name, r.runs_b[0].name
            return f"{len(r.runs_a)} runs of {a} ↔ {len(r.runs_b)} of {b}"
        return f"{len(r.runs_a)} runs ↔ {len(r.runs_b)} runs"

    def header_html(self) -> str:
        r = self.result
        names = [", ".join(Path(p).name for p in side) for side in (r.runs_a, r.runs_b)]
        samples = ""
        if r.what == "runs of a job":  # each run's folder, with its parent (the recording)
            names = [", ".join(f"{Path(p).parent.name}/{Path(p).name}" for p in side)
                     for side in (r.runs_a, r.runs_b)]  # fmt: skip
            samples = "; samples: the runs (each run's median over its ranks or steps)"
        if r.what == "ranks":  # the job's folder, then its first and last rank file
            pairs = zip(r.sides, (r.runs_a, r.runs_b), strict=True)
            names = [f"{Path(folder).name}/ ({Path(side[0]).name} … {Path(side[-1]).name})"
                     for folder, side in pairs]  # fmt: skip
            samples = ("; samples: each side's ranks (Ranks: each rank's steps, time outside "
                       "collectives; Collectives: each step's, median over the ranks)")  # fmt: skip
        return (
            f"<b>A</b> ({len(r.runs_a)} {r.what}) {names[0]} &nbsp;<b>vs</b>&nbsp; "
            f"<b>B</b> ({len(r.runs_b)} {r.what}) {names[1]}<br>"
            f"<small>per row: median of each side, the change and its interval{samples}; "
            f"verdicts: slower, faster, unchanged, noise (the interval spans 0), small (under "
            f"{MIN_SHARE_PCT:g} % of both sides: not tested)</small>"
        )

    def current_comparison(self) -> RunsComparison | None:
        views = self.view_names()
        index = self.tabs.currentIndex()
        name = views[index] if 0 <= index < len(views) else ""
        return self.result.comparisons.get(name)

    def _show_method(self) -> None:
        c = self.current_comparison()
        if c is None:
            self.method.setText("")
            return
        t = c.total
        total = f"{c.total_label}: {t.change_pct:+.1f} % {interval_text(t.low_pct, t.high_pct)}"
        self.method.setText(
            f"<small><b>{html.escape(total)} {t.verdict}</b> · "
            f"{html.escape(method_line(c))}</small>"
        )

    def selected_confidence(self) -> float:
        return CONFIDENCES[self.confidence.currentIndex()] / 100.0

    def _confidence_changed(self, _index: int) -> None:
        if self._task is not None:
            self._task.cancel()
        confidence = self.selected_confidence()
        comparisons = dict(self.result.comparisons)
        task = Task(lambda progress: recompute(comparisons, confidence, progress),
                    name="compare confidence")  # fmt: skip
        task.finished.connect(lambda out: self._apply(task, out, confidence))
        self._task = task
        self.confidence.setToolTip(f"Recomputing at {confidence:.0%}…")
        task.start()

    def _apply(self, task: Task, comparisons: dict[str, RunsComparison], confidence: float) -> None:
        if not shiboken6.isValid(self) or task is not self._task:  # closed, or superseded
            return
        self._task = None
        self.result.comparisons.update(comparisons)
        for name, c in comparisons.items():
            view = self.tables.get(name)
            if view is not None:
                view.model().set_frame(display_frame(c))  # type: ignore[attr-defined]
                _fit_columns(view)
        self._show_method()
        self.confidence.setToolTip(f"Intervals and verdicts at {confidence:.0%}")
        self.recomputed.emit(confidence)

    def view_names(self) -> list[str]:
        return self.result.views()

    def _make(self, name: str) -> QWidget:
        if name in self.result.errors:
            return _placeholder(f"No {TITLES.get(name, name).lower()} to compare: "
                                f"{self.result.errors[name]}")  # fmt: skip
        c = self.result.comparisons[name]
        m, unit = c.metric, unit_of(c.metric)
        model = DataFrameModel(display_frame(c), headers={
            f"{m}_a": "median A", f"{m}_b": "median B", "change_pct": "change %",
            "p_value": "p-value", "q_value": "q-value (BH)"},
            units={f"{m}_a": unit, f"{m}_b": unit})  # fmt: skip
        view = QTableView()
        view.setModel(model)
        view.verticalHeader().setVisible(False)
        _fit_columns(view)
        self.tables[name] = view
        return view


__all__ = [
    "JobsCompareJob",
    "RunsCompareJob",
    "RunsCompareResult",
    "RunsCompareTab",
    "build_jobs_result",
    "build_runs_result",
    "recompute",
    "split_runs",
]
