"""The span selector of a Job tab: which schedule cycle of a log directory's job run to show.

A job run written by `tensorboard_trace_handler` with a repeating schedule holds several spans
per worker (one file per cycle). The Job tab opens on every worker's spans pooled; this combo
box picks one cycle instead (every worker's N-th span, `jobs.logdir.span_run`). The spans'
reductions are already in memory (`LogDir.results`), so choosing one parses nothing: a task
re-assembles the job from them and prepares its pages off the GUI thread, and `loaded` hands
the new `PreparedJob` to the view. A choice made while a task runs wins over it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from perfview.core.model.logdir import Run
from perfview.core.model.progress import Progress
from perfview.qt.tasks import Task

POOLED = -1  # the combo's data for "all spans pooled"


@dataclass(frozen=True)
class SpanChoice:
    """What a Job tab needs to re-open its run on another span: the run, every span's
    reduction (by path), the folder the job is named after, the span shown (POOLED or a
    0-based index) and each span's label."""

    run: Run
    results: dict[Path, Any]
    folder: Path
    current: int
    labels: tuple[str, ...]


class SpanSelector(QWidget):
    """A combo box "Spans: [All 2 spans, pooled | Span 1 · 01:08:18 | …]"; `loaded(PreparedJob)`
    once the chosen span's pages are prepared, `failed(str)` with one sentence."""

    loaded = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        choice: SpanChoice,
        prepare: Callable[[SpanChoice, int], Any],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.choice = choice
        self._prepare = prepare  # (choice, span) -> PreparedJob, run in the task
        self.task: Task | None = None
        self.combo = QComboBox(self)
        self.combo.addItem(f"All {len(choice.labels)} spans, pooled", POOLED)
        for i, label in enumerate(choice.labels):
            self.combo.addItem(label, i)
        self.combo.setCurrentIndex(self.combo.findData(choice.current))
        self.combo.setToolTip("Which schedule cycle (one file per worker) the job's pages show")
        self.combo.currentIndexChanged.connect(self._chosen)
        self.note = QLabel("", self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(QLabel("Spans:", self))
        layout.addWidget(self.combo)
        layout.addWidget(self.note, 1)

    def choose(self, span: int) -> None:
        """Show `span` (POOLED or a 0-based index), as if picked in the combo box."""
        self.combo.setCurrentIndex(self.combo.findData(span))

    def _chosen(self, _index: int) -> None:
        span = int(self.combo.currentData())
        if self.task is not None:
            self.task.cancel()  # its result is dropped: `_done` checks the span
        choice, prepare = self.choice, self._prepare

        def work(progress: Progress) -> Any:
            progress(0.1, "assembling the span's job")
            return prepare(choice, span)

        self.task = task = Task(work, name=f"span {span}")
        self.note.setText("loading…")
        task.finished.connect(lambda prepared, s=span, t=task: self._done(prepared, s, t))
        task.failed.connect(lambda message, t=task: self._failed(message, t))
        task.start()

    def _done(self, prepared: Any, span: int, task: Task) -> None:
        if task is not self.task:
            return  # a later choice is on its way
        self.task = None
        self.note.setText("")
        self.choice = SpanChoice(
            self.choice.run, self.choice.results, self.choice.folder, span, self.choice.labels
        )
        self.loaded.emit(prepared)

    def _failed(self, message: str, task: Task) -> None:
        if task is not self.task:
            return
        self.task = None
        self.note.setText(message)
        self.failed.emit(message)


__all__ = ["POOLED", "SpanChoice", "SpanSelector"]
