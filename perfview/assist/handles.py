"""The documents an assistant opened, each under a handle ("d1", "d2", …).

A file opens through `perfview.documents.open_document` (the CLI's options: parsed here, no
window, the store written now, as `perfview summary` does); a folder of per-rank traces opens
as a job (`perfview.jobs.open_job`), a document of the format "job", as `perfview summary
FOLDER` does. Either way the answers read one `Bundle` and the page registry. At most `MAX_OPEN`
documents stay open: an assistant that opens more closes one first, so the server's memory is
bounded by what the user asked for, not by how long the conversation runs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfview.cli_common import compile_notice
from perfview.core.analysis import query
from perfview.core.analysis.torch.job import document
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.documents import open_document
from perfview.store import remote

MAX_OPEN = 8


class AssistError(Exception):
    """A request that cannot be answered; `str()` is one sentence for the assistant."""


@dataclass
class Opened:
    """One open document: a file's bundle, or a folder's job document (format "job")."""

    handle: str
    source: str
    bundle: Bundle
    session: query.QuerySession | None = field(default=None, repr=False)

    def query_session(self) -> query.QuerySession:
        """The DuckDB session over this file's tables, made on the first query and kept."""
        if self.session is None:
            self.session = query.QuerySession(self.bundle)
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class Handles:
    """The open documents by handle; thread-safe (the SDK runs each tool call on a thread)."""

    def __init__(self) -> None:
        self._open: dict[str, Opened] = {}
        self._count = 0
        self._lock = threading.Lock()

    def open(self, source: str) -> Opened:
        """Open `source` (a file, or a folder of rank traces; a path or a URL such as
        `s3://bucket/run`, read through the store's remote mirror) under a new handle."""
        with self._lock:
            if len(self._open) >= MAX_OPEN:
                names = ", ".join(self._open)
                raise AssistError(f"{MAX_OPEN} documents are open ({names}): close one first")
        path = _local(source)
        if not os.path.exists(path):
            raise AssistError(f"cannot open {source}: there is no such file or folder")
        opened = _open_folder(path) if os.path.isdir(path) else _open_file(path)
        opened.source = source
        with self._lock:
            self._count += 1
            opened.handle = f"d{self._count}"
            self._open[opened.handle] = opened
        return opened

    def get(self, handle: str) -> Opened:
        with self._lock:
            opened = self._open.get(handle)
            if opened is None:
                known = ", ".join(self._open) or "none; open a file first"
                raise AssistError(f"there is no open document {handle!r} (open: {known})")
            return opened

    def close(self, handle: str) -> None:
        opened = self.get(handle)
        with self._lock:
            self._open.pop(handle, None)
        opened.close()

    def listing(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{"handle": h, "path": o.source} for h, o in self._open.items()]

    def close_all(self) -> None:
        for handle in [row["handle"] for row in self.listing()]:
            self.close(handle)


def _local(source: str) -> str:
    """The local path to read for `source`: a URL's mirror (fetched if stale), else the path."""
    if not remote.is_url(source):
        return os.path.expanduser(source)
    try:
        return str(remote.resolve(source))
    except LoadError as exc:
        raise AssistError(f"cannot open {source}: {exc}") from exc


def _open_file(path: str) -> Opened:
    try:
        opened = open_document(path, progress=compile_notice())
    except LoadError as exc:
        raise AssistError(f"cannot open {path}: {exc}") from exc
    return Opened("", path, opened.bundle)


def _open_folder(path: str) -> Opened:
    from perfview.jobs import open_job  # worker processes: only for a folder

    try:
        job = open_job([path])
    except LoadError as exc:
        raise AssistError(f"cannot open {path}: {exc}") from exc
    return Opened("", path, document(job, Path(path)))


__all__ = ["MAX_OPEN", "AssistError", "Handles", "Opened"]
