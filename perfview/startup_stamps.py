"""Start-up timestamps for `scripts/bench/bench_gui_probe.py --startup` (stdlib only: the CLI writes
the first one before it imports anything heavy).

When `PERFVIEW_STARTUP_PROBE=PATH` is set, `stamp(event)` appends one line
`EVENT WALL_CLOCK_SECONDS PROCESS_CPU_SECONDS` to PATH; otherwise it does nothing. Wall-clock
time (not a monotonic clock) so the launching process can set the stamps against the moment
it started this one. Events: `main` (the CLI started), `window_shown` (the first window painted),
`first_page_drawn` (the document's first page painted, nothing of it deferred), and steps
between them (`window_built`, `preload_taken` when a child parsed the file meanwhile
(`perfview.preload`), `loaded`, `tab_built`) to say where the time went.
"""

from __future__ import annotations

import os
import time

ENV = "PERFVIEW_STARTUP_PROBE"
_seen: set[str] = set()


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def stamp(event: str) -> None:
    """Record `event` once (later calls with the same name are ignored)."""
    path = os.environ.get(ENV)
    if not path or event in _seen:
        return
    _seen.add(event)
    now, cpu = time.time(), time.process_time()
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{event} {now:.6f} {cpu:.6f}\n")
    except OSError:
        pass


__all__ = ["ENV", "enabled", "stamp"]
