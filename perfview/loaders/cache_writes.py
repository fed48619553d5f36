"""Background writes of cache entries (parsed columns, Timeline layouts, Overview tables).

Each write runs on a thread of its own so that storing an entry never delays showing the
trace, and `flush` waits for every pending write (tests, benchmarks, a CLI that exits).

The threads are not daemons, explicitly: a thread inherits daemon from its creator, and the
GUI's loads run on Qt pool threads, which Python sees as daemon threads; an entry was then
cut off at exit, leaving a half-written temp folder (found timing `perfview --screenshot`).
A short-lived process finishes its entries before it exits instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_PENDING: list[threading.Thread] = []
_LOCK = threading.Lock()


def start(name: str, target: Callable[..., Any], *args: Any) -> None:
    """Run `target(*args)` on a new non-daemon thread, known to `flush`."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=False)
    with _LOCK:
        _PENDING.append(thread)
    thread.start()


def flush(timeout: float | None = None) -> None:
    """Wait for the background writes started so far."""
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for thread in pending:
        thread.join(timeout)


__all__ = ["flush", "start"]
