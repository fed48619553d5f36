"""Watch an open log directory while the training writes to it: new spans appear when whole.

`tensorboard_trace_handler` writes each schedule cycle's file while the run goes on. A
`QFileSystemWatcher` on the log directory's folders says when a file appears (no polling
loop); each file not yet whole (`perfview.jobs.logdir.is_whole`: its JSON does not close, its
gzip stream does not end) is watched itself and read only once it is. The folder is re-read in
a worker (`qt.tasks.Task`), parsing only the new files (`open_logdir(known=…)`), and
`updated(LogDir, new_files)` hands the result to the GUI thread. Bursts of changes (a file
written in many pieces) are gathered by a short single-shot timer started by the first of
them (never pushed back, so changes that never pause still get read), one re-read at a time.

A log directory opened from a URL is the mirror of a remote folder (`remote.mirrored_from`):
a `remote_follow.Follower` thread lists the remote folder every `follow_s` seconds (5, or
`PERFVIEW_REMOTE_FOLLOW_S`) and fetches
the files that stopped changing into the mirror, then says so (`fetched`, a queued signal);
the re-read is the same.
"""

from __future__ import annotations

import weakref
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from perfview.core.model.logdir import LogDir
from perfview.core.model.progress import Progress
from perfview.qt.tasks import Task
from perfview.store import remote
from perfview.store.remote_follow import Follower

GATHER_MS = 250  # changes closer together than this are read together


class LogDirWatch(QObject):
    """`updated(LogDir, list[str])`: the folder re-read, and the files that are new in it;
    `read(LogDir)`: after every re-read, new files or not."""

    updated = Signal(object, object)
    read = Signal(object)
    fetched = Signal(object)  # from the follower's thread: files fetched into the mirror

    def __init__(
        self, logdir: LogDir, parent: QObject | None = None, follow_s: float | None = None
    ) -> None:
        super().__init__(parent)
        self.logdir = logdir
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._changed)
        self.watcher.fileChanged.connect(self._changed)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(GATHER_MS)
        self.timer.timeout.connect(self.reread)
        self.task: Task | None = None
        self._again = False
        self._watch(logdir)
        self.follower: Follower | None = None
        url = remote.mirrored_from(logdir.root)
        if url is not None:  # a remote folder: listed on a thread of its own
            self.fetched.connect(self._changed)
            me = weakref.ref(self)  # the thread must not keep a closed tab's watch alive

            def fetched(files: list[Path]) -> None:
                watch = me()
                if watch is not None:
                    watch.fetched.emit(files)

            self.follower = Follower(url, fetched, follow_s)
            self.destroyed.connect(self.follower.stop)

    def _watch(self, logdir: LogDir) -> None:
        folders = {str(logdir.root), *(str(run.path) for run in logdir.runs)}
        folders |= {str(p) for p in Path(logdir.root).rglob("*") if p.is_dir()}
        wanted = folders | {str(p) for p in logdir.pending}
        stale = set(self.watcher.files()) - wanted
        if stale:
            self.watcher.removePaths(sorted(stale))
        new = sorted(wanted - set(self.watcher.directories()) - set(self.watcher.files()))
        if new:
            self.watcher.addPaths(new)

    def _changed(self, _what: object) -> None:
        if not self.timer.isActive():  # not restarted: a file written on and on is read too
            self.timer.start()

    def reread(self) -> None:
        """Read the folder again in a worker (one re-read at a time; changes meanwhile queue
        one more)."""
        if self.task is not None:
            self._again = True
            return
        from perfview.jobs.logdir import open_logdir

        root, known = self.logdir.root, dict(self.logdir.results)

        def work(_progress: Progress) -> LogDir:
            return open_logdir(root, live=True, known=known)

        self.task = Task(work, name=f"re-reading {root}")
        self.task.finished.connect(self._read)
        self.task.done.connect(self._done)
        self.task.start()

    def _read(self, logdir: LogDir) -> None:
        before = set(self.logdir.results)
        new = [str(p) for p in logdir.results if p not in before]
        self.logdir = logdir
        self._watch(logdir)
        if new:
            self.updated.emit(logdir, new)
        self.read.emit(logdir)

    def _done(self) -> None:
        self.task = None
        if self._again:
            self._again = False
            self.timer.start()


__all__ = ["GATHER_MS", "LogDirWatch"]
