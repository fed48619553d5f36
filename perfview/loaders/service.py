"""The load service: where a file is parsed and whether the cache is used, decided in one place.

Loaders are pure functions of (path, progress). Everything else about a load is policy, and the
caller states it with explicit `LoadOptions` instead of a loader guessing it from its thread:

* `where`: `HERE` parses on the calling thread (the CLI, scripts, tests). `CHILD` parses a
  trace in a child process, which has its own GIL. `GIL_FREE` is the window's background
  load: what the compiled trace scanner can parse stays in this process (the scanner leaves
  the GIL to the GUI thread), and anything that would hold the GIL for long — the general
  JSON path, numba compiling the scanner right after an install — goes to a child, for big
  traces.
* `read_cache` / `write_cache`: the parsed-column cache (`perfview.store.parsed_columns`) wraps any
  loader; it only stores formats whose parse costs more than a lookup (traces today). It is
  independent of where the parse ran: a child hands its result back through a private folder,
  never through the cache, so turning the cache off never moves parsing onto the GUI's GIL.

Cancellation: `progress` may raise (`LoadCancelled`); a child is then killed at once.

First use after an install: numba compiles the trace scanner once (~15-20 s of CPU, then it
is on disk), and the CUDA snapshot walker and memray's replay likewise. Nobody should wait for
that silently: a load that is about to compile the scanner first reports `COMPILE_MESSAGE`
through `progress` (the CLI prints it on stderr, the window shows it), and the window compiles
all three ahead in a child at start-up (`compile_ahead`); a big trace, snapshot or memray load
that starts meanwhile waits for that child, saying so, instead of compiling a second time.
"""

from __future__ import annotations

import enum
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders import cuda_snapshot, memray_capture, trace
from perfview.loaders.registry import Loader, detect
from perfview.loaders.trace.loader import SCANNER_MIN_BYTES
from perfview.store import parsed_columns, write_gates

CHILD_MIN_BYTES = 64_000_000  # smaller traces parse in about a second in-process
POLL_S = 0.1  # how often the parent checks for Cancel while the child is quiet
COMPILE_MESSAGE = "compiling the trace scanner (once, ~15 s)…"


class Where(enum.Enum):
    """Where the parse runs (see the module docstring)."""

    HERE = "here"
    GIL_FREE = "gil-free"
    CHILD = "child"


@dataclass(frozen=True)
class LoadOptions:
    """How one load runs. The defaults are the CLI's: parse here, use the cache."""

    where: Where = Where.HERE
    read_cache: bool = True
    write_cache: bool = True
    child_min_bytes: int = CHILD_MIN_BYTES  # GIL_FREE: smaller files never go to a child
    # when the cache entry is written: at once (the CLI), or once the window's tab is drawn
    write_gate: write_gates.WriteGate = write_gates.NOW


FRESH = LoadOptions(read_cache=False, write_cache=False)  # always parse, leave no trace


def load(
    path: Path | str, *, progress: Progress = noop, options: LoadOptions = LoadOptions()
) -> Bundle:
    """Detect the format of `path` and load it as `options` say; LoadError with a user sentence."""
    path = Path(path)
    loader = detect(path)
    cached = parsed_columns.enabled(path)
    if options.read_cache and cached:
        progress(0.0, "reading the cache")
        hit = parsed_columns.get(path)
        if hit is not None:
            progress(1.0, "loaded from the cache")
            return hit
    if loader is trace and compile_pending(path):
        progress(0.0, COMPILE_MESSAGE)
    bundle = _parse(loader, path, progress, options)
    if options.write_cache and cached:
        parsed_columns.put_later(path, bundle, options.write_gate)
    progress(1.0, "done")
    return bundle


