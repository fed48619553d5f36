"""Background writes of cache entries (parsed columns, Timeline layouts, Overview tables).

Each write runs on a thread of its own so that storing an entry never delays showing the
trace, and `flush` waits for every pending write (tests, benchmarks, a CLI that exits).

A write starts when its `WriteGate` opens. The CLI's gate (`NOW`) is open from the start.
The window gives each load a gate of its own and opens it once the new tab is drawn and
the window has been quiet a moment (`DocumentTab`): a 1 GB trace's entry is ~2 s of CPU,
and written beside the tab's first pages, on a 2-core machine with other work running, it
took the GUI thread's share of a core just when the Timeline was clicked (gaps of 100-180 ms
in which the GUI thread ran 20-40 ms and queued for a CPU the rest). A fixed delay could not
know when the tab is drawn: counted from the load's end, it ran out while a busy machine was
still building the tab. A gate that nobody opens (a load whose tab never came) opens by
itself after its `cap_s`; `flush` opens the gates of the writes it waits for.

The threads are not daemons, explicitly: a thread inherits daemon from its creator, and the
GUI's loads run on Qt pool threads, which Python sees as daemon threads; an entry was then
cut off at exit, leaving a half-written temp folder (found timing `perfview --screenshot`).
A short-lived process finishes its entries before it exits instead. Their CPU priority is
left alone: at the lowest niceness, on a machine whose cores were busy, a writer was
preempted for long stretches while it held the GIL, and the GUI thread waited for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class WriteGate:
    """When background writes may start: once `open()` is called, or `cap_s` after a writer
    began waiting (None: no cap). Open from the start when `cap_s` is 0."""

    def __init__(self, cap_s: float | None = 0.0) -> None:
        self.cap_s = cap_s
        self._opened = threading.Event()
        if cap_s == 0:
            self._opened.set()

    def open(self) -> None:
        self._opened.set()

    def is_open(self) -> bool:
        return self._opened.is_set()

    def wait(self) -> None:
        self._opened.wait(self.cap_s)


NOW = WriteGate()  # writes start at once (the CLI, tests)

_PENDING: list[tuple[threading.Thread, WriteGate]] = []
_LOCK = threading.Lock()


def start(name: str, target: Callable[..., Any], *args: Any, gate: WriteGate = NOW) -> None:
    """Run `target(*args)` on a new non-daemon thread, known to `flush`, once `gate` opens."""

    def run() -> None:
        gate.wait()
        target(*args)

    thread = threading.Thread(target=run, name=name, daemon=False)
    with _LOCK:
        _PENDING.append((thread, gate))
    thread.start()


def flush(timeout: float | None = None) -> None:
    """Start the background writes started so far, at once, and wait for them."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for _thread, gate in pending:
        gate.open()
    for thread, _gate in pending:
        thread.join(timeout)


__all__ = ["NOW", "WriteGate", "flush", "start"]
