"""What one profiling run is (`RunSpec`), the argv that performs it, and the runs folder index.

A RunSpec is pure data: the GUI builds one from its dialog, `perfview record` builds one from its
command line, and both turn it into the same child command
(`python -m perfview.runner.record --mode MODE -o OUT [opts] -- script.py args…`), so there is a
single recorder implementation. Runs without an explicit output go to a fresh folder under the
runs directory, each holding the profile and a `run.json` record (the "runs index").

Stdlib only: the recorder child imports this in whatever interpreter the user picked.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import perfview
from perfview.core import atomic

MODES: tuple[str, ...] = (
    "cprofile", "torch", "memory", "memory-lines", "memray", "cuda-memory", "sample", "scalene"
)  # fmt: skip
RUNS_ENV = "PERFVIEW_RUNS_DIR"
# Set in the child's environment when perfview's source dir was put on PYTHONPATH for it; the
# recorder removes that entry again so the user's script sees its own interpreter's sys.path.
BOOTSTRAP_ENV = "PERFVIEW_BOOTSTRAP_PATH"
RECORD_FILE = "run.json"

# Output file name inside a run folder, per mode.
_DEFAULT_NAMES = {
    "cprofile": "{stem}.prof",
    "torch": "{stem}.pt.trace.json.gz",
    "memory": "mprofile_{stamp}.dat",
    "memory-lines": "{stem}.memprof.txt",
    "memray": "{stem}.memray.bin",
    "cuda-memory": "{stem}_snapshot.pickle",
    "sample": "{stem}.speedscope.json",
    "scalene": "{stem}.scalene.json",
}

STATUS_RUNNING = "running"
STATUS_OK = "ok"
STATUS_FAILED = "failed"  # the script exited non-zero; a partial profile may exist
STATUS_CANCELLED = "cancelled"
STATUS_ERROR = "error"  # nothing was recorded (could not start, missing module, …)


@dataclass
class ScriptResult:
    """How a recorded script ended: its exit code and, when it raised, the traceback to print."""

    code: int
    report: str = ""


# What a mode function calls to run the user's script (record.run_script bound to the spec).
ScriptRunner = Callable[[], ScriptResult]


@dataclass(frozen=True)
class RunOptions:
    """Mode-specific switches. Only those that apply to the spec's mode reach the argv."""

    # torch
    record_shapes: bool = False
    profile_memory: bool = False
    with_stack: bool = False
    schedule: tuple[int, ...] | None = None  # wait, warmup, active[, repeat]
    step_every: float | None = None  # seconds; steps the schedule by time
    step_on_optimizer: bool = False  # step after every torch optimizer.step()
    # memory (mprof-style sampling)
    interval: float = 0.1
    include_children: bool = True
    # memory-lines
    functions: tuple[str, ...] = ()
    precision: int = 1
    # memray and sample: native (C/C++) frames too
    native: bool = False
    # cuda-memory: allocator history ring buffer length
    max_entries: int = 100_000
    # sample (py-spy)
    rate: int = 100
    subprocesses: bool = False
    gil: bool = False
    pid: int | None = None  # attach to this process instead of running a script
    duration: float | None = None  # seconds to sample an attached process (None: until it ends)


