"""Start-up preload: a big `.prof` named on the command line is parsed in a forked child
while the window imports Qt, pandas and pyqtgraph (stdlib only at import).

The window's start is one thread's work: ~0.55 s of imports and building before it can load
anything, then the load (0.2 s for a 10k-function profile: marshal checks, tables, the
estimated call tree), then the first page. A second core sits idle meanwhile. `start`, called
by `perfview.__main__` before anything heavy is imported (no threads exist yet, so `fork` is
safe), forks a child that loads the file with the ordinary loader and sends the pickled
Bundle back through a pipe (~3 MB, a few ms each way); the load task `take`s it instead of
parsing again.

Only when it can pay: Linux (fork), a CPU idle at launch (`_idle_core`; `PERFVIEW_PRELOAD=0`
or `=1` decides instead), one FILE and no option that changes what is opened, a pstats file
(`.prof` name, a marshal dict's first byte) of at least `MIN_BYTES` (a small one loads in
milliseconds, while the child's imports cost 0.3 s of CPU). Anything unexpected in the child
(a LoadError included) sends nothing usable, and the window then loads the file itself as
before, so errors read exactly as they did. A child nobody takes from is killed when the
process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any, NamedTuple

from perfview import startup_stamps

ENV = "PERFVIEW_PRELOAD"  # "0": never, "1": whenever the file qualifies, even on a busy machine
MIN_BYTES = 256 * 1024
MAX_BYTES = 512 * 1024 * 1024
SUFFIXES = (".prof", ".pstats", ".cprof", ".profile")  # loaders.cprofile.EXTENSIONS
_MARSHAL_DICT = (b"\xfb", b"{")  # a marshal dict, with or without the ref flag (cprofile.sniff)
# Window options after which the file is not simply opened in a tab (or takes a value).
_SKIP_OPTIONS = frozenset({"--screenshot", "--view", "--size", "--compare", "-h", "--help"})
# The view of a pstats tab's first page (the icicle): the window imports it while it waits.
FIRST_PAGE_VIEW = "perfview.qt.views.icicle_view"


class _Child(NamedTuple):  # not a dataclass: `dataclasses` imports `inspect` (5 ms before the fork)
    pid: int
    fd: int
    stamp: tuple[int, int]  # size, mtime_ns when forked: a file changed since is loaded again


_pending: dict[str, _Child] = {}


def _key(path: Path | str) -> str:
    return str(Path(path).resolve())


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _idle_core() -> bool:
    """True when a second CPU is free right now: two or more CPUs, and fewer other runnable
    tasks than CPUs less one (`/proc/loadavg`'s running count, taken at the instant of the
    launch: its 1-minute average lags by far more than a start lasts). On a busy machine the
    child's imports (0.3 s of CPU) would compete with the window's instead of running beside
    them: there the file is loaded in-process, as before."""
    try:
        cores = len(os.sched_getaffinity(0))
        with open("/proc/loadavg", "rb") as fh:
            running = int(fh.read().split()[3].split(b"/")[0])
    except (AttributeError, OSError, ValueError, IndexError):
        return False
    others = running - 1  # this process is running while it reads
    return cores >= 2 and others <= cores - 2


def wanted(argv: list[str], min_bytes: int = MIN_BYTES) -> Path | None:
    """The file to preload for the window's command line `argv`, or None."""
    choice = os.environ.get(ENV, "")
    if choice == "0" or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return None
    if choice != "1" and not _idle_core():
        return None
    if any(a.split("=", 1)[0] in _SKIP_OPTIONS for a in argv):
        return None
    files = [a for a in argv if not a.startswith("-")]
    if len(files) != 1 or not files[0].lower().endswith(SUFFIXES):
        return None
    path = Path(files[0])
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(1)
    except OSError:
        return None
    if not min_bytes <= size <= MAX_BYTES or head not in _MARSHAL_DICT:
        return None
    return path


def start(argv: list[str], min_bytes: int = MIN_BYTES) -> bool:
    """Fork the child for `argv`'s file when worth it (see the module docstring)."""
    path = wanted(argv, min_bytes)
    if path is None:
        return False
    try:
        stamp = _stamp(path)
        read, write = os.pipe()
    except OSError:
        return False
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        _child(path, write)
    os.close(write)
    if not _pending:
        atexit.register(discard_all)
    _pending[_key(path)] = _Child(pid, read, stamp)
    return True


def _child(path: Path, fd: int) -> None:
    """Load `path` and write the pickled ("ok", Bundle) to `fd`; ("no", None) when it is not
    a pstats file or does not load. Ends the process without running the parent's exit
    handlers."""
    import pickle

    code = 0
    try:
        payload: tuple[str, Any] = ("no", None)
        try:
            from perfview.loaders import cprofile
            from perfview.loaders.registry import detect

            if detect(path) is cprofile:
                payload = ("ok", cprofile.load(path))
        except Exception:  # the window loads it again and reports what is wrong
            payload = ("no", None)
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:  # the reader is gone (the window closed): nothing to tell
        code = 1
    finally:
        os._exit(code)


def take(path: Path | str) -> Any | None:
    """The Bundle the child loaded for `path` (waiting for it), or None: no child for it, it
    could not load it, or the file changed since. Called on a load's worker thread (a pipe's
    read releases the GIL)."""
    child = _pending.pop(_key(path), None)
    if child is None:
        return None
    import pickle

    chunks = []
    try:
        while chunk := os.read(child.fd, 1 << 20):
            chunks.append(chunk)
        status, bundle = pickle.loads(b"".join(chunks))
        if status != "ok" or _stamp(Path(path)) != child.stamp:
            return None
        bundle.path = Path(path)  # as the window named it, not as the command line did
        startup_stamps.stamp("preload_taken")
        return bundle
    except Exception:  # a child killed midway: the window loads the file itself
        return None
    finally:
        _reap(child)


def _reap(child: _Child) -> None:
    with contextlib.suppress(OSError):
        os.close(child.fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(child.pid, 0)


def discard_all() -> None:
    """Stop and reap every child nobody took from (at exit, or when the window forwarded
    its file to a running perfview)."""
    while _pending:
        _, child = _pending.popitem()
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)
        _reap(child)


def pending() -> bool:
    return bool(_pending)


__all__ = [
    "ENV",
    "FIRST_PAGE_VIEW",
    "MIN_BYTES",
    "discard_all",
    "pending",
    "start",
    "take",
    "wanted",
]
