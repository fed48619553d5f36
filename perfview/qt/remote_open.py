"""Opening a URL in the window (`perfview s3://…`, the Open dialog, File ▸ Open Location…).

The URL's folder is fetched into the cache by `perfview.store.remote` in a worker
(`fetch_task`, with progress and Cancel in the status bar), and a file's download started
there (the load parses it while it arrives, `perfview.streamed`), then opened like the local
path it became: a file in a document tab, a folder in the run browser or a Job tab. The GUI thread
never waits on the network.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget

from perfview.core.model.progress import Progress
from perfview.qt.tasks import Task
from perfview.store import remote

# What the Open dialog offers beside local files (a platform dialog's location field).
SCHEMES = ["file", "s3", "gs", "gcs", "az", "abfs", "hdfs", "http", "https"]


def fetch_task(url: str) -> Task:
    """A Task (not started) whose result is the local path of `url` (its cached mirror)."""

    def work(progress: Progress) -> Path:
        progress(0.0, f"fetching {url}")

        def files(done: int, total: int) -> None:
            progress(done / max(1, total), f"{done}/{total} files fetched")

        local = remote.resolve(url, files, stream=True)  # a file: parsed as it arrives
        progress(1.0, "fetched")
        return local

    return Task(work, name=url)


def chosen(urls: list[QUrl]) -> list[str]:
    """The Open dialog's choices as perfview paths: a local file's path, any other URL as
    its text (`s3://bucket/log`)."""
    return [u.toLocalFile() if u.isLocalFile() else u.toString() for u in urls]


def ask_location(parent: QWidget) -> str | None:
    """File ▸ Open Location…: a path or URL typed by the user, or None."""
    text, ok = QInputDialog.getText(
        parent,
        "Open location",
        "A file or folder path, or a URL (s3://, gs://, az://, hdfs://, http(s)://):",
        QLineEdit.EchoMode.Normal,
    )
    text = text.strip()
    return text if ok and text else None


__all__ = ["SCHEMES", "ask_location", "chosen", "fetch_task"]
