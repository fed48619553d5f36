"""The GUI thread's heartbeat, for background cache writers that yield to it (`loaders.pacing`).

A timer on the GUI thread beats `HEARTBEAT` every `pacing.BEAT_S` while writers may be at
work: from the moment a load hands the window its result (the entry's write follows a second
or so later) until no writer has asked for `pace` for IDLE_S. An idle window does not tick.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer

from perfview.loaders.pacing import BEAT_S, Heartbeat

HEARTBEAT = Heartbeat()
IDLE_S = 3.0  # stop beating once no writer has paced for this long (after the start)


class HeartbeatTimer(QObject):
    """Beats `HEARTBEAT` from the GUI thread; `start` on each loaded trace, `stop` at close."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._started = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(round(BEAT_S * 1000))
        self._timer.timeout.connect(self._beat)

    def start(self) -> None:
        self._started = time.monotonic()
        HEARTBEAT.arm()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        HEARTBEAT.disarm()

    def is_beating(self) -> bool:
        return self._timer.isActive()

    def _beat(self) -> None:
        HEARTBEAT.beat()
        if time.monotonic() - max(self._started, HEARTBEAT.last_paced) > IDLE_S:
            self.stop()


__all__ = ["HEARTBEAT", "IDLE_S", "HeartbeatTimer"]
