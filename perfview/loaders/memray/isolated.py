"""memray's own reader in a child process: a damaged capture that crashes it is one sentence.

memray's `FileReader` is native code that trusts the file: a capture with flipped bytes made
it dereference garbage and kill the process (the fuzzer found it: a segmentation fault in
`get_high_watermark_allocation_records`). perfview reads the captures memray's reader is
needed for (native frames, `--aggregate`) in a spawned child instead, which sends the reduced
columns back through a pipe; if the child dies, the load fails with a sentence and the
window or the CLI carries on. Cancel (an exception from `progress`) kills the child at once.
Spawned, not forked: the window has threads, and a fork copies their locks mid-use.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress

POLL_S = 0.1  # how often the parent looks for Cancel while the child reads
CRASHED = "memray's reader crashed on it: the capture is damaged (exit status {code})"


def _child(read: Callable[[Path], Any], path: str, conn: Connection) -> None:
    try:
        result: tuple[str, Any] = ("ok", read(Path(path)))
    except LoadError as exc:
        result = ("refused", str(exc))
    except Exception as exc:  # the parent words it: never a traceback for a user's file
        result = ("failed", f"{type(exc).__name__}: {exc}")
    conn.send(result)
    conn.close()


def read_isolated(read: Callable[[Path], Any], path: Path, progress: Progress) -> Any:
    """`read(path)` in a spawned child: its result, a LoadError with the child's sentence,
    or a LoadError saying memray's reader crashed. `read` must be a module-level function."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(read, str(path), child), daemon=True)
    process.start()
    child.close()
    try:
        while not parent.poll(POLL_S):
            if not process.is_alive() and not parent.poll():
                raise LoadError(CRASHED.format(code=process.exitcode))
            progress(0.5, "reading the capture with memray (in a child process)")
        try:
            status, value = parent.recv()
        except EOFError as exc:  # it died while sending
            process.join(5)
            raise LoadError(CRASHED.format(code=process.exitcode)) from exc
    finally:
        if process.is_alive():
            process.kill()
        process.join(5)
        parent.close()
    if status == "ok":
        return value
    if status == "refused":
        raise LoadError(value)
    raise LoadError(f"memray could not read the capture ({value[:200]})")


__all__ = ["read_isolated"]