def _parse(loader: Loader, path: Path, progress: Progress, options: LoadOptions) -> Bundle:
    if options.where is Where.CHILD and loader is trace:
        return in_child(path, progress)
    if options.where is Where.GIL_FREE and loader is trace and _big(path, options):
        if compile_pending(path):  # the compile-ahead child may be at it: do not compile twice
            wait_for_compile(progress)
        scanned = guarded(lambda: trace.load_scanned(path, progress=progress))
        if scanned is not None:
            return scanned
        pending = compile_pending(path)
        return in_child(path, progress, COMPILE_MESSAGE if pending else CHILD_MESSAGE)
    if options.where is Where.GIL_FREE and (
        (loader is cuda_snapshot and snapshot_compile_pending())
        or (loader is memray_capture and memray_compile_pending())
    ):
        wait_for_compile(progress)  # the window's compile-ahead child: do not compile twice
    bundle = guarded(lambda: loader.load(path, progress=progress))
    assert bundle is not None
    return bundle


def _big(path: Path, options: LoadOptions) -> bool:
    try:
        return path.stat().st_size >= options.child_min_bytes
    except OSError:
        return False


def guarded(fn: Callable[[], Bundle | None]) -> Bundle | None:
    """Memory and I/O failures of a parse as the user's one-sentence LoadError."""
    try:
        return fn()
    except LoadError:
        raise
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc
    except OSError as exc:
        raise LoadError(f"it cannot be read ({exc.strerror or exc})") from exc


# ------------------------------------------------------------- compiling the trace scanner

_compiler: multiprocessing.process.BaseProcess | None = None
_compiler_lock = threading.Lock()


def scanner_wanted(path: Path) -> bool:
    """True when loading trace `path` would use the compiled scanner (its size, or
    PERFVIEW_TRACE_SCANNER=1 / =0 forcing it on / off, as the trace loader decides)."""
    choice = os.environ.get("PERFVIEW_TRACE_SCANNER", "")
    if choice in ("0", "1"):
        return choice == "1"
    try:
        return path.stat().st_size >= SCANNER_MIN_BYTES
    except OSError:
        return False


def compile_pending(path: Path | None = None) -> bool:
    """True when the trace scanner's compiled code is not on disk yet (numba's cache), and
    with `path`, when loading that trace would use the scanner. Imports numba (~0.4 s)."""
    if path is not None and not scanner_wanted(path):
        return False
    try:
        from perfview.loaders.trace.scan import parallel
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    return not parallel.compiled()


def snapshot_compile_pending() -> bool:
    """True when the CUDA snapshot reader's compiled walker is not on disk yet."""
    from perfview.loaders import cuda_snapshot_fast

    return not cuda_snapshot_fast.compiled()


def memray_compile_pending() -> bool:
    """True when memray's compiled record replay is not on disk yet."""
    from perfview.loaders.memray_stream import warm

    return not warm.compiled()


def layout_compile_pending() -> bool:
    """True when the Timeline layout's compiled steps (`core.layout.layout_kernels`) are not
    on disk yet (until then a layout takes the numpy way)."""
    from perfview.core.layout import layout_kernels

    return not layout_kernels.compiled()


def compile_ahead() -> bool:
    """Compile the trace scanner and the CUDA snapshot walker in a child process unless they
    are on disk or compiling already (compiling holds the GIL for most of ~15-20 s each: a
    window must not do it in-process). True while a compile runs. Cheap to call again."""
    global _compiler
    with _compiler_lock:
        if _compiler is not None and _compiler.is_alive():
            return True
        if not (
            compile_pending()
            or snapshot_compile_pending()
            or memray_compile_pending()
            or layout_compile_pending()
        ):
            return False
        context = multiprocessing.get_context("spawn")  # the child gets this sys.path
        _compiler = context.Process(target=_compile_all, name="perfview-compile", daemon=True)
        _compiler.start()
        return True


def _compile_all() -> None:
    """The compile-ahead child: the trace scanner first (the format most opened big), then
    the Timeline layout's steps (what a big trace shows next)."""
    from perfview.core.layout import layout_kernels
    from perfview.loaders import cuda_snapshot_fast
    from perfview.loaders.memray_stream import warm
    from perfview.loaders.trace.scan import parallel

    parallel.warm()
    layout_kernels.warm()
    cuda_snapshot_fast.warm()
    warm.warm()


