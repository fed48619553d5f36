"""The `scalene` mode of the recorder: Scalene's per-line CPU, GPU and memory profile as JSON.

Scalene must start the program itself (it preloads its allocator shim into the process and
installs its signal handlers before the script's first line), so the recorder runs it as a
child: `python -m scalene run -o OUT script.py --- args` (Scalene 2.x), or the 1.x command line
`python -m scalene --cli --json --outfile OUT script.py --- args`. The child's exit code is
the script's. Scalene is not a dependency: without it the mode says in one sentence how to get
it (`pip install scalene`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import signal
import subprocess
import sys

from perfview.core.atomic import atomic_path
from perfview.runner.spec import RunSpec, ScriptResult, ScriptRunner

INSTALL = "pip install scalene"


def version() -> tuple[int, ...] | None:
    """Scalene's version as numbers, or None when this interpreter has no Scalene."""
    if importlib.util.find_spec("scalene") is None:
        return None
    try:
        text = importlib.metadata.version("scalene")
    except importlib.metadata.PackageNotFoundError:
        return None
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


def command(spec: RunSpec, output: str, release: tuple[int, ...]) -> list[str]:
    """The Scalene command line for `spec`: its 2.x `run` subcommand, else 1.x's flags."""
    head = [sys.executable, "-m", "scalene"]
    if release >= (2,):
        head += ["run", "-o", output]
    else:
        head += ["--cli", "--json", "--outfile", output]
    tail = ["---", *spec.args] if spec.args else []
    return [*head, spec.script, *tail]


def record(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """Run the script under Scalene and keep its JSON profile at the spec's output."""
    release = version()
    if release is None:
        return ScriptResult(2, f"perfview: mode 'scalene' needs Scalene ({INSTALL})\n")
    with atomic_path(str(spec.output), keep_partial=True) as tmp:
        proc = subprocess.Popen(
            command(spec, str(tmp), release),
            stdout=None,  # the script's own output goes where the recorder's goes
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _out, err = proc.communicate()
        except BaseException:  # Cancel: Scalene writes its profile on SIGINT
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise
    passed = [ln for ln in (err or "").splitlines() if ln.strip() and "USDT:" not in ln]
    report = "\n".join(passed) + "\n" if passed and proc.returncode else ""
    return ScriptResult(proc.returncode, report)


__all__ = ["INSTALL", "command", "record", "version"]
