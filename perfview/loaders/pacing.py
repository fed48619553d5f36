"""A background writer's courtesy to a busy GUI thread: the window beats, the writer paces.

Writing a 1 GB trace's cache entry is ~2 s of CPU (mostly GIL-free copies and checksums) on
a thread of its own, a second or so after the trace is shown: just when a user clicks the
Timeline. On a 2-core machine with other work running, that writer took 33-60 ms of CPU inside
GUI gaps of 100-130 ms (traced with `bench_gui_probe.py --trace-gaps --hog 2`). Lowering its
OS priority was tried and dropped (`cache._put_politely`): a thread preempted while it holds
the GIL stalls the GUI thread instead. So the writer yields by itself: before each 8 MB it
writes (`artifacts.STEP`) it asks `Heartbeat.pace`, which waits while the GUI thread's last
beat (a timer on the GUI thread) is late, that is while the GUI thread is busy or waiting for
a core. The wait is bounded, so a window that stays busy delays the entry, never loses it.

Qt-free: the window calls `beat` from a QTimer; the load service hands `pace` to the writer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BEAT_S = 0.02  # the window's timer interval
LATE_S = 0.045  # a beat older than this: the GUI thread is busy, or queued for a core
WAIT_STEP_S = 0.005
MAX_WAIT_S = 1.0  # per pace() call: a busy window delays the writer, never stops it


class Heartbeat:
    """The GUI thread's last sign of life, and a `pace` for writers on other threads.

    Armed while the window's timer beats (`qt.heartbeat`); disarmed, `pace` returns at once
    (no window, or one that stopped beating: a writer never waits on a timer that is gone)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._armed = False
        self.last_paced = float("-inf")  # when a writer last asked (the timer stops after)
        self.waited_s = 0.0  # total time writers waited (reported by benchmarks)

    def arm(self) -> None:
        self._armed = True
        self.beat()

    def disarm(self) -> None:
        self._armed = False

    def beat(self) -> None:
        self._last = self._clock()

    def late(self) -> bool:
        return self._armed and self._clock() - self._last > LATE_S

    def pace(self) -> None:
        """Return when the GUI thread has beaten recently, or after MAX_WAIT_S."""
        start = self.last_paced = self._clock()
        while self.late() and self._clock() - start < MAX_WAIT_S:
            self._sleep(WAIT_STEP_S)
        self.waited_s += self._clock() - start


__all__ = ["BEAT_S", "LATE_S", "MAX_WAIT_S", "Heartbeat"]