def compiling() -> bool:
    """True while `compile_ahead`'s child runs."""
    compiler = _compiler
    return compiler is not None and compiler.is_alive()


def wait_for_compile(progress: Progress = noop) -> None:
    """Wait for `compile_ahead`'s child, reporting COMPILE_MESSAGE (Cancel interrupts)."""
    while compiling():
        progress(0.0, COMPILE_MESSAGE)
        time.sleep(POLL_S)


# --------------------------------------------------------------------------- child process

CHILD_MESSAGE = "parsing in a helper process"


def in_child(path: Path, progress: Progress = noop, message: str = CHILD_MESSAGE) -> Bundle:
    """Parse `path` in a spawned child process and return its Bundle.

    The child writes the columns into a private temporary folder in the cache's entry format
    (`parsed_columns.write_entry`) and the parent reads them back
    (`parsed_columns.read_entry`): on a big trace that costs a small fraction of the parse.
    Progress arrives over a pipe. Raises LoadError for a file the loader refused and lets an
    exception from `progress` (Cancel) propagate after killing the child.
    """
    context = multiprocessing.get_context("spawn")  # sys.path travels; no PYTHONPATH edits
    folder = Path(tempfile.mkdtemp(prefix="perfview-child-"))
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child_main, args=(str(path), str(folder), send), daemon=True)
    try:
        child.start()
        send.close()
        _follow(child, receive, progress, message)
        progress(0.97, "reading the parsed trace")
        return parsed_columns.read_entry(folder / "entry", path)
    except (EOFError, OSError, ValueError, KeyError) as exc:
        raise LoadError(f"the helper process could not parse it ({exc})") from exc
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
        shutil.rmtree(folder, ignore_errors=True)


def _follow(
    child: multiprocessing.process.BaseProcess,
    receive: Connection,
    progress: Progress,
    message: str = CHILD_MESSAGE,
) -> None:
    """Relay the child's progress until it reports done; raise its error as LoadError.
    `message` stands until the child's first report (it may compile the scanner first)."""
    fraction = 0.0
    while True:
        if not receive.poll(POLL_S):
            if not child.is_alive() and not receive.poll():
                raise LoadError(f"the helper process ended unexpectedly (exit {child.exitcode})")
            progress(fraction, message)  # lets Cancel interrupt a quiet child
            continue
        tag, value, text = receive.recv()
        if tag == "P":
            fraction, message = 0.95 * float(value), str(text)
            progress(fraction, message)
        elif tag == "E":
            raise LoadError(str(text))
        else:
            return


def _child_main(file: str, folder: str, send: Connection) -> None:
    """Child side: detect, parse, write the columns, report through the pipe."""
    import time

    last = [0.0]

    def report(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.05:
            last[0] = now
            send.send(("P", fraction, message))

    try:
        path = Path(file)
        loader = detect(path)
        if loader is trace and compile_pending(path):  # say so, then compile before reading
            send.send(("P", 0.0, COMPILE_MESSAGE))
            from perfview.loaders.trace.scan import parallel

            parallel.warm()
        bundle = guarded(lambda: loader.load(path, progress=report))
        assert bundle is not None
        report(1.0, "storing")
        parsed_columns.write_entry(Path(folder) / "entry", bundle)
    except LoadError as exc:
        send.send(("E", 0.0, str(exc)))
        return
    send.send(("D", 1.0, ""))


__all__ = [
    "COMPILE_MESSAGE",
    "FRESH",
    "LoadOptions",
    "Where",
    "compile_ahead",
    "compile_pending",
    "compiling",
    "guarded",
    "in_child",
    "layout_compile_pending",
    "load",
    "scanner_wanted",
    "wait_for_compile",
]
