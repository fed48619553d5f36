"""Start-up warm-up of the window: import what a big trace's tab needs and load (or compile
ahead, in a child) the compiled readers, off the GUI thread, before the first big file is
opened. `tasks.load_and_prepare` calls `warm_imports` too, for a big file opened before it ran.
"""

from __future__ import annotations

import contextlib
import gc
import threading

from perfview import startup_gc

# Modules the first pages of a document tab import. Importing them here, while the file
# loads, keeps their import time (pyqtgraph alone is 0.2-0.45 s) off the GUI thread: module
# code only defines classes, it creates no widgets, so it is safe on a worker.
WARM_IMPORTS = (
    "perfview.loaders.service",  # the registry, every loader, pandas
    "perfview.loaders.trace.scan.parallel",  # numba: its import is the biggest of all
    "pyqtgraph",
    "perfview.qt.views.timeline_view",
    "perfview.qt.views.torch_overview_view",
    "perfview.qt.views.table_view",
)


_WARMED = False


def warm_imports() -> None:
    """Import the modules a trace tab needs, then freeze what exists into the collector's
    permanent generation. The window calls it once at start-up:

    * a module's first import holds the GIL for up to ~0.3 s, which on a load's worker
      thread froze the GUI thread that long;
    * every full garbage collection walks every tracked object, and the libraries alone
      (numba, pandas, Qt) make ~200k of them: 60-120 ms per collection, on whichever thread
      allocates. Module-level objects live as long as the process, so freezing them is safe.
    """
    global _WARMED
    if _WARMED:
        return
    _WARMED = True
    import importlib

    for module in WARM_IMPORTS:
        try:
            importlib.import_module(module)
        except Exception:  # a missing optional view is reported when shown
            continue
    gc.collect()
    gc.freeze()
    startup_gc.release()  # the window's start is over: collect as usual from now on
    threading.Thread(target=_warm_scanner, name="perfview-warm", daemon=True).start()


def warm_in_background() -> None:
    """`warm_imports` on a daemon thread: a module's import mostly runs Python code, which
    leaves the GUI thread the GIL every few milliseconds."""
    if not _WARMED:
        threading.Thread(target=warm_imports, name="perfview-imports", daemon=True).start()


def _warm_scanner() -> None:
    """Load the trace scanner's compiled code (~0.4 s, mostly outside the GIL: the GUI thread
    stalls 55 ms at most), so the first big trace opened does not pay for it.

    Right after an install the code is not compiled yet, and compiling holds the GIL for
    much of ~20 s: a child process compiles it then (numba keeps it on disk), so the window
    stays smooth, and a later load finds it ready.
    """
    global _SCANNER_DECIDED
    try:
        with contextlib.suppress(Exception):  # a load reports any problem with the scanner
            from perfview.loaders import service
            from perfview.loaders.trace.scan import parallel as trace_parallel

            service.compile_ahead()  # a child compiles what is not on disk yet
            if not service.compile_pending():  # the scanner is: load it now
                trace_parallel.warm()
            if not service.layout_compile_pending():  # and the Timeline layout's steps
                from perfview.core.layout import layout_kernels

                layout_kernels.warm()
    finally:
        _SCANNER_DECIDED = True


_SCANNER_DECIDED = False


def scanner_settled() -> bool:
    """True once start-up's warm-up has loaded the scanner or started compiling it (the
    window's status bar then follows `service.compiling()`)."""
    return _SCANNER_DECIDED


__all__ = ["WARM_IMPORTS", "scanner_settled", "warm_imports", "warm_in_background"]
