"""The off-thread half of a comparison: loading both runs and diffing them.

Why its own module: `CompareJob` and `build_result` are the worker side of Compare (tasks, no
widgets), while :mod:`perfview.qt.compare_tab` is the widget that shows a `CompareResult`.
Keeping them apart keeps each module short; ``compare_tab`` re-exports these names, and this
module never imports it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from perfview.core.compare.diff import Comparison, diff_all
from perfview.core.compare.structure import StructureDiff, diff_structure
from perfview.core.model import Bundle
from perfview.core.model.progress import Progress
from perfview.qt.tasks import LoadResult, Task, load_task

TITLES = {
    "functions": "Functions",
    "ops": "Ops",
    "ops-by-shape": "Ops by shape",
    "kernels": "Kernels",
    "steps": "Steps",
    "timelines": "Timelines",
    "structure": "Structure",
    "memory": "Memory",
    "lines": "Lines",
    "live-bytes": "Live bytes",
    "peak": "Peak",
    "leaks": "Leaks",
    "frames": "Functions",
    "frames-samples": "Functions",
    "frames-bytes": "Functions",
    "ranks": "Ranks",
    "collectives": "Collectives",
}


@dataclass
class CompareResult:
    """Both runs and every comparison of their format (errors per view that failed)."""

    a: Bundle
    b: Bundle
    match: str
    comparisons: dict[str, Comparison]
    errors: dict[str, str] = field(default_factory=dict)
    structure: StructureDiff | None = None  # two traces aligned by call-tree structure

    def views(self) -> list[str]:
        names = [*self.comparisons, *self.errors]
        if self.a.timeline is not None and self.b.timeline is not None:
            names.append("timelines")
        if self.structure is not None:
            names.append("structure")
        return sorted(names, key=list(TITLES).index)


def build_result(a: Bundle, b: Bundle, match: str, progress: Progress) -> CompareResult:
    """Pure worker function: all comparisons of A against B."""
    comparisons, errors = diff_all(a, b, match=match, progress=progress)
    structure = None
    if a.timeline is not None and b.timeline is not None:
        progress(1.0, "aligning the two traces by structure")
        structure = diff_structure(a.timeline, b.timeline)
    return CompareResult(a, b, match, comparisons, errors, structure)


class RunsLoader(QObject):
    """Load N files concurrently (one worker task each), then compare them in one more task.

    The one loader of a comparison's runs, for two runs (`CompareJob`) and for several a side
    (`compare_runs.RunsCompareJob`): a subclass says how to compare the loaded bundles
    (`compare(bundles, progress)`, run in a worker). `track(task, path, text)` is called for each
    task before it starts (the window shows it in its status bar and cancels it with its Cancel
    button). Exactly one of `finished(result)`, `failed(path, message)` or `cancelled()` fires.
    """

    finished = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()
    comparing = "Comparing…"  # the status bar's text while the comparison runs

    def __init__(
        self,
        paths: list[Path],
        track: Callable[[Task, Path, str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.paths = paths
        self.track = track
        self.tasks: list[Task] = []
        self._loaded: dict[int, Bundle] = {}
        self._over = False

    def compare(self, bundles: list[Bundle], progress: Progress) -> object:
        """The comparison of the loaded runs, in file order (runs in a worker task)."""
        raise NotImplementedError

    def start(self) -> None:
        for i, path in enumerate(self.paths):
            task = load_task(path)
            task.finished.connect(lambda result, i=i: self._on_loaded(i, result))
            task.failed.connect(lambda message, p=path: self._fail(str(p), message))
            task.cancelled.connect(self._cancel)
            self._start(task, path, f"Loading {path.name} to compare…")

    def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()

    def _start(self, task: Task, path: Path, text: str) -> None:
        self.tasks.append(task)
        if self.track is not None:
            self.track(task, path, text)
        task.start()

    def _on_loaded(self, i: int, result: LoadResult) -> None:
        result.writes.open()  # no tab of its own waits to be drawn: its cache is stored now
        self._loaded[i] = result.bundle
        if len(self._loaded) < len(self.paths) or self._over:
            return
        bundles = [self._loaded[k] for k in range(len(self.paths))]
        task = Task(lambda progress: self.compare(bundles, progress), name="compare")
        task.finished.connect(self._finish)
        label = " and ".join(map(str, self.paths)) if len(self.paths) == 2 else "the runs"
        task.failed.connect(lambda message: self._fail(label, message))
        task.cancelled.connect(self._cancel)
        self._start(task, self.paths[-1], self.comparing)

    def _finish(self, result: object) -> None:
        if not self._over:
            self._over = True
            self.finished.emit(result)
            self._let_go()

    def _fail(self, path: str, message: str) -> None:
        if not self._over:
            self._over = True
            self.cancel()  # the other files' loads are of no use now
            self.failed.emit(path, message)
            self._let_go()

    def _cancel(self) -> None:
        if not self._over:
            self._over = True
            self.cancel()
            self.cancelled.emit()
            self._let_go()

    def _let_go(self) -> None:
        """Over: drop the bundles (a result holds what its tab needs) and go. A job is a
        child of the window, and kept every run in memory for as long as the window."""
        self._loaded.clear()
        self.tasks.clear()
        self.deleteLater()


class CompareJob(RunsLoader):
    """Load A and B concurrently, then compare them (`build_result`) in a worker task."""

    def __init__(
        self,
        path_a: str | Path,
        path_b: str | Path,
        match: str = "basename",
        track: Callable[[Task, Path, str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__([Path(path_a), Path(path_b)], track, parent)
        self.match = match

    def compare(self, bundles: list[Bundle], progress: Progress) -> CompareResult:
        return build_result(bundles[0], bundles[1], self.match, progress)


__all__ = ["TITLES", "CompareJob", "CompareResult", "RunsLoader", "build_result"]
