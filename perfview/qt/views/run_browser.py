"""Run browser: a profile log directory's runs, workers and spans, and step time over spans.

A folder the window opens is read as TensorBoard's profiler plugin read a `--logdir`
(`perfview.jobs.logdir`): runs → workers → spans (one schedule cycle's file each), with the
date, step count and mean step time of each. Opening a span opens its file like any other
(`rank_opened(path, page)`, the signal a Job tab's ranks use, so the window's one hook
serves both); a run that is a multi-rank job opens as a Job tab (`folder_opened`); "Compare
with previous" opens the compare tab on this span and the one before it (`compare_requested`).
Below the tree, `SpanTrend` charts the mean step time of every span: did my change help?

The browser holds the runs table only (per span: a few numbers), never a trace's events. While
it is shown, `LogDirWatch` (`qt/views/logdir_watch.py`) re-reads the folder when a file in it
is completed, and `set_logdir` shows the new spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from perfview.core.model import Bundle
from perfview.core.model.logdir import LogDir
from perfview.core.model.units import format_ns
from perfview.qt.views.logdir_watch import LogDirWatch
from perfview.qt.views.span_trend import SpanTrend

SPAN_PAGE = "overview"  # the page a span opens on: its steps, as the browser shows them
COLUMNS = ("Run / worker / span", "Rank", "Started (UTC)", "Steps", "Mean step")
PATH_ROLE = Qt.ItemDataRole.UserRole  # a span item's file, a run item's folder
KIND_ROLE = Qt.ItemDataRole.UserRole + 1  # "run", "worker" or "span"


@dataclass(frozen=True)
class PreparedLogDir:
    """What a run browser shows, computed off the GUI thread: the log directory's document."""

    document: Bundle

    @property
    def logdir(self) -> LogDir:
        assert self.document.logdir is not None, "a run browser shows a 'logdir' document"
        return self.document.logdir


def _mean(steps: list[np.ndarray]) -> str:
    pooled = np.concatenate(steps) if steps else np.zeros(0)
    return format_ns(float(pooled.mean())) if len(pooled) else ""


def _item(
    parent: QTreeWidget | QTreeWidgetItem, texts: list[str], kind: str, path: str
) -> QTreeWidgetItem:
    item = QTreeWidgetItem(parent, texts)
    item.setData(0, PATH_ROLE, path)
    item.setData(0, KIND_ROLE, kind)
    for col in (3, 4):
        item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def previous_spans(logdir: LogDir) -> dict[str, str]:
    """Each span's file → the span to compare it with: the same worker's previous span, else
    the last span of the same worker in the nearest earlier run (a run of one process matches
    the earlier run's one process, whose PID differs)."""
    out: dict[str, str] = {}
    for at, run in enumerate(logdir.runs):
        for worker in run.workers:
            paths = [str(s.path) for s in worker.spans]
            out.update(zip(paths[1:], paths[:-1], strict=True))
            for earlier in reversed(logdir.runs[:at]):
                same = [w for w in earlier.workers if w.name == worker.name]
                if not same and len(earlier.workers) == 1 and len(run.workers) == 1:
                    same = list(earlier.workers)
                if same and same[0].spans and paths:
                    out[paths[0]] = str(same[0].spans[-1].path)
                    break
    return out


