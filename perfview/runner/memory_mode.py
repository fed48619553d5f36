"""The two memory modes of the recorder.

`memory` samples like `mprof run -C -M`: the script runs as a child `python script.py args…`
(its own process, so sampling never waits on the script's GIL) and this process writes a `.dat`
with mprof's line format — `CMDLINE`, then `MEM <MiB> <unix s>` every interval (child processes
summed in) and `CHLD <index> <MiB> <unix s>` per descendant process. Lines are flushed as they
come, so a killed run still leaves a loadable file.

`memory-lines` is memory_profiler's line-by-line report for `@profile` functions and for the
functions named with `--function`. Instead of memory_profiler's per-call wrappers (which print a
report after every call) one LineProfiler collects everything and one report is written at the
end. A global trace function hands only the frames of profiled code to memory_profiler's line
tracer, so the rest of the program runs without line tracing.
"""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import IO, Any

from perfview.core.atomic import atomic_write
from perfview.runner.spec import RunSpec, ScriptResult, ScriptRunner

_MIB = float(1 << 20)


def _exit_status(returncode: int) -> int:
    """Popen's negative 'killed by signal N' → the shell's 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _write_sample(root: Any, fh: IO[str], index: dict[int, int], children: bool) -> None:
    """One MEM line (plus CHLD lines) for `root` and its descendants, as mprof -C -M writes."""
    import psutil

    now = time.time()
    try:
        rss = float(root.memory_info().rss)
        kids = root.children(recursive=True)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return  # the script just ended (or became a zombie): nothing left to sample
    lines = []
    for kid in kids:
        try:
            kid_rss = float(kid.memory_info().rss)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if children:
            rss += kid_rss
        n = index.setdefault(kid.pid, len(index))
        lines.append(f"CHLD {n} {kid_rss / _MIB:.6f} {now:.4f}\n")
    fh.write(f"MEM {rss / _MIB:.6f} {now:.4f}\n")
    fh.writelines(lines)


def _sample_until_exit(proc: subprocess.Popen[bytes], fh: IO[str], spec: RunSpec) -> int:
    import psutil

    interval = max(float(spec.options.interval), 0.01)
    try:
        root = psutil.Process(proc.pid)
    except psutil.NoSuchProcess:
        return _exit_status(proc.wait())
    index: dict[int, int] = {}
    deadline = time.monotonic()
    count = 0
    while True:
        _write_sample(root, fh, index, spec.options.include_children)
        count += 1
        if count % 10 == 0:
            fh.flush()  # about once a second: what a kill leaves behind is at most 1 s short
        deadline += interval
        try:
            # Waiting on the child doubles as the sampling sleep and returns the moment it ends.
            return _exit_status(proc.wait(timeout=max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            continue


def _stop_child(proc: subprocess.Popen[bytes], grace: float) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def record_samples(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """mprof-style sampling of `python script.py args…`; `run` is unused (separate process)."""
    cmd = [sys.executable, spec.script, *spec.args]
    # The one output not written through a temp file + rename (perfview.core.atomic): the .dat
    # is an append-only log, every prefix of which loads (the mprof loader skips a cut last
    # line), and streaming it is what keeps the samples when the GUI has to SIGKILL a recorder
    # that ignored SIGTERM. A rename at the end would lose them all in exactly that case.
    with open(str(spec.output), "w", encoding="utf-8") as fh:
        fh.write("CMDLINE " + " ".join(cmd) + "\n")  # mprof writes the plain joined argv
        fh.flush()
        proc = subprocess.Popen(cmd, cwd=os.getcwd())
        try:
            return ScriptResult(_sample_until_exit(proc, fh, spec))
        except KeyboardInterrupt:
            # Ctrl-C in a terminal reached the script too; give it time to finish its own way.
            _stop_child(proc, grace=5.0)
            return ScriptResult(_exit_status(proc.returncode))
        except BaseException:
            _stop_child(proc, grace=1.0)
            raise


class _LineTracer:
    """Routes the frames of profiled code to memory_profiler's line tracer.

    Lookups use `id(code)`: hashing a code object rehashes its bytecode and constants on every
    call, far too slow for a hook that sees every Python call. Codes are kept referenced so ids
    stay unique.
    """

    def __init__(self, prof: Any, functions: tuple[str, ...], folder: str) -> None:
        self.prof = prof
        self.names = set(functions)
        self.folder = folder.rstrip(os.sep) + os.sep
        self.traced: dict[int, CodeType] = {}
        self.ignored: dict[int, CodeType] = {}
        prof._original_trace_function = None  # normally set by prof.enable(), which we bypass

    def add(self, code: CodeType) -> None:
        self.prof.code_map.add(code)
        self.traced.update((id(c), c) for c in self.prof.code_map)

    def decorator(self, func: Any = None, *args: Any, **kwargs: Any) -> Any:
        """`@profile` / `@profile(precision=…)`: register the function; return it unwrapped."""
        if func is None or not callable(func):
            return self.decorator
        code = getattr(func, "__code__", None)
        if isinstance(code, CodeType):
            self.add(code)
        return func

    def _wanted(self, code: CodeType) -> bool:
        if not self.names or not code.co_filename.startswith(self.folder):
            return False
        return code.co_qualname in self.names or code.co_name in self.names

    def global_trace(self, frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        key = id(frame.f_code)
        if key not in self.traced:
            if key in self.ignored:
                return None
            if not self._wanted(frame.f_code):
                self.ignored[key] = frame.f_code
                return None
            self.add(frame.f_code)
            if key not in self.traced:  # memory_profiler refused it (no source file)
                self.ignored[key] = frame.f_code
                return None
        return self.prof.trace_memory_usage(frame, event, arg)  # type: ignore[no-any-return]


def record_lines(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """memory_profiler's line-by-line report of `@profile` and `--function` functions."""
    import memory_profiler as mp

    prof = mp.LineProfiler(backend="psutil")
    tracer = _LineTracer(prof, spec.options.functions, str(Path(spec.script).resolve().parent))
    saved_profile = mp.profile
    # Scripts use either the builtin `profile` or `from memory_profiler import profile`.
    builtins.profile = tracer.decorator  # type: ignore[attr-defined]
    mp.profile = tracer.decorator
    old_trace = sys.gettrace()
    sys.settrace(tracer.global_trace)
    try:
        return run()
    finally:
        sys.settrace(old_trace)
        mp.profile = saved_profile
        with atomic_write(str(spec.output), "w", encoding="utf-8") as fh:
            mp.show_results(prof, stream=fh, precision=spec.options.precision)
        if not any(True for _ in prof.code_map.items()):
            print(
                "perfview: no profiled function ran; decorate functions with @profile or "
                "name them with --function NAME",
                file=sys.stderr,
            )
