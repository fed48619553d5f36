#!/usr/bin/env python3
"""What the window's background analyses cost in memory: the critical-path track, then each
rule of the Overview's findings, on a trace opened as the window opens it.

    python scripts/probes/analysis_memory.py FILE [--repo CHECKOUT]

FILE is opened through the document owner with the parsed-trace cache (a second run maps
the stored columns, as a reopened window does; the first parses). Then, in this process,
`path_segments` (the track's work) and the findings (`recommendations`, its rules one after
another as the Overview runs them) run; beside each it prints wall seconds, the process's
anonymous RSS before, at its peak (sampled every 10 ms) and after, and the peak of anonymous
+ file pages (what RSS counts: the mapped columns the analysis reads). `--repo` runs another
checkout's analyses (its `perfview` first on the path) on the same file. For the issue
notes, not for CI.
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def resident_mb() -> tuple[int, int]:
    """(anonymous, file) resident MB of this process (also read by `profile_trace_stages`)."""
    got = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                got[key] = int(value.split()[0]) // 1024
    return got["RssAnon"], got["RssFile"]


class Peak:
    """The highest anonymous and anonymous + file RSS since `reset`, sampled on a thread."""

    def __init__(self) -> None:
        self.anon = self.total = 0
        threading.Thread(target=self._sample, daemon=True).start()

    def reset(self) -> tuple[int, int]:
        now = resident_mb()
        self.anon, self.total = now[0], sum(now)
        return now

    def _sample(self) -> None:
        while True:
            anon, file = resident_mb()
            self.anon, self.total = max(self.anon, anon), max(self.total, anon + file)
            time.sleep(0.01)


def _timed(peak: Peak, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any) -> Any:
        before = peak.reset()
        start = time.perf_counter()
        out = fn(*args)
        wall = time.perf_counter() - start
        time.sleep(0.03)  # one more sample
        after = resident_mb()
        print(f"{label:26s} {wall:6.1f} s  anon {before[0]:6,} → peak {peak.anon:6,} → "
              f"{after[0]:6,} MB   anon + file peak {peak.total:6,} MB", flush=True)  # fmt: skip
        return out

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repo", type=Path, help="run this checkout's analyses")
    args = parser.parse_args()
    if args.repo is not None:
        sys.path.insert(0, str(args.repo.resolve()))
    from perfview.core.analysis.torch import recommend
    from perfview.core.analysis.torch.critical_path.path import path_segments
    from perfview.documents.document import open_document
    from perfview.loaders.trace import heap

    print(f"perfview from {Path(recommend.__file__).parents[3]}")
    start = time.perf_counter()
    timeline = open_document(args.file).bundle.timeline
    if timeline is None:
        sys.exit(f"{args.file} is not a trace")
    heap.trim_holes()  # the window's heap after a load: its free pages handed back
    print(f"opened in {time.perf_counter() - start:.1f} s: {len(timeline.events):,} slices")
    peak = Peak()
    _timed(peak, "critical-path track", path_segments)(timeline)
    # the rules run as the Overview runs them (`recommendations`: what each does after one)
    recommend.RULES = tuple(_timed(peak, rule.__name__, rule) for rule in recommend.RULES)
    recommend.recommendations(timeline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
