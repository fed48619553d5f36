"""The recorder: runs a user's script under a profiler and writes what it recorded.

`python -m perfview.runner.record --mode MODE -o OUT [opts] -- script.py args…` (the GUI runs this
in the interpreter the user picked) and `perfview record …` (in-process) both end in `execute()`.

The script runs as `__main__` through `runpy.run_path`, with its own argv, cwd and sys.path[0],
so it behaves as under `python script.py`. Whatever happens to the script (exception, sys.exit,
SIGTERM from the GUI's Cancel), the profile recorded so far is written, and the exit code is the
script's. To make that reliable SIGTERM is blocked whenever the recorder itself is working and
only delivered (as the `Terminated` exception) while the script runs.

Stdlib only at import time: torch, psutil and memory_profiler are imported by the mode functions.
"""

from __future__ import annotations

import argparse
import builtins
import importlib.util
import os
import runpy
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from perfview.core.atomic import atomic_path
from perfview.runner import alloc_modes, memory_mode, sample_mode, scalene_mode, torch_mode
from perfview.runner.spec import (
    BOOTSTRAP_ENV,
    STATUS_CANCELLED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_OK,
    RunRecord,
    RunSpec,
    ScriptResult,
    ScriptRunner,
    prepare_output,
)
from perfview.runner.spec_args import add_arguments, spec_from_args

EXIT_USAGE = 2
EXIT_TERMINATED = 128 + int(signal.SIGTERM)
EXIT_INTERRUPTED = 130
_HAS_SIGMASK = hasattr(signal, "pthread_sigmask")
# Modules each mode needs in the child's interpreter (checked before anything runs).
_REQUIRES = {
    "torch": "torch",
    "memory": "psutil",
    "memory-lines": "memory_profiler",
    "memray": "memray",
    "cuda-memory": "torch",
    "scalene": "scalene",
}
_OWN_DIR = str(Path(__file__).resolve().parent)


