"""The `sample` mode of the recorder: py-spy, writing speedscope JSON.

py-spy is a sampling profiler in a separate (Rust) process: it reads the target's memory
through ptrace/process_vm_readv, so the script runs at full speed and native code, other
threads and child processes can be seen. Two ways to run it:

- `perfview record --mode sample -- script.py args`: py-spy starts the script (as its own
  child, which ptrace rules allow without privileges). py-spy always exits 0, so the script
  runs under a two-line shim that saves its exit code; the shim's frames (`<string>`, runpy)
  are removed from the profile afterwards, so stacks start at the script's `<module>`.
  py-spy sometimes exits 1 with "No child process" after a complete recording (a race in
  its own wait, benfred/py-spy#759): with the shim's exit code and the profile there, that
  is taken as the recording it is (`_reaped_race`).
- `perfview record --mode sample --pid PID [--duration S]`: attach to a running process,
  which needs ptrace permission; a refusal is explained in one sentence.

Stdlib only: py-spy is a binary (the `py-spy` wheel puts it next to the interpreter).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from perfview.core.atomic import atomic_path, write_text
from perfview.runner.spec import RunSpec, ScriptResult, ScriptRunner

STATUS_ENV = "PERFVIEW_SAMPLE_STATUS"
# Runs the script as __main__ and leaves its exit code where the recorder reads it.
SHIM = (
    "import os,runpy,sys\n"
    "sys.argv=sys.argv[1:];sys.path[0]=os.path.dirname(os.path.abspath(sys.argv[0]))\n"
    "c=0\n"
    "try:runpy.run_path(sys.argv[0],run_name='__main__')\n"
    "except SystemExit as e:c=e.code if isinstance(e.code,int) else (0 if e.code is None else 1)\n"
    "except BaseException:import traceback;traceback.print_exc();c=1\n"
    "open(os.environ['" + STATUS_ENV + "'],'w').write(str(c));sys.exit(c)\n"
)
ECHILD_RACE = "no child process (os error 10)"  # see `_reaped_race`
PTRACE_MESSAGE = (
    "py-spy was not allowed to read process {pid}: attaching needs ptrace permission "
    "(run as the same user with /proc/sys/kernel/yama/ptrace_scope set to 0, as root, "
    "or in a container started with --cap-add SYS_PTRACE)"
)


def binary() -> str | None:
    """The py-spy executable: next to this interpreter (the wheel's place), else on PATH."""
    here = Path(sysconfig.get_path("scripts")) / ("py-spy.exe" if os.name == "nt" else "py-spy")
    if here.is_file():
        return str(here)
    return shutil.which("py-spy")


def command(spec: RunSpec, exe: str, output: str) -> list[str]:
    """The py-spy command line for `spec`."""
    opts = spec.options
    cmd = [exe, "record", "--format", "speedscope", "-o", output, "--rate", str(opts.rate)]
    cmd += ["--function"]  # one frame per function (its first line), as the Functions table is
    cmd += ["--native"] if opts.native else []
    cmd += ["--subprocesses"] if opts.subprocesses else []
    cmd += ["--gil"] if opts.gil else []
    if opts.pid is not None:
        cmd += ["--pid", str(opts.pid)]
        if opts.duration:
            cmd += ["--duration", str(max(1, round(opts.duration)))]
        return cmd
    return [*cmd, "--", sys.executable, "-c", SHIM, spec.script, *spec.args]


def explain(stderr: str, pid: int | None) -> str:
    """One sentence for py-spy's failure (permission problems spelled out)."""
    text = stderr.lower()
    if any(w in text for w in ("permission denied", "operation not permitted", "ptrace", "eperm")):
        return PTRACE_MESSAGE.format(pid=pid if pid is not None else "of the script")
    if pid is not None and "failed to get process executable" in text:
        return f"there is no process {pid}"
    if pid is not None and "failed to find python version" in text:
        return f"process {pid} is not a Python program py-spy can read"
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("Error:")]
    first = (errors or lines or ["it failed without a message"])[0]
    return f"py-spy could not record: {first.removeprefix('Error: ')}"


