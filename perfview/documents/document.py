"""Open a path as a document: load it with the load service, then run the plan of what to
prepare first, off the GUI thread. The window's load task and every CLI command call
`open_document`; what differs between them is in `OpenOptions`.

Doing the derived work here (not on first display) keeps a large trace's first paint from
freezing the window: the GUI thread then only builds widgets. The store entries the open
makes are written once `OpenDocument.writes` opens: the window's tab opens it when it is
drawn; the CLI's is open from the start.

The start-up shortcuts are inputs, never module globals read from here: a bundle parsed
while the window started (`OpenOptions.preloaded`, `perfview.preload.take`) and the imports a
big load wants first (`OpenOptions.before_big_load`, the window's `warm_imports`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from perfview import streamed
from perfview.core.model import Bundle, CallTree, mapped_pages
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.documents import ahead, plan
from perfview.documents.prepare import first_page_data
from perfview.loaders.base import Where
from perfview.store import remote
from perfview.store.write_gates import NOW, WriteGate

# An open's store entries wait for its tab to be drawn (`OpenDocument.writes`); a document
# that no tab took (cancelled meanwhile) lets them start after this long.
WRITE_GATE_CAP_S = 30.0
BIG_BYTES = 16_000_000  # smaller files load in well under a second: nothing to start first


@dataclass(frozen=True)
class OpenOptions:
    """How one open runs. The defaults are the CLI's: parse here, prepare nothing, store now.

    `tables(bundle)`: the summary tables to compute with the load; `pages(bundle)`: the pages
    whose data to prepare (the window: `plan.first_pages`); with `pages`, a big file's ahead
    pages are laid out on threads of their own beside them (`documents.ahead`)."""

    where: Where = Where.HERE
    tables: Callable[[Bundle], Sequence[str]] | None = None
    pages: Callable[[Bundle], Sequence[str]] | None = None
    gated: bool = False  # store entries wait for `OpenDocument.writes` to open (the window)
    preloaded: Callable[[Path], Bundle | None] | None = None
    before_big_load: Callable[[], None] | None = None


@dataclass
class OpenDocument:
    """One open document, owned here: its bundle, the tables and page data prepared so far
    (a `documents.ahead.Pending` for a page still being laid out), and the gate its store
    entries wait on."""

    path: Path
    bundle: Bundle
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    seconds: float = 0.0
    pages: dict[str, Any] = field(default_factory=dict)
    writes: WriteGate = NOW

    def table(self, view: str) -> pd.DataFrame:
        """Summary table `view` (a CLI view name), computed once and kept."""
        table = self.tables.get(view)
        if table is None:
            from perfview.core.pages import summary

            table = summary.summarize(self.bundle, view)
            self.tables[view] = table
        return table

    def tree(self) -> CallTree | None:
        """The call tree the flame graphs draw (pstats: estimated; traces: merged slices)."""
        from perfview.core.analysis import bundle_tree

        return bundle_tree.tree_for(self.bundle)


def _big(path: Path) -> bool:
    try:
        return streamed.size_of(path) >= BIG_BYTES
    except OSError:
        return False


def open_document(
    path: str | Path, *, progress: Progress = noop, options: OpenOptions = OpenOptions()
) -> OpenDocument:
    """Load `path` and prepare what `options` asks for; LoadError (one sentence) on bad input,
    LoadCancelled when `progress` raises it."""
    started = time.perf_counter()
    target = remote.resolve(path, stream=True)  # a URL: its cached copy, parsed as it arrives
    big = options.pages is not None and _big(target)
    if big and options.before_big_load is not None:
        options.before_big_load()
    writes = WriteGate(WRITE_GATE_CAP_S) if options.gated else NOW
    try:
        bundle = _load(target, progress, options, writes)
        with ahead.heap_kept(bundle):  # the first pages' temporaries reuse the heap
            tables, pages = _prepared(bundle, options, big, progress, writes)
    except BaseException:
        writes.open()  # no tab will: whatever the open stored is written now
        raise
    progress(1.0, "done")
    return OpenDocument(target, bundle, tables, time.perf_counter() - started, pages, writes)


def _load(path: Path, progress: Progress, options: OpenOptions, writes: WriteGate) -> Bundle:
    """The bundle: the one parsed while the window started, else loaded now. A loader's
    unexpected exception propagates as it is: the window and the CLI word it differently."""
    bundle = options.preloaded(path) if options.preloaded is not None else None
    if bundle is not None:
        return bundle
    scaled = progress if options.pages is None else (lambda f, m: progress(0.9 * f, m))
    from perfview import loaders  # the service and every loader: not before a file is opened

    shown = options.pages is not None  # a child parsing it apart makes their entries too
    return loaders.load(
        path,
        progress=scaled,
        options=loaders.LoadOptions(options.where, write_gate=writes, stored_pages=shown),
    )


def _prepared(
    bundle: Bundle, options: OpenOptions, big: bool, progress: Progress, writes: WriteGate
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """What the tab shows first: the call tree when the first page draws from it, the summary
    tables `options.tables` names, the data of the pages `options.pages` names, and a big
    file's ahead pages laid out on threads of their own from now on."""
    first = list(options.pages(bundle)) if options.pages is not None else []
    pending: dict[str, Any] = dict(ahead.start(bundle, first, writes)) if big else {}
    if plan.tree_first(bundle, first):
        progress(0.92, "building the call tree")
        from perfview.core.analysis import bundle_tree

        bundle_tree.tree_for(bundle)
    tables: dict[str, pd.DataFrame] = {}
    names = list(options.tables(bundle)) if options.tables is not None else []
    for i, view in enumerate(names):
        progress(0.93 + 0.04 * i / max(len(names), 1), f"summarising {view}")
        try:
            from perfview.core.pages import summary

            tables[view] = summary.summarize(bundle, view)
        except (ImportError, LoadError, ValueError, KeyError):
            continue  # the tab computes (and reports) it again when shown
    return tables, {**pending, **prepare_pages(bundle, tables, first, progress, writes)}


def prepare_pages(
    bundle: Bundle,
    tables: dict[str, pd.DataFrame],
    names: Sequence[str],
    progress: Progress,
    writes: WriteGate = NOW,
) -> dict[str, Any]:
    """`first_page_data` for each page in `names`; a page that fails is left out (its tab
    computes it again when shown, and reports the error in place). The pages of the stored
    columns a page read go back once it is made (`mapped_pages`): a 10 GB trace's Overview
    read ~0.9 GB of them, which the window then held while it was open."""
    pages: dict[str, Any] = {}
    for i, name in enumerate(names):
        progress(0.97 + 0.03 * i / max(len(names), 1), f"preparing the {name} page")
        try:
            pages[name] = first_page_data(name, bundle, tables, writes)
        except (LoadCancelled, KeyboardInterrupt):
            raise
        except Exception:  # shown in place by the tab, not fatal to the open
            continue
        finally:
            if bundle.timeline is not None:
                mapped_pages.give_back(bundle.timeline.events)
    return pages


__all__ = [
    "BIG_BYTES",
    "WRITE_GATE_CAP_S",
    "OpenDocument",
    "OpenOptions",
    "open_document",
    "prepare_pages",
]
