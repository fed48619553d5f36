"""The load service: where a file is parsed and whether the cache is used, decided in one place.

Loaders are pure functions of (path, progress). Everything else about a load is policy, and the
caller states it with explicit `LoadOptions` instead of a loader guessing it from its thread:

* `where`: `HERE` parses on the calling thread (the CLI, scripts, tests). `CHILD` parses a
  file in a child process, which has its own GIL, when its loader can run there
  (`Capabilities.child`: traces). `GIL_FREE` is the window's background load: what a
  loader's GIL-free reader can parse stays in this process (the trace scanner leaves the
  GIL to the GUI thread), and anything that would hold the GIL for long — the general JSON
  path, numba compiling the scanner right after an install — goes to a child, for big files;
  so does a file whose parse would take much of the memory available (`limits.parse_apart`):
  the window then maps the child's columns from disk instead of holding the build's heap.
  A child's columns go straight into the cache's entry when the cache is on (written once).
* `compiled`: take each loader's compiled reader always (True), never (False), or above its
  size threshold (None, `CompiledReader.min_bytes`); benchmarks and tests choose with it.
* `read_cache` / `write_cache`: the parsed-column cache (`perfview.store.parsed_columns`) wraps any
  loader; it only stores formats whose parse costs more than a lookup (traces today). It is
  independent of where the parse ran: a child hands its result back through a private folder,
  never through the cache, so turning the cache off never moves parsing onto the GUI's GIL.

Cancellation: `progress` may raise (`LoadCancelled`); a child is then killed at once.

First use after an install: numba compiles each loader's compiled reader once (~15-20 s of
CPU, then it is on disk): the trace scanner, the CUDA snapshot walker, memray's replay. Nobody
should wait for that silently: a load that is about to compile one first reports its
`CompiledReader.message` through `progress` (the CLI prints it on stderr, the window shows
it), and the window compiles them all ahead in a child at start-up (`compile_ahead`); a load
that would use one and starts meanwhile waits for that child, saying so, instead of compiling
a second time. The service learns all this from each loader's CAPABILITIES, never its name.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from perfview import streamed
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders import limits
from perfview.loaders.base import GZIP_MAGIC, HEAD_BYTES, CompiledReader, Where, guarded
from perfview.loaders.child import CHILD_MESSAGE, POLL_S, child_load, in_child
from perfview.loaders.registry import LOADERS, Loader, detect
from perfview.store import parsed_columns, write_gates

CHILD_MIN_BYTES = 64_000_000  # smaller traces parse in about a second in-process
# what the window's status bar says while `compile_ahead`'s child runs (the trace scanner
# first: the format most opened big)
COMPILE_MESSAGE = "compiling the trace scanner (once, ~15 s)…"


@dataclass(frozen=True)
class LoadOptions:
    """How one load runs. The defaults are the CLI's: parse here, use the cache."""

    where: Where = Where.HERE
    read_cache: bool = True
    write_cache: bool = True
    child_min_bytes: int = CHILD_MIN_BYTES  # GIL_FREE: smaller files never go to a child
    compiled: bool | None = None  # each loader's compiled reader: always, never, by size
    # when the cache entry is written: at once (the CLI), or once the window's tab is drawn
    write_gate: write_gates.WriteGate = write_gates.NOW
    # a parse apart (`child_load`) also makes the store's entries of the pages shown (the
    # window's open; the CLI shows no page)
    stored_pages: bool = False


FRESH = LoadOptions(read_cache=False, write_cache=False)  # always parse, leave no trace


def load(
    path: Path | str, *, progress: Progress = noop, options: LoadOptions = LoadOptions()
) -> Bundle:
    """Detect the format of `path` and load it as `options` say; LoadError with a user sentence."""
    path = Path(path)
    loader = _detect(path)
    arriving = streamed.pending(path) is not None  # nothing cached for a file downloading
    if options.read_cache and not arriving and parsed_columns.enabled(path):
        progress(0.0, "reading the cache")
        hit = parsed_columns.get(path)
        if hit is not None:
            progress(1.0, "loaded from the cache")
            return hit
    reader = loader.CAPABILITIES.compiled
    if reader is not None and reader.pending(path, options.compiled):
        progress(0.0, reader.message)
    caching = options.write_cache and parsed_columns.enabled(path)
    bundle, stored = _parse(loader, path, progress, options, caching)
    streamed.settle(path)  # the cache keys its entry on the whole file
    if caching and not stored:
        parsed_columns.put_later(path, bundle, options.write_gate)
    progress(1.0, "done")
    return bundle


def _detect(path: Path) -> Loader:
    """`detect`; for a download still arriving (`perfview.streamed`), from its first bytes
    when a loader that reads while it arrives (`Capabilities.streams`) takes a plain file,
    else once it is whole."""
    arriving = streamed.pending(path)
    if arriving is None:
        return detect(path)
    head = arriving.head(HEAD_BYTES)
    if not head.startswith(GZIP_MAGIC):
        loader = detect(path, head)
        if loader.CAPABILITIES.streams:
            return loader
    arriving.whole()
    return detect(path)


