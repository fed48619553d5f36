"""View ▸ Open in snakeviz: snakeviz's server for the current pstats document, in a QProcess.

The process starts in the background (the GUI never waits on it), `url_ready` fires with the
page's address once snakeviz prints it, and the window opens the browser there. `stop()` ends
the server; the window calls it when the document's tab closes and at exit.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QProcess, Signal

from perfview.runner import snakeviz


class SnakevizServer(QObject):
    """One snakeviz server for one profile. Signals: `url_ready(url)`, `failed(message)`."""

    url_ready = Signal(str)
    failed = Signal(str)

    def __init__(self, profile: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.profile = Path(profile)
        self.url = ""
        self._buffer = ""
        self.process = QProcess(self)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        self.process.readyReadStandardOutput.connect(self._read)
        self.process.errorOccurred.connect(lambda _e: self._fail(self.process.errorString()))
        self.process.finished.connect(self._finished)

    def start(self) -> None:
        program, *args = snakeviz.server_command(self.profile)
        self.process.start(program, args)

    def stop(self) -> None:
        if self.process.state() != QProcess.ProcessState.NotRunning:
            self.process.kill()
            self.process.waitForFinished(2000)

    def _read(self) -> None:
        self._buffer += bytes(self.process.readAllStandardOutput().data()).decode(errors="replace")
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            url = snakeviz.url_in(line)
            if url and not self.url:
                self.url = url
                self.url_ready.emit(url)

    def _finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        if not self.url:
            self._fail(f"snakeviz stopped before serving the profile (exit {code})")

    def _fail(self, message: str) -> None:
        if not self.url:
            self.failed.emit(message)


__all__ = ["SnakevizServer"]