class RunBrowser(QWidget):
    """Heading, the runs → workers → spans tree, its buttons, and the span trend chart."""

    rank_opened = Signal(str, str)  # (a span's file, the page to show): open it like any file
    folder_opened = Signal(str)  # a job run's folder: open it as a Job tab
    compare_requested = Signal(str, str)  # (baseline file, this file): open the compare tab

    def __init__(self, prepared: PreparedLogDir, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = prepared.document
        self.tab_title = f"Runs: {self.document.title}"
        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(8, 8, 8, 4)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setStretchLastSection(False)  # numbers beside their labels
        self.tree.itemActivated.connect(lambda item, _col: self.open_item(item))
        self.tree.currentItemChanged.connect(lambda *_: self._enable())
        self.open_button = QPushButton("Open", self)
        self.open_button.clicked.connect(lambda: self.open_item(self.tree.currentItem()))
        self.compare_button = QPushButton("Compare with previous span", self)
        self.compare_button.clicked.connect(self.compare_current)
        self.trend = SpanTrend(prepared.logdir.table, self)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(8, 0, 8, 0)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.compare_button)
        buttons.addStretch(1)
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.heading)
        top_layout.addWidget(self.tree, 1)
        top_layout.addLayout(buttons)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.trend)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.set_logdir(prepared.logdir)
        self.watch = LogDirWatch(prepared.logdir, self)
        self.watch.updated.connect(self._on_update)

    def _on_update(self, logdir: LogDir, new: list[str]) -> None:
        names = ", ".join(Path(p).name for p in new[:3]) + (", …" if len(new) > 3 else "")
        self.set_logdir(logdir, f"{len(new)} new span(s) written: {names}")

    @property
    def logdir(self) -> LogDir:
        assert self.document.logdir is not None
        return self.document.logdir

    # --- content -------------------------------------------------------------------------------
    def set_logdir(self, logdir: LogDir, note: str = "") -> None:
        """Show `logdir` (a re-read of the same folder keeps what was expanded and chosen)."""
        chosen = self.tree.currentItem()
        keep = chosen.data(0, PATH_ROLE) if chosen is not None else None
        self.document.logdir = logdir
        self.tree.clear()
        self._span_items: list[QTreeWidgetItem] = []
        self._previous = previous_spans(logdir)
        table = logdir.table
        for run in logdir.runs:
            rows = table[table["run"] == run.name]
            label = run.name if run.name != "." else run.path.name
            job = f" (job of {len(run.workers)} ranks)" if run.is_job else ""
            run_item = _item(self.tree, self._texts(label + job, None, rows), "run", str(run.path))
            for worker in run.workers:
                spans = rows[rows["worker"] == worker.name]
                w_item = _item(run_item, self._texts(worker.name, worker.rank, spans), "worker", "")
                for _, span in spans.iterrows():
                    texts = self._texts(
                        f"span {span['span']}: {span['file']}", None, span.to_frame().T
                    )
                    self._span_items.append(_item(w_item, texts, "span", str(span["path"])))
                w_item.setExpanded(len(logdir.runs) <= 8)
            run_item.setExpanded(True)
        for col in range(len(COLUMNS)):
            self.tree.resizeColumnToContents(col)
        self.trend.set_table(table)
        self.heading.setText(self._heading(logdir, note))
        if keep:
            self.select_path(str(keep))
        self._enable()

    @staticmethod
    def _texts(label: str, rank: int | None, rows: pd.DataFrame) -> list[str]:
        started = str(rows["started"].min()) if len(rows) else ""
        steps = int(rows["steps"].sum()) if len(rows) else 0
        rank_text = "" if rank is None else str(rank)
        return [label, rank_text, started, str(steps), _mean(list(rows["step_ns"]))]

    @staticmethod
    def _heading(logdir: LogDir, note: str) -> str:
        spans = len(logdir.table)
        text = (
            f"<h3>Log directory {logdir.root.name}</h3>{len(logdir.runs)} runs · {spans} spans "
            "(one file per profiler schedule cycle). Double-click a span to open it, a job run "
            "to open it as a job."
        )
        if note:
            text += f"<br><b>{note}</b>"
        if logdir.pending:
            text += f"<br>{len(logdir.pending)} file(s) still being written: shown once whole."
        for failure in logdir.failures[:3]:
            text += f"<br><span style='color:#a33'>⚠ {failure}</span>"
        return text

    # --- actions -------------------------------------------------------------------------------
    def _enable(self) -> None:
        item = self.tree.currentItem()
        kind = item.data(0, KIND_ROLE) if item is not None else None
        self.open_button.setEnabled(kind == "span" or (kind == "run" and self._is_job(item)))
        self.compare_button.setEnabled(kind == "span" and self.previous_span(item) is not None)

    def _is_job(self, item: QTreeWidgetItem | None) -> bool:
        if item is None:
            return False
        path = Path(str(item.data(0, PATH_ROLE)))
        return any(run.path == path and run.is_job for run in self.logdir.runs)

    def open_item(self, item: QTreeWidgetItem | None) -> None:
        """A span opens as a file on its Overview; a job run as a Job tab; others expand."""
        if item is None:
            return
        kind = item.data(0, KIND_ROLE)
        if kind == "span":
            self.rank_opened.emit(str(item.data(0, PATH_ROLE)), SPAN_PAGE)
        elif kind == "run" and self._is_job(item):
            self.folder_opened.emit(str(item.data(0, PATH_ROLE)))

    def span_items(self) -> list[QTreeWidgetItem]:
        """Every span item, in tree order (run, worker, span)."""
        return list(self._span_items)

    def select_path(self, path: str) -> bool:
        for item in self._span_items:
            if item.data(0, PATH_ROLE) == path:
                self.tree.setCurrentItem(item)
                return True
        return False

    def previous_span(self, item: QTreeWidgetItem | None) -> str | None:
        """The span before `item`'s (`previous_spans`), or None."""
        if item is None or item.data(0, KIND_ROLE) != "span":
            return None
        return self._previous.get(str(item.data(0, PATH_ROLE)))

    def compare_current(self) -> None:
        item = self.tree.currentItem()
        before = self.previous_span(item)
        if item is not None and before is not None:
            self.compare_requested.emit(before, str(item.data(0, PATH_ROLE)))


__all__ = ["COLUMNS", "SPAN_PAGE", "PreparedLogDir", "RunBrowser", "previous_spans"]
