"""Compare two runs in one tab: loading both, building the comparison, showing it.

`MainWindow.open_compare(a, b)` is what File ▸ Compare…, `perfview --compare A B` and the Runs
dialog call. A `CompareJob` loads both files *concurrently* through `tasks.py` (two worker
tasks, each in the window's status bar with progress and Cancel), then builds every comparison
of the pair's format in a third task (`core.diff.diff_all`), so nothing heavy runs on the GUI
thread. The `CompareTab` shows the result: a header naming A and B (file names, plus folders
when the names collide), Swap, the matching rule, and one sub-tab per comparison view, built
lazily like a DocumentTab's views. Swap and a new matching rule recompute off the GUI thread
too; `updated` fires when the new result is shown.

The worker side (`CompareJob`, `CompareResult`, `build_result`) lives in `compare_job.py` and
File ▸ Compare…'s form in `compare_dialog.py`; both are re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from perfview.core.model import Bundle
from perfview.qt.compare_dialog import MATCH_LABELS, CompareDialog
from perfview.qt.compare_job import TITLES, CompareJob, CompareResult, build_result
from perfview.qt.tasks import Task

MATCHED_FORMATS = ("pstats", "memprof_text", "sampled")  # keys depend on the match rule


def side_labels(path_a: Path, path_b: Path) -> tuple[str, str]:
    """Names that tell A and B apart: file names, with as many parent folders as it takes."""
    a_parts, b_parts = Path(path_a).parts, Path(path_b).parts
    for depth in range(1, max(len(a_parts), len(b_parts)) + 1):
        a, b = "/".join(a_parts[-depth:]), "/".join(b_parts[-depth:])
        if a != b or depth >= min(len(a_parts), len(b_parts)):
            return a, b
    return str(path_a), str(path_b)


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    return label


class CompareTab(QWidget):
    """Header (A, B, Swap, matching) plus one lazily built sub-tab per comparison view."""

    updated = Signal(object)  # the CompareResult now shown
    failed = Signal(str)

    def __init__(self, result: CompareResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result = result
        self.task: Task | None = None
        self._views: dict[str, QWidget] = {}
        self._names: list[str] = []
        self.header = QLabel(self)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.swap_button = QToolButton(self)
        self.swap_button.setText("Swap A ↔ B")
        self.swap_button.setToolTip("Use B as the baseline and A as the new run")
        self.swap_button.clicked.connect(self.swap)
        self.match_combo = QComboBox(self)
        for key, label in MATCH_LABELS.items():
            self.match_combo.addItem(label, key)
        self.match_combo.setToolTip("How functions (or lines) of A and B are paired up")
        self.match_combo.currentIndexChanged.connect(
            lambda _i: self.set_match(str(self.match_combo.currentData()))
        )
        self.match_label = QLabel("Match by:", self)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 2)
        top.addWidget(self.header, 1)
        top.addWidget(self.match_label, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.match_combo, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.swap_button, 0, Qt.AlignmentFlag.AlignTop)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.currentChanged.connect(self._on_tab)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        self.set_result(result)

    # --- public API ------------------------------------------------------------------------
    @property
    def title(self) -> str:
        a, b = side_labels(self.result.a.path, self.result.b.path)
        return f"{Path(a).name} ↔ {Path(b).name}"

    def view_names(self) -> list[str]:
        return list(self._names)

    def show_view(self, name: str) -> bool:
        if name not in self._names:
            return False
        self.tabs.setCurrentIndex(self._names.index(name))
        return True

    def view_widget(self, name: str) -> QWidget | None:
        if name not in self._names:
            return None
        if name not in self._views:
            self._build(name)
        return self._views.get(name)

    def show_in_timelines(self, a_ts: float, b_ts: float, width: float) -> None:
        """Switch to Timelines with A at `a_ts` and B at `b_ts` (a Structure row's node)."""
        from perfview.qt.views.compare_timelines import CompareTimelines

        widget = self.view_widget("timelines")
        if not isinstance(widget, CompareTimelines):
            return
        self.show_view("timelines")
        widget.show_points(a_ts, b_ts, width)

    def set_result(self, result: CompareResult) -> None:
        """Show `result`: rebuild the sub-tabs, keeping the current one selected."""
        current = self._names[self.tabs.currentIndex()] if self._names else ""
        self.result = result
        self.header.setText(self.header_html())
        matched = result.a.format in MATCHED_FORMATS
        self.match_label.setVisible(matched)
        self.match_combo.setVisible(matched)
        self.match_combo.blockSignals(True)
        self.match_combo.setCurrentIndex(list(MATCH_LABELS).index(result.match))
        self.match_combo.blockSignals(False)
        self.tabs.blockSignals(True)
        while self.tabs.count():
            page = self.tabs.widget(0)
            self.tabs.removeTab(0)
            if page is not None:
                page.deleteLater()
        self._views = {}
        self._names = result.views()
        for name in self._names:
            page = QWidget()
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self.tabs.addTab(page, TITLES.get(name, name))
        self.tabs.blockSignals(False)
        index = self._names.index(current) if current in self._names else 0
        self.tabs.setCurrentIndex(index)
        self._on_tab(index)
        self.setEnabled(True)

    def header_html(self) -> str:
        """A and B by name (folders when names collide), each with its total in the first view."""
        from perfview.core.model.units import format_value

        r = self.result
        name_a, name_b = side_labels(r.a.path, r.b.path)
        first = next(iter(r.comparisons.values()), None)
        total_a = total_b = ""
        if first is not None:
            total_a = f" · {format_value(first.total_a, first.total_unit)}"
            total_b = f" · {format_value(first.total_b, first.total_unit)}"
        what = f"{r.a.format}" + (f", totals: {first.total_label}" if first is not None else "")
        return (
            f"<span style='font-size:large'><b>A</b> <span title='{r.a.path}'>{name_a}</span>"
            f"{total_a} &nbsp;<b>vs</b>&nbsp; "
            f"<b>B</b> <span title='{r.b.path}'>{name_b}</span>{total_b}</span><br>"
            f"<small>A is the baseline; {what}</small>"
        )

    def swap(self) -> Task:
        """Recompute with A and B exchanged (off the GUI thread)."""
        return self.recompute(self.result.b, self.result.a, self.result.match)

    def set_match(self, match: str) -> Task | None:
        if match == self.result.match:
            return None
        return self.recompute(self.result.a, self.result.b, match)

    def recompute(self, a: Bundle, b: Bundle, match: str) -> Task:
        if self.task is not None:
            self.task.cancel()
        task = Task(lambda progress: build_result(a, b, match, progress), name="compare")
        task.finished.connect(self._on_result)
        task.failed.connect(self._on_failed)
        self.task = task
        self.swap_button.setEnabled(False)
        self.match_combo.setEnabled(False)
        task.start()
        return task

    # --- internals -------------------------------------------------------------------------
    def _on_result(self, result: CompareResult) -> None:
        self.swap_button.setEnabled(True)
        self.match_combo.setEnabled(True)
        self.set_result(result)
        self.updated.emit(result)

    def _on_failed(self, message: str) -> None:
        self.swap_button.setEnabled(True)
        self.match_combo.setEnabled(True)
        self.header.setText(self.header_html() + f"<br><b>Comparison failed:</b> {message}")
        self.failed.emit(message)

    def _on_tab(self, index: int) -> None:
        if 0 <= index < len(self._names):
            self.view_widget(self._names[index])

    def _build(self, name: str) -> None:
        page = self.tabs.widget(self._names.index(name))
        try:
            widget = self._make(name)
        except Exception as exc:  # one broken view must not take the tab down
            widget = _placeholder(f"This view could not be built:\n{type(exc).__name__}: {exc}")
        self._views[name] = widget
        layout = page.layout() if page is not None else None
        if layout is not None:
            layout.addWidget(widget)

    def _make(self, name: str) -> QWidget:
        r = self.result
        names = side_labels(r.a.path, r.b.path)
        if name in r.errors:
            return _placeholder(f"No {TITLES.get(name, name).lower()} to compare: {r.errors[name]}")
        if name == "timelines":
            from perfview.qt.views.compare_timelines import CompareTimelines

            assert r.a.timeline is not None
            assert r.b.timeline is not None
            return CompareTimelines(r.a.timeline, r.b.timeline, names)
        if name == "structure" and r.structure is not None:
            from perfview.qt.views.compare_structure import CompareStructureView

            view = CompareStructureView(r.structure)
            view.node_activated.connect(self.show_in_timelines)
            return view
        comparison = r.comparisons[name]
        if name == "memory" and r.a.memory is not None and r.b.memory is not None:
            from perfview.qt.views.compare_memory import CompareMemoryView

            return CompareMemoryView(comparison, r.a.memory, r.b.memory, names)
        from perfview.qt.views.compare_view import CompareView

        return CompareView(comparison, compact=True)


__all__ = [
    "CompareDialog",
    "CompareJob",
    "CompareResult",
    "CompareTab",
    "build_result",
    "side_labels",
]