@dataclass(frozen=True)
class RunSpec:
    """One profiling job. Paths are absolute once `resolved()` ran (it is relative to a cwd)."""

    mode: str
    script: str
    args: tuple[str, ...] = ()
    cwd: str | None = None
    python: str | None = None  # interpreter for the child; None = the current one
    output: str | None = None  # None = a new folder in the runs directory
    options: RunOptions = field(default_factory=RunOptions)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")

    def resolved(self, base: str | None = None) -> RunSpec:
        """The same spec with script, cwd and output made absolute against `base` (or the cwd)."""
        root = Path(base or os.getcwd())
        cwd = str((root / self.cwd).resolve()) if self.cwd else str(root.resolve())
        script = str((root / self.script).resolve()) if self.script else ""
        output = str((root / self.output).resolve()) if self.output else None
        return replace(self, script=script, cwd=cwd, output=output)

    def with_output(self, output: str | Path) -> RunSpec:
        return replace(self, output=str(output))

    def record_args(self) -> list[str]:
        """Arguments after `python -m perfview.runner.record` (everything but the interpreter)."""
        argv = ["--mode", self.mode]
        if self.output:
            argv += ["-o", self.output]
        if self.cwd:
            argv += ["--cwd", self.cwd]
        argv += _option_args(self.mode, self.options)
        if not self.script:  # sample mode attached to --pid
            return argv
        return [*argv, "--", self.script, *self.args]

    def argv(self) -> list[str]:
        """The full child command line, interpreter first."""
        python = self.python or _current_python()
        return [python, "-m", "perfview.runner.record", *self.record_args()]

    def child_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """Environment for the child: unbuffered output and perfview importable from its source.

        perfview's own parent folder is prepended to PYTHONPATH so any interpreter (a venv
        without perfview) can run the recorder; the recorder strips it again at start-up.
        """
        env = dict(os.environ if base is None else base)
        root = str(Path(perfview.__file__).resolve().parent.parent)
        old = env.get("PYTHONPATH", "")
        env["PYTHONPATH"] = root + (os.pathsep + old if old else "")
        env[BOOTSTRAP_ENV] = root
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["args"] = list(self.args)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSpec:
        opts = dict(data.get("options") or {})
        if opts.get("schedule") is not None:
            opts["schedule"] = tuple(int(v) for v in opts["schedule"])
        opts["functions"] = tuple(opts.get("functions") or ())
        known = RunOptions.__dataclass_fields__
        options = RunOptions(**{k: v for k, v in opts.items() if k in known})
        return cls(
            mode=str(data["mode"]),
            script=str(data["script"]),
            args=tuple(str(a) for a in data.get("args") or ()),
            cwd=data.get("cwd"),
            python=data.get("python"),
            output=data.get("output"),
            options=options,
        )


def _current_python() -> str:
    import sys

    return sys.executable or "python3"


def _option_args(mode: str, opts: RunOptions) -> list[str]:
    out: list[str] = []
    if mode == "torch":
        out += ["--record-shapes"] if opts.record_shapes else []
        out += ["--profile-memory"] if opts.profile_memory else []
        out += ["--with-stack"] if opts.with_stack else []
        if opts.schedule:
            out += ["--schedule", ",".join(str(v) for v in opts.schedule)]
        if opts.step_every:
            out += ["--step-every", repr(float(opts.step_every))]
        out += ["--step-on-optimizer"] if opts.step_on_optimizer else []
    elif mode == "memory":
        out += ["--interval", repr(float(opts.interval))]
        out += [] if opts.include_children else ["--no-children"]
    elif mode == "memory-lines":
        for name in opts.functions:
            out += ["--function", name]
        out += ["--precision", str(opts.precision)]
    elif mode == "memray":
        out += ["--native"] if opts.native else []
    elif mode == "cuda-memory":
        out += ["--max-entries", str(int(opts.max_entries))]
    elif mode == "sample":
        out += ["--rate", str(opts.rate)]
        out += ["--native"] if opts.native else []
        out += ["--subprocesses"] if opts.subprocesses else []
        out += ["--gil"] if opts.gil else []
        out += ["--pid", str(opts.pid)] if opts.pid is not None else []
        out += ["--duration", repr(float(opts.duration))] if opts.duration else []
    return out


