"""perfview's own process ends once its window is gone, whatever background work still runs."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

pytest.importorskip("pytestqt")


def test_a_busy_worker_is_cancelled_and_not_waited_for(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task that never reports progress (an analysis of a 10 GB trace ran for minutes) is
    cancelled; after the grace time the process ends with the window's exit code instead of
    Qt waiting for it; a task that reports progress stops at its next report."""
    from perfview.core.model.errors import LoadCancelled
    from perfview.qt import app, tasks

    release, running, reporting = threading.Event(), threading.Event(), threading.Event()
    stopped: list[str] = []

    def busy(progress: Any) -> None:
        running.set()
        release.wait(30)

    def polite(progress: Any) -> None:
        try:
            while not release.is_set():
                progress(0.5, "working")
                reporting.set()
                release.wait(0.01)
        except LoadCancelled:
            stopped.append("polite")
            raise

    ended: list[int] = []

    def fake_exit(code: int) -> None:
        ended.append(code)

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(app, "WORKERS_GRACE_MS", 100)
    busy_task, polite_task = tasks.Task(busy, "busy"), tasks.Task(polite, "polite")
    busy_task.start()
    polite_task.start()
    try:  # both started: a task cancelled before it starts never runs
        assert running.wait(10)
        assert reporting.wait(10)
        app.end_workers(3)
        assert ended == [3]
        qtbot.waitUntil(lambda: stopped == ["polite"], timeout=10_000)
    finally:
        release.set()
    assert tasks.wait_all(10_000)


def test_an_idle_pool_returns_and_the_process_goes_on(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.qt import app, tasks

    ended: list[int] = []
    monkeypatch.setattr(os, "_exit", ended.append)
    assert tasks.wait_all(10_000)
    app.end_workers(0)
    assert ended == []
