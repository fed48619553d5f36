"""Run a RunSpec's recorder child with QProcess: live output, result path, cancel.

The child is `python -m perfview.runner.record …` in the interpreter the spec names, started in a
session (and so a process group) of its own. Cancel sends SIGTERM to that whole group — the
recorder writes what it has, the script's own subprocesses stop too — and SIGKILLs the group
after a grace period, so nothing the script started outlives a Cancel. QProcess reaps the
recorder; orphaned grandchildren go to init. Nothing here blocks: no `waitFor*`, only signals.

Runs without an explicit output get a folder in the runs directory with a `run.json` record that
this runner keeps up to date (running → ok / failed / cancelled / error).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
from pathlib import Path

from PySide6.QtCore import (
    QElapsedTimer,
    QObject,
    QProcess,
    QProcessEnvironment,
    QTimer,
    Signal,
)

from perfview.runner.spec import (
    STATUS_CANCELLED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_OK,
    RunRecord,
    RunSpec,
    command_line,
    prepare_output,
)

DEFAULT_GRACE_MS = 1000


def _new_session(proc: QProcess) -> list[str]:
    """Make the child a session leader; returns a command prefix when Qt cannot (`setsid`)."""
    params_cls = getattr(QProcess, "UnixProcessParameters", None)
    flag = getattr(QProcess.UnixProcessFlag, "CreateNewSession", None) if params_cls else None
    if params_cls is None or flag is None or os.name != "posix":
        return ["setsid"] if os.name == "posix" else []
    params = params_cls()
    params.flags = flag
    proc.setUnixProcessParameters(params)
    return []


class ProcessRunner(QObject):
    """One recorder run at a time.

    Signals: `output(text)` as it arrives (stdout and stderr merged, in order),
    `finished(path, exit_code)` when the script ended with 0 and the profile exists,
    `failed(message, path_or_None)` otherwise (path set when a partial profile was written),
    `cancelled()` after `cancel()` took effect.
    """

    output = Signal(str)
    started = Signal(object)  # the RunSpec actually run (output filled in)
    finished = Signal(str, int)
    failed = Signal(str, object)
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None, grace_ms: int = DEFAULT_GRACE_MS) -> None:
        super().__init__(parent)
        self.grace_ms = grace_ms
        self.spec: RunSpec | None = None
        self.record: RunRecord | None = None
        self._proc: QProcess | None = None
        self._pgid = 0
        self._cancelling = False
        self._clock = QElapsedTimer()
        self._elapsed_ms = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(self._kill_group)

    # --- state -----------------------------------------------------------------------------
    def is_running(self) -> bool:
        return self._proc is not None

    def elapsed_s(self) -> float:
        """Seconds since start (frozen at the end of the run)."""
        ms = self._clock.elapsed() if self.is_running() else self._elapsed_ms
        return ms / 1000.0

    @property
    def pid(self) -> int:
        """The recorder's pid (also its process group id), 0 when nothing runs."""
        return self._pgid if self.is_running() else 0

    # --- control ---------------------------------------------------------------------------
    def start(self, spec: RunSpec, runs_root: Path | None = None) -> RunSpec:
        """Start recording `spec`; returns the spec with its output path decided."""
        if self._proc is not None:
            raise RuntimeError("a run is already in progress")
        spec, folder = prepare_output(spec.resolved(spec.cwd), runs_root)
        self.spec = spec
        self.record = RunRecord.start(spec, folder) if folder else None
        self._cancelling = False
        self._decoder.reset()
        proc = QProcess(self)
        argv = _new_session(proc) + spec.argv()
        proc.setProgram(argv[0])
        proc.setArguments(argv[1:])
        if spec.cwd:
            proc.setWorkingDirectory(spec.cwd)
        env = QProcessEnvironment()
        for key, value in spec.child_env().items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.readyReadStandardOutput.connect(self._read)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        self._proc = proc
        self.output.emit(f"$ {command_line(argv)}\n")
        self._clock.start()
        proc.start()
        self._pgid = int(proc.processId())
        self.started.emit(spec)
        return spec

    def cancel(self) -> None:
        """SIGTERM the run's process group now, SIGKILL it after the grace period."""
        if self._proc is None or self._cancelling:
            return
        self._cancelling = True
        self.output.emit("\nperfview: cancelling…\n")
        self._signal_group(signal.SIGTERM)
        self._kill_timer.start(self.grace_ms)

    def stop_for_quit(self, grace_ms: int = 1500) -> None:
        """End the run before the application exits: SIGTERM, wait up to `grace_ms`, SIGKILL.

        This is the one place that waits: the window is closing, so no event loop will be
        left to fire the kill timer that `cancel()` relies on.
        """
        if self._proc is None:
            return
        self._cancelling = True
        self._signal_group(signal.SIGTERM)
        if not self._proc.waitForFinished(grace_ms):
            self._kill_group()
            self._proc.waitForFinished(500)

    # --- internals -------------------------------------------------------------------------
    def _signal_group(self, sig: signal.Signals) -> None:
        if self._pgid <= 0:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._pgid, sig)  # raises when the whole group is already gone

    def _kill_group(self) -> None:
        self._signal_group(signal.SIGKILL)

    def _read(self) -> None:
        if self._proc is None:
            return
        data = bytes(self._proc.readAllStandardOutput().data())
        text = self._decoder.decode(data)
        if text:
            self.output.emit(text)

    def _written(self) -> str | None:
        path = Path(str(self.spec.output)) if self.spec and self.spec.output else None
        return str(path) if path and path.is_file() and path.stat().st_size > 0 else None

    def _end(self) -> None:
        self._elapsed_ms = self._clock.elapsed()
        self._kill_timer.stop()
        if self._proc is not None:
            self._proc.deleteLater()
        self._proc = None

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._read()
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self.output.emit(tail)
        crashed = exit_status == QProcess.ExitStatus.CrashExit
        path = self._written()
        if self._cancelling:
            self._kill_group()  # whatever the script started and left behind
            self._end()
            self._finish_record(STATUS_CANCELLED, None if crashed else exit_code)
            self.cancelled.emit()
            return
        self._end()
        if crashed:
            self._finish_record(STATUS_ERROR if path is None else STATUS_FAILED, None)
            self.failed.emit("the recorder was killed", path)
        elif exit_code == 0 and path is not None:
            self._finish_record(STATUS_OK, exit_code)
            self.finished.emit(path, exit_code)
        else:
            self._finish_record(STATUS_ERROR if path is None else STATUS_FAILED, exit_code)
            what = "partial profile written" if path else "no profile was written"
            self.failed.emit(f"script exited with code {exit_code}; {what}", path)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error != QProcess.ProcessError.FailedToStart or self._proc is None:
            return  # crashes are reported by `finished`
        message = f"could not start {self._proc.program()}: {self._proc.errorString()}"
        self._end()
        self._finish_record(STATUS_ERROR, None)
        self.failed.emit(message, None)

    def _finish_record(self, status: str, exit_code: int | None) -> None:
        if self.record is not None:
            # OSError: the runs folder vanished (deleted from the Runs dialog meanwhile).
            with contextlib.suppress(OSError):
                self.record.finish(status, exit_code)
