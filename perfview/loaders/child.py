"""Parsing in a child process: the window's way for a file whose parse would hold the GIL for
long, or take much of the memory available (`service` decides; `limits.parse_apart`).

The child parses, writes the columns in the cache's entry format (into the cache itself when
it is on: written once) and reports progress over a pipe; the parent maps the columns back,
without checking again the blocks the child checksummed as it wrote them (`artifacts.vouch`).
When the parent will show pages (`stored_pages`), the child also makes the entries the store
keeps for pages (`perfview.store.PAGE_ENTRIES`: the Timeline's layout, the Overview's tables)
from the tables it parsed, while their columns are written, so their temporaries too are the
child's, gone when it ends: on a 10 GB trace the layout alone took 4 GB of the window's heap
while it was made.
"""

from __future__ import annotations

import functools
import json
import logging
import multiprocessing
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path

from perfview import streamed
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.core.pages import PAGES, tabs_for
from perfview.loaders.base import guarded
from perfview.loaders.registry import detect
from perfview.store import PAGE_ENTRIES, PageEntry, artifacts, parsed_columns, write_gates

log = logging.getLogger(__name__)
POLL_S = 0.1  # how often the parent checks for Cancel while the child is quiet

CHILD_MESSAGE = "parsing in a helper process"


def in_child(
    path: Path,
    progress: Progress = noop,
    message: str = CHILD_MESSAGE,
    *,
    compiled: bool | None = None,
) -> Bundle:
    """Parse `path` in a spawned child process and return its Bundle (`compiled`: as
    `LoadOptions.compiled`); see `child_load`."""
    return child_load(path, progress, message, compiled=compiled)[0]


def child_load(
    path: Path,
    progress: Progress = noop,
    message: str = CHILD_MESSAGE,
    *,
    compiled: bool | None = None,
    cache: bool = False,
    stored_pages: bool = False,
) -> tuple[Bundle, bool]:
    """Parse `path` in a spawned child process: its Bundle, and whether its columns are in
    the cache.

    The child writes the columns in the cache's entry format, into the cache itself when
    `cache` (`parsed_columns.put`; the entry is then written once, not again by the parent),
    else (or when that fails: a full disk) into a private temporary folder
    (`parsed_columns.write_entry`), and the parent reads them back, memory-mapped and
    checked: on a big trace that costs a small fraction of the parse. Progress arrives over
    a pipe. Raises LoadError for a file the loader refused and lets an exception from
    `progress` (Cancel) propagate after killing the child.
    """
    streamed.settle(path)  # a download still arriving: the child reads the whole file
    context = multiprocessing.get_context("spawn")  # sys.path travels; no PYTHONPATH edits
    folder = Path(tempfile.mkdtemp(prefix="perfview-child-"))
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_child_main,
        args=(str(path), str(folder), send, compiled, cache, stored_pages),
        daemon=True,
    )
    try:
        child.start()
        send.close()
        cached = _follow(child, receive, progress, message) == CACHED
        progress(0.97, "reading the parsed trace")
        if cached:
            hit = parsed_columns.get(path)
            if hit is not None:
                return hit, True
            raise LoadError("the helper process's parsed columns could not be read back")
        return parsed_columns.read_entry(folder / "entry", path), False
    except (EOFError, OSError, ValueError, KeyError) as exc:
        raise LoadError(f"the helper process could not parse it ({exc})") from exc
    finally:
        if child.pid is not None:  # started (a failed start raised its own error above)
            if child.is_alive():
                child.kill()
            child.join()
        receive.close()
        shutil.rmtree(folder, ignore_errors=True)


CACHED = "cache"  # the child's last word when its columns went into the cache


def _follow(
    child: multiprocessing.process.BaseProcess,
    receive: Connection,
    progress: Progress,
    message: str = CHILD_MESSAGE,
) -> str:
    """Relay the child's progress until it reports done (then its word: CACHED or ""); raise
    its error as LoadError. `message` stands until the child's first report (it may compile
    the scanner first)."""
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
        elif tag == "W":  # the entries it wrote: opened without checking their blocks again
            for folder, manifest in json.loads(str(text)):
                artifacts.vouch(folder, manifest)
        elif tag == "E":
            raise LoadError(str(text))
        else:
            return str(text)


def _child_main(
    file: str,
    folder: str,
    send: Connection,
    compiled: bool | None = None,
    cache: bool = False,
    stored_pages: bool = False,
) -> None:
    """Child side: detect, parse, write the columns (into the cache when `cache` and it
    takes them; then, with `stored_pages`, the pages' entries too), report through the pipe."""
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
        reader = loader.CAPABILITIES.compiled
        if reader is not None and reader.pending(path, compiled):  # say so, then compile
            send.send(("P", 0.0, reader.message))
            reader.warm()
        bundle = guarded(lambda: loader.load(path, progress=report, compiled=compiled))
        assert bundle is not None
        report(1.0, "storing; preparing its pages" if cache and stored_pages else "storing")
        pages = functools.partial(_store_pages, bundle) if stored_pages else None
        if cache and parsed_columns.put(path, bundle, beside=pages) is not None:
            if pages is not None:
                write_gates.flush()  # the pages' entries, written once made
            _done(send, CACHED)
            return
        parsed_columns.write_entry(Path(folder) / "entry", bundle)
    except LoadError as exc:
        send.send(("E", 0.0, str(exc)))
        return
    _done(send, "")


def _done(send: Connection, word: str) -> None:
    """The child's last words: the entries it wrote (vouched for, `artifacts.vouch`), then
    done with `word` (CACHED or "")."""
    send.send(("W", 0.0, json.dumps(artifacts.published())))
    send.send(("D", 1.0, word))


def _store_pages(bundle: Bundle) -> None:
    """Make the store's entries of the pages the bundle's document shows (`Page.stored`: the
    Overview's tables, the Timeline's layout), on a thread each, while the parsed columns
    are written (`parsed_columns.put`'s `beside`): the disk takes the columns while the CPU
    makes the pages. One after the other, a 10 GB trace's columns took 11 s to write and
    sync, then its pages 11 s more from the columns read back. Never fails the load: a
    page whose entry is not made computes its data in the parent, as it would without this
    step."""
    kinds = dict.fromkeys(PAGES[tab.name].stored for tab in tabs_for(bundle))
    entries = [PAGE_ENTRIES[kind] for kind in kinds if kind in PAGE_ENTRIES]

    def make(entry: PageEntry) -> None:
        try:
            entry.first(bundle, write_gates.NOW)
        except Exception as exc:  # the parent computes it instead
            log.info("a page's entry was not made in the helper process: %s", exc)

    with ThreadPoolExecutor(max_workers=max(len(entries), 1)) as pool:
        list(pool.map(make, entries))
