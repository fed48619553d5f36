"""The Timeline's critical-path track is computed once the window is quiet, one worker at a
time with the tab's other background work (the Overview's findings): started as the page was
built, on a 1 GB trace it shared the cores with the first paints (100-190 ms GUI gaps) and
computed the same masks as the findings at the same time (a 3.5 GB peak)."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytestqt")

from perfview.core import pages
from perfview.loaders import load
from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


def test_the_path_track_waits_for_a_quiet_window_and_the_findings(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtCore import QThreadPool

    from perfview.qt import document_tab
    from perfview.qt.document import Document
    from perfview.qt.views import critical_path_track
    from tests.loaders.cache_setup import use_cache_dir

    use_cache_dir(tmp_path, monkeypatch, max_mb=500)  # the findings found, not read back
    pool = QThreadPool.globalInstance()
    threads = pool.maxThreadCount()
    pool.setMaxThreadCount(max(threads, 4))  # a free thread for each: the order is the tab's
    spans: list[tuple[str, float, float]] = []
    started: list[str] = []
    lock = threading.Lock()

    def timed(kind: str, fn: Any) -> Any:
        def run(*args: Any) -> Any:
            start = time.perf_counter()
            started.append(kind)
            try:
                return fn(*args)
            finally:
                with lock:
                    spans.append((kind, start, time.perf_counter()))

        return run

    findings = timed("findings", document_tab.completed)  # type: ignore[attr-defined]
    monkeypatch.setattr(document_tab, "completed", findings)
    monkeypatch.setattr(
        critical_path_track, "compute_segments", timed("path", critical_path_track.compute_segments)
    )
    bundle = load(sample(RESNET))
    overview = pages.prepare_first("overview", bundle)
    assert overview.findings is None  # drawn first, its findings found by a worker
    try:
        tab = document_tab.DocumentTab(Document(bundle), pages={"overview": overview})
        qtbot.addWidget(tab)
        tab.show()
        assert tab.show_view("timeline")
        view: Any = tab.built_view("timeline")
        view.ensure_built()
        built = time.perf_counter()
        assert "path" not in started  # not started with the page
        with qtbot.waitSignal(view.path_track.ready, timeout=60_000):
            pass
        qtbot.waitUntil(lambda: tab.tab_data.data["overview"].findings is not None, timeout=60_000)
        qtbot.waitUntil(lambda: not tab._busy(), timeout=60_000)
    finally:
        pool.setMaxThreadCount(threads)
    assert len(view.path_track.segments) > 0  # the track has its path all the same
    ordered = sorted(spans, key=lambda span: span[1])
    assert sorted(k for k, _, _ in ordered) == ["findings", "path"]
    assert next(start for kind, start, _ in ordered if kind == "path") >= built
    for (_, _, end), (_, start, _) in itertools.pairwise(ordered):
        assert start >= end  # never two at once