def parse_schedule(text: str) -> tuple[int, ...]:
    """`"wait,warmup,active[,repeat]"` → ints; repeat defaults to 1 (one trace, not endless)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) not in (3, 4):
        raise ValueError("schedule must be wait,warmup,active[,repeat]")
    values = tuple(int(p) for p in parts)
    if any(v < 0 for v in values) or values[2] < 1:
        raise ValueError("schedule values must be >= 0 and active >= 1")
    return values if len(values) == 4 else (*values, 1)


# --- runs directory and index ---------------------------------------------------------------


def runs_dir() -> Path:
    """`$PERFVIEW_RUNS_DIR`, else `$XDG_DATA_HOME/perfview/runs` (~/.local/share by default)."""
    override = os.environ.get(RUNS_ENV)
    if override:
        return Path(override)
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "perfview" / "runs"


def default_output_name(spec: RunSpec, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now))
    return _DEFAULT_NAMES[spec.mode].format(stem=_stem(spec), stamp=stamp)


def _stem(spec: RunSpec) -> str:
    """The script's name, or `pid<N>` for a run attached to a process."""
    return Path(spec.script).stem if spec.script else f"pid{spec.options.pid}"


def new_run_dir(spec: RunSpec, root: Path | None = None, now: float | None = None) -> Path:
    """Create `<runs>/<YYYYmmdd-HHMMSS>-<script>-<mode>/` (suffixed -2, -3… if taken)."""
    root = root or runs_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in _stem(spec))
    base = f"{stamp}-{stem}-{spec.mode}"
    root.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        path = root / (base if n == 1 else f"{base}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free run folder name under {root}")


def prepare_output(spec: RunSpec, root: Path | None = None) -> tuple[RunSpec, Path | None]:
    """Give a spec without output a new run folder. Returns (spec with output, run folder)."""
    if spec.output:
        return spec, None
    now = time.time()
    folder = new_run_dir(spec, root, now)
    return spec.with_output(folder / default_output_name(spec, now)), folder


@dataclass
class RunRecord:
    """One entry of the runs index, stored as `run.json` inside the run's folder."""

    folder: str
    mode: str
    script: str
    args: list[str]
    output: str
    started: float
    ended: float | None = None
    status: str = STATUS_RUNNING
    exit_code: int | None = None
    spec: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, spec: RunSpec, folder: Path) -> RunRecord:
        rec = cls(
            folder=str(folder),
            mode=spec.mode,
            script=spec.script,
            args=list(spec.args),
            output=spec.output or "",
            started=time.time(),
            spec=spec.to_dict(),
        )
        rec.save()
        return rec

    def finish(self, status: str, exit_code: int | None) -> None:
        self.ended, self.status, self.exit_code = time.time(), status, exit_code
        self.save()

    @property
    def output_exists(self) -> bool:
        return bool(self.output) and Path(self.output).is_file()

    def save(self) -> None:
        path = Path(self.folder) / RECORD_FILE
        # atomic and durable (fsync before the rename): a reader never sees half a record,
        # and a crash right after does not leave an empty one
        atomic.write_text(path, json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, folder: Path) -> RunRecord:
        data = json.loads((folder / RECORD_FILE).read_text())
        known = cls.__dataclass_fields__
        data = {k: v for k, v in data.items() if k in known}
        data["folder"] = str(folder)  # folders may have been moved with their records
        return cls(**data)


def list_runs(root: Path | None = None) -> list[RunRecord]:
    """Every readable run record under the runs directory, newest first."""
    root = root or runs_dir()
    if not root.is_dir():
        return []
    records = []
    for folder in root.iterdir():
        if (folder / RECORD_FILE).is_file():
            try:
                records.append(RunRecord.load(folder))
            except (OSError, ValueError, TypeError):
                continue  # a damaged record hides that run rather than the whole list
    records.sort(key=lambda r: r.started, reverse=True)
    return records


def delete_run(record: RunRecord, root: Path | None = None) -> None:
    """Remove a run folder; refuses anything outside the runs directory."""
    root = (root or runs_dir()).resolve()
    folder = Path(record.folder).resolve()
    if folder.parent != root:
        raise ValueError(f"{folder} is not a run folder of {root}")
    shutil.rmtree(folder)


def command_line(argv: Sequence[str]) -> str:
    """A shell-quoted command line for logs."""
    import shlex

    return shlex.join(argv)
