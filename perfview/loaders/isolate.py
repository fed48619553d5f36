"""Parse a big trace in a child process and hand it back through the parsed-column cache.

Only for what the compiled scanner refuses (`trace.load_scanned`, which leaves the GIL
free and so runs in the GUI's own process): the general path's msgspec calls hold the GIL for
up to a second on a 1 GB trace, which would freeze the GUI thread. A child has its own GIL:
it parses, writes the cache entry (`perfview.loaders.cache`) and exits; the parent reads the
entry back, which costs a small fraction of the parse and mostly waits on I/O. Progress
arrives as lines on the child's stdout; a cancelled progress call (LoadCancelled) kills the
child at once, so Cancel works within the polling interval.

The child runs `_child(FILE)` and prints `P <fraction> <message>` and `E <error>` lines.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from perfview.core.errors import LoadError
from perfview.core.model import Bundle
from perfview.core.progress import Progress, noop
from perfview.loaders import cache

MIN_MB = 64.0  # smaller traces parse in about a second in-process: not worth a child
POLL_S = 0.1  # how often the parent checks for Cancel while the child is quiet


def wanted(path: Path) -> bool:
    """Use a child for a big trace when the cache can carry it back (env can turn it off)."""
    try:
        min_mb = float(os.environ.get("PERFVIEW_ISOLATE_MIN_MB", MIN_MB))
    except ValueError:
        min_mb = MIN_MB
    try:
        big = path.stat().st_size >= min_mb * 1e6
    except OSError:
        return False
    return min_mb >= 0 and big and cache.max_bytes() > 0


def load(path: Path, progress: Progress = noop) -> Bundle | None:
    """Parse `path` in a child and return the Bundle; None when the child could not deliver.

    Raises LoadError for a file the loader refused, and lets LoadCancelled from `progress`
    propagate after killing the child.
    """
    code = "import sys; from perfview.loaders.isolate import _child; sys.exit(_child(sys.argv[1]))"
    cmd = [sys.executable, "-c", code, str(path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        env=env, text=True, encoding="utf-8", errors="replace",
    )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc, lines), daemon=True)
    reader.start()
    fraction, message, error = 0.0, "parsing in a helper process", ""
    try:
        while True:
            try:
                line = lines.get(timeout=POLL_S)
            except queue.Empty:
                progress(fraction, message)  # lets Cancel interrupt a quiet child
                continue
            if line is None:
                break
            tag, _, rest = line.rstrip("\n").partition(" ")
            if tag == "P":
                value, _, message = rest.partition(" ")
                fraction = 0.95 * float(value)
                progress(fraction, message)
            elif tag == "E":
                error = rest
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    status = proc.wait()
    if error:
        raise LoadError(error)
    if status != 0:
        return None
    progress(0.97, "reading the parsed trace")
    return cache.get(path)


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line)
    lines.put(None)


def _child(file: str) -> int:
    """Child side: parse, store in the cache synchronously, report through stdout."""
    from perfview.loaders import trace

    path = Path(file)
    last = [0.0]

    def report(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.05:
            last[0] = now
            print(f"P {fraction:.4f} {message}", flush=True)

    try:
        bundle = trace.load(path, progress=report)
    except LoadError as exc:
        print(f"E {exc}", flush=True)
        return 3
    except MemoryError:
        print("E it does not fit in memory", flush=True)
        return 3
    report(1.0, "storing")
    return 0 if cache.put(path, bundle) is not None else 4