def record(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """Run py-spy over the script (or the --pid process) and write its speedscope file."""
    exe = binary()
    if exe is None:
        return ScriptResult(2, "perfview: mode 'sample' needs py-spy (pip install py-spy)\n")
    fd, status = tempfile.mkstemp(prefix="perfview-status-")
    os.close(fd)
    env = dict(os.environ, **{STATUS_ENV: status, "RUST_BACKTRACE": "0"})
    try:
        with atomic_path(str(spec.output), keep_partial=True) as tmp:
            proc = subprocess.Popen(
                command(spec, exe, str(tmp)),
                env=env,
                stdout=subprocess.DEVNULL,  # py-spy's "py-spy> …" chatter
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                code, stderr = _wait(proc)
            finally:  # a cancelled run keeps its partial profile, cleaned the same way
                if spec.options.pid is None:
                    _strip_shim(tmp, spec.script)
            if spec.options.pid is None and _reaped_race(code, stderr, tmp, Path(status)):
                code = 0
                stderr = "".join(
                    ln for ln in stderr.splitlines(keepends=True) if ECHILD_RACE not in ln.lower()
                )
        return _result(spec, code, stderr, Path(status))
    finally:
        Path(status).unlink(missing_ok=True)


def _reaped_race(code: int, stderr: str, output: Path, status: Path) -> bool:
    """True for py-spy's known race (benfred/py-spy#759): its sampler thread reaps the script
    that ended, its main thread's wait then finds no child, and it exits 1 with "No child
    process (os error 10)" after writing the whole profile. The script did end (the shim
    wrote its exit code) and the profile is there: that is a recording, not a failure."""
    if code == 0 or ECHILD_RACE not in stderr.lower():
        return False
    ended = status.is_file() and status.read_text().strip() != ""
    return ended and output.is_file() and output.stat().st_size > 0


def _wait(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for py-spy; on Cancel (Terminated) ask it to stop and write what it has."""
    try:
        _out, err = proc.communicate()
        return proc.returncode, err or ""
    except BaseException:
        proc.send_signal(signal.SIGINT)  # py-spy writes the samples so far on Ctrl-C
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise


def _result(spec: RunSpec, code: int, stderr: str, status: Path) -> ScriptResult:
    pid = spec.options.pid
    passed = [ln for ln in stderr.splitlines() if not ln.startswith("py-spy>") and ln.strip()]
    if code != 0:
        return ScriptResult(2, f"perfview: {explain(stderr, pid)}\n")
    report = "\n".join(passed) + "\n" if passed else ""
    if pid is not None:
        return ScriptResult(0, report)
    text = status.read_text().strip() if status.is_file() else ""
    return ScriptResult(int(text) if text.lstrip("-").isdigit() else 0, report)


def _is_shim(frame: Any) -> bool:
    file = str(frame.get("file", "")) if isinstance(frame, dict) else ""
    return file == "<string>" or file.endswith(("runpy.py", "runpy>"))


def _strip_shim(path: Path, script: str) -> None:
    """Drop the shim's frames (`<module> (<string>)`, runpy's) from every sample.

    They sit above the script's first frame, below any process or native frames py-spy
    adds with --subprocesses/--native; samples taken before the script started (the shim's
    own imports) lose them at the root.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        frames = doc["shared"]["frames"]
        shim = {i for i, f in enumerate(frames) if _is_shim(f)}
        ours = {i for i, f in enumerate(frames) if isinstance(f, dict) and f.get("file") == script}
        profiles = doc["profiles"]
    except (ValueError, KeyError, TypeError):
        return  # not what py-spy usually writes: keep it as it is
    if not shim:
        return
    cleaned: dict[tuple[Any, ...], list[Any]] = {}
    for prof in profiles:
        samples = prof.get("samples") if isinstance(prof, dict) else None
        if not isinstance(samples, list):
            continue
        for i, stack in enumerate(samples):
            key = tuple(stack)
            if key not in cleaned:
                cleaned[key] = _without_shim(stack, shim, ours)
            samples[i] = cleaned[key]
    write_text(path, json.dumps(doc, separators=(",", ":")))


def _without_shim(stack: list[Any], shim: set[int], ours: set[int]) -> list[Any]:
    first = next((k for k, f in enumerate(stack) if f in ours), None)
    if first is None:  # before the script ran: the shim is at the root (after native frames)
        k = 0
        while k < len(stack) and stack[k] not in shim:
            k += 1
        if k == len(stack):
            return stack
        end = k
        while end < len(stack) and stack[end] in shim:
            end += 1
        return stack[:k] + stack[end:]
    return [f for f in stack[:first] if f not in shim] + stack[first:]
