"""torch mode: run the script under `torch.profiler` and export a Chrome trace (.json or .json.gz).

Runs only inside the recorder child; torch is imported inside `record()` so perfview itself
never pays for (or needs) it. CPU activity is always on, CUDA whenever `torch.cuda.is_available()`.

With a schedule (wait, warmup, active, repeat) something must call `prof.step()`: the script via
the injected builtin `perfview_step()`, a global optimizer step hook (`--step-on-optimizer`), or a
timer (`--step-every`). The timer uses SIGALRM, whose handler runs in the main thread between
bytecodes — the only thread torch.profiler's step bookkeeping is meant for.
Each completed cycle is exported from `on_trace_ready` (the qt-setup notes: exporting after a
handler already saved raises); the first goes to OUT, later ones to OUT with `-2`, `-3`, … .
"""

from __future__ import annotations

import builtins
import importlib
import signal
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfview.core.atomic import atomic_path
from perfview.runner.spec import RunSpec, ScriptResult, ScriptRunner

_TRACE_SUFFIXES = (".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json")


def numbered(path: Path, n: int) -> Path:
    """`run.pt.trace.json.gz`, 2 → `run-2.pt.trace.json.gz` (keeps the suffix loaders expect)."""
    if n <= 1:
        return path
    name = path.name
    for suffix in _TRACE_SUFFIXES:
        if name.endswith(suffix):
            return path.with_name(f"{name[: -len(suffix)]}-{n}{suffix}")
    return path.with_name(f"{name}-{n}")


class _Stepper:
    """Counts steps and exports each finished cycle; shared by every stepping source."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self.steps = 0
        self.written: list[Path] = []
        self.prof: Any = None
        self._busy = False

    def step(self) -> None:
        # Re-entrancy guard: a SIGALRM step may land while an export (inside step) is running.
        if self.prof is None or self._busy:
            return
        self._busy = True
        try:
            self.steps += 1
            self.prof.step()
        finally:
            self._busy = False

    def on_trace_ready(self, prof: Any) -> None:
        path = numbered(self.output, len(self.written) + 1)
        with atomic_path(path) as tmp:  # the temp name keeps the suffix: .gz stays gzip
            prof.export_chrome_trace(str(tmp))
        self.written.append(path)


def _torch(module: str = "torch") -> Any:
    """Import torch (or one of its modules) at call time, in the profiled child only.

    perfview itself never imports torch (1+ s and gigabytes it does not need); going through
    importlib keeps every torch import visibly on this child-only path.
    """
    return importlib.import_module(module)


def _activities(torch: Any) -> list[Any]:
    activity = _torch("torch.profiler").ProfilerActivity
    acts = [activity.CPU]
    if torch.cuda.is_available():
        acts.append(activity.CUDA)
    return acts


def _start_timer(seconds: float, step: Callable[[], None]) -> Callable[[], None]:
    """Step every `seconds` via SIGALRM; returns the function that stops the timer.

    The timer is one-shot and re-armed after each step returns: a step that starts or exports
    a trace can take longer than the period, and a periodic timer would pile up behind it.
    """
    active = True

    def on_alarm(signum: int, frame: Any) -> None:
        step()
        if active:
            signal.setitimer(signal.ITIMER_REAL, seconds)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def stop() -> None:
        nonlocal active
        active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

    return stop


def _optimizer_hook(step: Callable[[], None]) -> Callable[[], None]:
    optimizer = _torch("torch.optim.optimizer")
    handle = optimizer.register_optimizer_step_post_hook(lambda opt, args, kwargs: step())
    return handle.remove  # type: ignore[no-any-return]


def record(spec: RunSpec, run: ScriptRunner) -> ScriptResult:
    """Profile the script with torch.profiler; always exports what was recorded."""
    torch = _torch()
    profiler = _torch("torch.profiler")
    profile, schedule = profiler.profile, profiler.schedule

    # Each finished cycle is exported by on_trace_ready, so torch's hint that events are cleared
    # between cycles is noise here.
    warnings.filterwarnings("ignore", message="Profiler clears events at the end of each cycle")

    opts = spec.options
    output = Path(str(spec.output))
    stepper = _Stepper(output)
    sched = None
    if opts.schedule:
        wait, warmup, active, *rest = opts.schedule
        sched = schedule(wait=wait, warmup=warmup, active=active, repeat=rest[0] if rest else 1)
    prof = profile(
        activities=_activities(torch),
        record_shapes=opts.record_shapes,
        profile_memory=opts.profile_memory,
        with_stack=opts.with_stack,
        schedule=sched,
        on_trace_ready=stepper.on_trace_ready if sched else None,
    )
    stops: list[Callable[[], None]] = []
    prof.start()
    stepper.prof = prof
    if sched is not None:
        builtins.perfview_step = stepper.step  # type: ignore[attr-defined]
        if opts.step_every:
            stops.append(_start_timer(opts.step_every, stepper.step))
        if opts.step_on_optimizer:
            stops.append(_optimizer_hook(stepper.step))
    try:
        return run()
    finally:
        for stop in stops:
            stop()
        stepper.prof = None
        prof.stop()  # in a RECORD phase this fires on_trace_ready: the partial cycle is kept
        if sched is None:
            with atomic_path(output) as tmp:
                prof.export_chrome_trace(str(tmp))
        elif not stepper.written:
            print(
                f"perfview: the schedule {','.join(map(str, opts.schedule or ()))} never reached "
                f"its active steps ({stepper.steps} steps taken); call perfview_step() once per "
                "iteration, or use --step-every / --step-on-optimizer",
                file=sys.stderr,
            )
        elif len(stepper.written) > 1:
            names = ", ".join(p.name for p in stepper.written[1:])
            print(f"perfview: later profiling cycles written to {names}", file=sys.stderr)