def _parse(
    loader: Loader, path: Path, progress: Progress, options: LoadOptions, caching: bool
) -> tuple[Bundle, bool]:
    """The Bundle, and whether its columns are in the cache already (a child put them)."""
    caps = loader.CAPABILITIES
    reader, choice = caps.compiled, options.compiled

    def pending() -> bool:
        return reader is not None and reader.pending(path, choice)

    def apart(message: str = CHILD_MESSAGE) -> tuple[Bundle, bool]:
        return child_load(
            path,
            progress,
            message,
            compiled=choice,
            cache=caching,
            stored_pages=options.stored_pages,
        )

    if options.where is Where.CHILD and caps.child:
        return apart()
    if options.where is Where.GIL_FREE and caps.child and _big(path, options):
        if pending():  # the compile-ahead child may be at it: do not compile twice
            wait_for_compile(progress)
        gil_free = caps.gil_free_load
        if gil_free is not None and not limits.parse_apart(path, loader.NAME):
            done = guarded(lambda: gil_free(path, progress, choice))
            if done is not None:
                return done, False
        return apart(reader.message if reader is not None and pending() else CHILD_MESSAGE)
    if options.where is Where.GIL_FREE and pending():
        wait_for_compile(progress)  # the window's compile-ahead child: do not compile twice
    bundle = guarded(lambda: loader.load(path, progress=progress, compiled=choice))
    assert bundle is not None
    return bundle, False


def _big(path: Path, options: LoadOptions) -> bool:
    try:
        return streamed.size_of(path) >= options.child_min_bytes
    except OSError:
        return False


# ------------------------------------------------------------ compiling the compiled readers

_compiler: multiprocessing.process.BaseProcess | None = None
_compiler_lock = threading.Lock()


def compiled_readers() -> list[CompiledReader]:
    """Every registered loader's compiled reader, in the registry's order."""
    readers = (loader.CAPABILITIES.compiled for loader in LOADERS)
    return [reader for reader in readers if reader is not None]


def compile_messages() -> frozenset[str]:
    """What a load reports before it compiles a reader (the CLI prints these on stderr)."""
    return frozenset(reader.message for reader in compiled_readers())


def compile_pending(path: Path | None = None, compiled: bool | None = None) -> bool:
    """With `path`: True when loading it would compile its loader's reader first (its code is
    not on disk yet, numba's cache, and the load would take it: `compiled` or the file's
    size). Without: True while any loader's compiled reader is not on disk. Imports numba
    (~0.4 s). A path that no loader reads is False: the load will say why."""
    if path is None:
        return any(reader.pending() for reader in compiled_readers())
    try:
        reader = detect(Path(path)).CAPABILITIES.compiled
    except LoadError:
        return False
    return reader is not None and reader.pending(Path(path), compiled)


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
        what = [reader.what for reader in compiled_readers() if reader.pending()]
        if layout_compile_pending():
            what.insert(min(1, len(what)), "the Timeline layout")
        if not what:
            return False
        global _compiling_what
        _compiling_what = tuple(what)
        context = multiprocessing.get_context("spawn")  # the child gets this sys.path
        _compiler = context.Process(target=_compile_all, name="perfview-compile", daemon=True)
        _compiler.start()
        return True


def _compile_all() -> None:
    """The compile-ahead child: the first registered loader's reader (the trace scanner: the
    format most opened big), then the Timeline layout's steps (what a big trace shows next),
    then the other loaders' readers."""
    from perfview.core.layout import layout_kernels

    steps = [reader.warm for reader in compiled_readers()]
    steps.insert(1, layout_kernels.warm)
    for step in steps:
        step()


_compiling_what: tuple[str, ...] = ()


def compile_message() -> str:
    """What `compile_ahead`'s child compiles, in words, for the window's status bar: only the
    parts not on disk when it started ("compiling the Timeline layout…" when the scanner was
    compiled already), never a scanner compile that is not running."""
    what = list(_compiling_what) or ["the trace scanner"]
    names = what[0] if len(what) == 1 else ", ".join(what[:-1]) + " and " + what[-1]
    each = " each" if len(what) > 1 else ""
    return f"compiling {names} (once after an install, ~15 s{each})…"


def compiling() -> bool:
    """True while `compile_ahead`'s child runs."""
    compiler = _compiler
    return compiler is not None and compiler.is_alive()


def wait_for_compile(progress: Progress = noop) -> None:
    """Wait for `compile_ahead`'s child, reporting COMPILE_MESSAGE (Cancel interrupts)."""
    while compiling():
        progress(0.0, COMPILE_MESSAGE)
        time.sleep(POLL_S)


__all__ = [
    "COMPILE_MESSAGE",
    "FRESH",
    "LoadOptions",
    "Where",
    "child_load",
    "compile_ahead",
    "compile_message",
    "compile_messages",
    "compile_pending",
    "compiled_readers",
    "compiling",
    "guarded",
    "in_child",
    "layout_compile_pending",
    "load",
    "wait_for_compile",
]