class Terminated(BaseException):
    """SIGTERM arrived while the script ran. BaseException so `except Exception` in the script
    does not swallow it, like KeyboardInterrupt."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


@contextmanager
def sigterm_delivered() -> Iterator[None]:
    """Let SIGTERM in (as `Terminated`) inside the block; outside it stays blocked/pending."""
    if _HAS_SIGMASK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        if _HAS_SIGMASK:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _exit_code(code: object) -> tuple[int, str]:
    """SystemExit.code → (exit status, text Python would print), as the interpreter does."""
    if code is None:
        return 0, ""
    if isinstance(code, bool | int):
        return int(code), ""
    return 1, f"{code}\n"


def _is_ours(filename: str) -> bool:
    return filename.startswith(_OWN_DIR) or "runpy" in Path(filename).name


def _format_error(exc: BaseException) -> str:
    """The script's traceback without the recorder's and runpy's frames on top."""
    tb = exc.__traceback__
    while tb is not None and _is_ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def exec_main(script: str, profiler: Any) -> None:
    """Run `script` as `__main__` with `profiler` on only while its code runs.

    This is what `python -m cProfile -o OUT script.py` does: compile the file, `exec` it in a
    fresh `__main__` namespace, so the profile's first frames are `builtins.exec` and the
    script's `<module>`, not the recorder's lambda, `run_script` and runpy. The namespace is
    installed as `sys.modules["__main__"]` for the run, as runpy does (pickle and
    multiprocessing look classes up there).
    """
    import io
    import types

    with io.open_code(script) as fh:
        code = compile(fh.read(), script, "exec")
    module = types.ModuleType("__main__")
    module.__dict__.update(
        {"__file__": script, "__builtins__": builtins, "__package__": None, "__cached__": None}
    )
    module.__dict__["__spec__"] = None
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        profiler.enable()
        try:
            exec(code, module.__dict__)  # the user's own script: running it is the point
        finally:
            profiler.disable()
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def run_script(script: str, args: Sequence[str], profiler: Any = None) -> ScriptResult:
    """Run `script` as `__main__` (like `python script.py args…`) and report how it ended.

    With a `profiler` (cProfile), it is enabled around the script's code only (`exec_main`).
    """
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *args]
    folder = str(Path(script).resolve().parent)
    if sys.path and not sys.flags.safe_path:
        sys.path[0] = folder
    else:
        sys.path.insert(0, folder)
    try:
        with sigterm_delivered():
            if profiler is None:
                runpy.run_path(script, run_name="__main__")
            else:
                exec_main(script, profiler)
        return ScriptResult(0)
    except SystemExit as exc:
        code, text = _exit_code(exc.code)
        return ScriptResult(code, text)
    except Terminated:
        return ScriptResult(EXIT_TERMINATED)
    except KeyboardInterrupt as exc:
        return ScriptResult(EXIT_INTERRUPTED, _format_error(exc))
    except BaseException as exc:
        return ScriptResult(1, _format_error(exc))
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def record_cprofile(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """cProfile over the script's own code, as `python -m cProfile -o` records it.

    `run` (the plain runner) is not used: the profiler must start below the recorder's frames
    (see `exec_main`). The stats are dumped even when the script fails.
    """
    import cProfile

    prof = cProfile.Profile()
    try:
        return run_script(spec.script, spec.args, profiler=prof)
    finally:
        with atomic_path(str(spec.output)) as tmp:  # never a half-written .prof
            prof.dump_stats(str(tmp))


_MODES: dict[str, Callable[[RunSpec, ScriptRunner], ScriptResult]] = {
    "cprofile": record_cprofile,
    "torch": torch_mode.record,
    "memory": memory_mode.record_samples,
    "memory-lines": memory_mode.record_lines,
    "memray": alloc_modes.record_memray,
    "cuda-memory": alloc_modes.record_cuda_memory,
    "sample": sample_mode.record,
    "scalene": scalene_mode.record,
}


def missing_module(mode: str) -> str | None:
    """The module `mode` needs that this interpreter cannot import, or None."""
    name = _REQUIRES.get(mode)
    if name is None:
        return None
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else name


def _written(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def execute(spec: RunSpec, *, err: TextIO | None = None) -> int:
    """Record `spec` (resolved, absolute paths) in this process. Returns the script's exit code."""
    err = err or sys.stderr
    if spec.options.pid is None and not Path(spec.script).is_file():
        print(f"perfview: script not found: {spec.script}", file=err)
        return EXIT_USAGE
    if spec.cwd and not Path(spec.cwd).is_dir():
        print(f"perfview: working directory not found: {spec.cwd}", file=err)
        return EXIT_USAGE
    missing = missing_module(spec.mode)
    if spec.mode == "sample" and sample_mode.binary() is None:
        print(
            "perfview: mode 'sample' needs py-spy, which is not installed for "
            f"{sys.executable}; pip install py-spy (or perfview[sampling])",
            file=err,
        )
        return EXIT_USAGE
    if missing:
        print(
            f"perfview: mode '{spec.mode}' needs the '{missing}' package, which "
            f"{sys.executable} cannot import; install it there or pick another interpreter",
            file=err,
        )
        return EXIT_USAGE
    refusal = alloc_modes.cuda_refusal() if spec.mode == "cuda-memory" else None
    if refusal:
        print(refusal, file=err)
        return EXIT_USAGE
    spec, folder = prepare_output(spec)
    output = Path(str(spec.output))
    output.parent.mkdir(parents=True, exist_ok=True)
    record = RunRecord.start(spec, folder) if folder else None
    if folder:
        print(f"perfview: recording to {output}", file=err, flush=True)
    result = _run_mode(spec, err)
    if result.code == EXIT_TERMINATED:
        _reap_children()
    err.flush()
    if result.report:
        print(result.report, end="", file=err)
    written = _written(output)
    if result.code == 0 and written:
        print(f"perfview: profile written to {output}", file=err)
        status = STATUS_OK
    elif written:
        print(
            f"perfview: script exited with code {result.code}; partial profile written to {output}",
            file=err,
        )
        status = STATUS_CANCELLED if result.code == EXIT_TERMINATED else STATUS_FAILED
    else:
        if spec.options.pid is None:  # an attach that failed has said why in its report
            print(
                f"perfview: script exited with code {result.code}; no profile was written",
                file=err,
            )
        status = STATUS_ERROR
    if record is not None:
        record.finish(status, result.code)
    return result.code


def _run_mode(spec: RunSpec, err: TextIO) -> ScriptResult:
    """Run the mode with SIGTERM held back except while the script itself runs."""
    old_cwd = os.getcwd()
    old_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    if _HAS_SIGMASK:
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    helpers = _install_helpers()
    try:
        if spec.cwd:
            os.chdir(spec.cwd)
        mode = _MODES[spec.mode]
        runner = lambda: run_script(spec.script, spec.args)  # noqa: E731
        if spec.mode in ("memory", "sample", "scalene"):
            # The sampler is "the script running": it must stop (and stop its child) on SIGTERM.
            with sigterm_delivered():
                result = mode(spec, runner)
        else:
            result = mode(spec, runner)
    except Terminated:
        result = ScriptResult(EXIT_TERMINATED)
    except Exception as exc:  # a recorder failure (profiler refused an option, disk full, …)
        result = ScriptResult(1, f"perfview: recording failed: {type(exc).__name__}: {exc}\n")
    finally:
        _remove_helpers(helpers)
        os.chdir(old_cwd)
        if _HAS_SIGMASK:
            if signal.SIGTERM in signal.sigpending():
                signal.signal(signal.SIGTERM, signal.SIG_IGN)  # discard: the run already ended
                result = ScriptResult(EXIT_TERMINATED)
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        signal.signal(signal.SIGTERM, old_handler)
    return result


def _reap_children(timeout: float = 0.5) -> None:
    """After a SIGTERM to our process group, collect the script's children as they die.

    Otherwise they would linger as zombies of ours and be handed to init, which may be slow
    to reap them. Bounded: children that ignore SIGTERM get the GUI's SIGKILL later.
    """
    if not hasattr(os, "WNOHANG"):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no children left
        if pid == 0:
            time.sleep(0.01)


def _install_helpers() -> dict[str, object]:
    """Builtins scripts may call under any mode: `perfview_step()` is a no-op unless torch mode
    with a schedule replaces it."""
    names = ("perfview_step", "profile")  # memory-lines mode installs `profile`
    saved = {name: getattr(builtins, name) for name in names if hasattr(builtins, name)}
    builtins.perfview_step = lambda: None  # type: ignore[attr-defined]
    return saved


def _remove_helpers(saved: dict[str, object]) -> None:
    for name in ("perfview_step", "profile"):
        if hasattr(builtins, name) and name not in saved:
            delattr(builtins, name)
    for name, value in saved.items():
        setattr(builtins, name, value)


def _strip_bootstrap() -> None:
    """Remove the PYTHONPATH entry the GUI added only so this module could be imported."""
    root = os.environ.pop(BOOTSTRAP_ENV, None)
    if not root:
        return
    keep0 = sys.path[:1]  # the `-m` cwd slot; run_script replaces it with the script's folder
    sys.path[1:] = [p for p in sys.path[1:] if os.path.abspath(p or ".") != root]
    sys.path[:1] = keep0
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        os.environ.pop("PYTHONPATH", None)


def build_parser(prog: str = "python -m perfview.runner.record") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Run a Python script under a profiler and write its profile."
    )
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _strip_bootstrap()
    ns = build_parser().parse_args(argv)
    return execute(spec_from_args(ns))


if __name__ == "__main__":
    sys.exit(main())
