"""Soak the viewer: open and close many documents and zoom/pan thousands of times in one
process, then report memory (RSS) against its baseline.

    python3 scripts/probes/soak.py [--docs 200] [--steps 10000] [--files F ...]

A warm-up pass opens each file once first (imports, font and style caches, pyqtgraph's first
plot), and the baseline is taken after it: what is measured is what each *further* document
leaks. Every document shows its timeline or icicle (else its first view) and takes its share
of the zoom/pan steps, each one repainted, before its tab is closed and deleted. The report
gives baseline, peak and final RSS and the growth per document; the exit status is 1 when
the final RSS exceeds the baseline by more than `--max-growth-mb`.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))
DEFAULT_FILES = (
    "kineto_gpu/hta_sampled_rank-0.json.gz",
    "pstats/hypothesis_csv_combined.prof",
    "chrome_trace/catapult_flow.json",
    "kineto_cpu/dtu_jc_resnet18_cpu_trace.json",
    "mprof_dat/seqsharp_mprof_children.dat",
    "pstats/gprof2dot_memtrail.pstats",
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "memprof_text/titanic_memory_profile.txt",
)
FALLBACK = ("torch_cpu_small.pt.trace.json.gz", "recursion.prof", "mprofile_func.dat",
            "memprof_report.txt")  # fmt: skip
MB = 1024 * 1024


@dataclass
class Figures:
    docs: int = 0
    steps: int = 0
    baseline: int = 0
    peak: int = 0
    final: int = 0
    seconds: float = 0.0
    rss: list[int] = field(default_factory=list)  # after each document

    @property
    def growth_per_doc(self) -> float:
        return (self.final - self.baseline) / max(self.docs, 1)

    def report(self) -> str:
        return (
            f"{self.docs} documents, {self.steps} zoom/pan steps in {self.seconds:.0f} s; "
            f"RSS baseline {self.baseline / MB:.0f} MB, peak {self.peak / MB:.0f} MB, "
            f"final {self.final / MB:.0f} MB, growth {self.growth_per_doc / 1024:.0f} KB/document"
        )


def default_files() -> list[Path]:
    files = [SAMPLES / f for f in DEFAULT_FILES if (SAMPLES / f).exists()]
    return files or [ROOT / "tests" / "data" / f for f in FALLBACK]


def rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def flush_deletes() -> None:
    """Run deferred deletes (closed tabs call deleteLater) and collect Python cycles."""
    from PySide6.QtCore import QCoreApplication, QEvent

    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, int(QEvent.Type.DeferredDelete))
        QCoreApplication.processEvents()
    gc.collect()


def _steps(widget: Any) -> list[Callable[[], None]]:
    vb = getattr(widget, "viewbox", None)
    if vb is None or not hasattr(vb, "zoom_x"):
        return []
    fit = getattr(widget, "fit_all", None) or (lambda: vb.autoRange())
    return [
        lambda: vb.zoom_x(0.7),
        lambda: vb.pan_x(0.2),
        lambda: vb.zoom_x(0.6),
        lambda: vb.pan_x(-0.3),
        lambda: vb.zoom_x(1.8),
        fit,
    ]


def one_document(window: Any, path: Path, steps: int, wait: Callable[..., None]) -> int:
    """Open `path`, drive `steps` zoom/pan steps on its main graphic view, close it."""
    opened: list[object] = []
    failed: list[object] = []
    on_open = window.document_opened.connect(opened.append)
    on_fail = window.load_failed.connect(lambda *a: failed.append(a))
    try:
        window.open_path(path)
        wait(lambda: bool(opened or failed))
    finally:
        window.document_opened.disconnect(on_open)
        window.load_failed.disconnect(on_fail)
    if failed:
        raise RuntimeError(f"{path} failed to load: {failed[0]}")
    tab = opened[0]
    names = tab.view_names()
    name = next((n for n in ("timeline", "icicle") if n in names), names[0])
    tab.show_view(name)
    widget = tab.view_widget(name)
    actions = _steps(widget)
    done = 0
    plot = getattr(widget, "plot", None)
    for i in range(steps if actions else 0):
        actions[i % len(actions)]()
        if plot is not None:
            plot.viewport().repaint()
        done += 1
    window.tabs_controller.close_tab(window.tabs.indexOf(tab))
    opened.clear()
    del tab, widget, plot, actions
    flush_deletes()
    return done


def soak(
    window: Any,
    files: Sequence[Path],
    docs: int,
    steps: int,
    wait: Callable[..., None],
    log: Callable[[str], None] = lambda _m: None,
) -> Figures:
    """Warm up on each file, then `docs` documents sharing `steps` zoom/pan steps."""
    graphic = sum(
        1 for i in range(docs) if not str(files[i % len(files)]).endswith((".dat", ".txt", ".log"))
    )
    per_doc = -(-steps // max(graphic, 1))
    for path in files:
        one_document(window, path, 10, wait)
    figures = Figures(baseline=rss())
    figures.peak = figures.baseline
    started = time.monotonic()
    for i in range(docs):
        left = steps - figures.steps
        figures.steps += one_document(window, files[i % len(files)], min(per_doc, left), wait)
        figures.docs += 1
        now = rss()
        figures.rss.append(now)
        figures.peak = max(figures.peak, now)
        if (i + 1) % 20 == 0:
            log(f"  {i + 1} documents, {figures.steps} steps, RSS {now / MB:.0f} MB")
    flush_deletes()
    figures.final = rss()
    figures.peak = max(figures.peak, figures.final)
    figures.seconds = time.monotonic() - started
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--files", nargs="*", type=Path)
    parser.add_argument("--max-growth-mb", type=float, default=100.0)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    tmp = tempfile.mkdtemp(prefix="perfview-soak-")
    os.environ.setdefault("PERFVIEW_CACHE_DIR", os.path.join(tmp, "cache"))
    os.environ.setdefault("PERFVIEW_STATE_DIR", os.path.join(tmp, "state"))

    from PySide6.QtCore import QEventLoop, QSettings
    from PySide6.QtWidgets import QApplication

    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    app = QApplication.instance() or QApplication([sys.argv[0]])
    window = MainWindow(Settings(QSettings(os.path.join(tmp, "s.ini"), QSettings.Format.IniFormat)))
    window.resize(1400, 900)
    window.show()

    def wait(condition: Callable[[], bool], timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("a document did not open in time")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)

    files = args.files or default_files()
    print(f"soak: {len(files)} files, {args.docs} documents, {args.steps} steps")
    figures = soak(window, files, args.docs, args.steps, wait, print)
    print(figures.report())
    window.close()
    growth_mb = (figures.final - figures.baseline) / MB
    return 1 if growth_mb > args.max_growth_mb else 0


if __name__ == "__main__":
    sys.exit(main())
