"""The window's heartbeat for cache writers: beats after a load, stops when idle or closed."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.qt import heartbeat
from perfview.qt.heartbeat import HEARTBEAT, HeartbeatTimer
from perfview.qt.main_window import MainWindow
from tests.conftest import sample
from tests.qt.test_main_window import open_and_wait

pytestmark = pytest.mark.gui


def test_beats_while_writers_may_pace_then_stops(qtbot: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(heartbeat, "IDLE_S", 0.2)
    timer = HeartbeatTimer()
    timer.start()
    assert timer.is_beating()
    HEARTBEAT.pace()  # a writer asks: the beat is fresh, it goes on at once
    qtbot.waitUntil(lambda: not timer.is_beating(), timeout=5_000)
    assert not HEARTBEAT.late()  # disarmed: nobody waits on a timer that stopped


def test_a_loaded_trace_starts_the_heartbeat_and_closing_stops_it(qtbot: Any) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    assert not window.heartbeat.is_beating()  # an idle window does not tick
    open_and_wait(qtbot, window, sample("kineto_gpu/hta_nccl_data.json.gz"))
    assert window.heartbeat.is_beating()
    window.close()
    assert not window.heartbeat.is_beating()
