"""Start-up timing of `perfview FILE` as a fresh process (used by bench_gui_probe --startup).

Launches `python -m perfview FILE` with `PERFVIEW_STARTUP_PROBE` pointing at a stamp file
(`perfview.startup_stamps`), under its own Xvfb when one is installed and no DISPLAY was given
(else the offscreen platform), and reads back launch → `window_shown` → `first_page_drawn`
(wall-clock seconds since this script started the process). The process is stopped once its
first page is drawn. Settings, the single-instance socket and the parse cache are private to
each run, so no run finds a window or a cache entry from the one before.

Python writes no bytecode under PYTHONDONTWRITEBYTECODE=1, so every start then compiles every
module from source (~0.25 s here); an installed perfview has its bytecode. The child runs with
bytecode on unless --no-bytecode, which keeps the caller's setting.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVENTS = (
    "main",
    "window_shown",
    "window_built",
    "preload_taken",  # a big .prof parsed in a child while the window started (perfview.preload)
    "loaded",
    "tab_built",
    "first_page_drawn",
)


@contextlib.contextmanager
def display() -> Iterator[dict[str, str]]:
    """Environment for the child's display: a private Xvfb, the caller's DISPLAY, or offscreen."""
    if os.environ.get("DISPLAY") or not shutil.which("Xvfb"):
        platform = {} if os.environ.get("DISPLAY") else {"QT_QPA_PLATFORM": "offscreen"}
        yield platform
        return
    number = 100 + os.getpid() % 400
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        socket = Path(f"/tmp/.X11-unix/X{number}")
        deadline = time.monotonic() + 10
        while not socket.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        yield {"DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
    finally:
        server.terminate()
        server.wait()


def launch_once(file: Path, env: dict[str, str], timeout: float = 60.0) -> dict[str, float]:
    """One fresh `perfview FILE`; seconds from launch to each stamp (missing: not reached)."""
    with tempfile.TemporaryDirectory(prefix="perfview-startup-") as tmp:
        stamps = Path(tmp) / "stamps.txt"
        child_env = {
            **env,
            "PERFVIEW_STARTUP_PROBE": str(stamps),
            "PERFVIEW_INSTANCE_NAME": f"perfview-probe-{os.getpid()}-{time.monotonic_ns()}",
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
            "PERFVIEW_CACHE_DIR": str(Path(tmp) / "cache"),
        }
        started = time.time()
        child = subprocess.Popen(
            [sys.executable, "-m", "perfview", str(file)],
            env=child_env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        seen: dict[str, float] = {}
        deadline = time.monotonic() + timeout
        try:
            while "first_page_drawn" not in seen and time.monotonic() < deadline:
                if child.poll() is not None:
                    break
                time.sleep(0.01)
                if stamps.exists():
                    for line in stamps.read_text().splitlines():
                        name, *values = line.split()
                        with contextlib.suppress(ValueError, IndexError):
                            seen[name] = float(values[0]) - started
                            seen[f"{name}_cpu"] = float(values[1])
        finally:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            try:
                _out, err = child.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                _out, err = child.communicate()
        if "first_page_drawn" not in seen:
            print(f"  no first page: {err.decode(errors='replace')[-400:]}", file=sys.stderr)
        return seen


PRELOAD_ENV = {"on": "1", "off": "0"}  # perfview.preload.ENV; "auto": the window decides


def startup(
    files: list[Path], runs: int, bytecode: bool, verbose: bool = True, preload: str = "auto"
) -> None:
    """Print the median (and range) of each stamp over `runs` launches of each file.

    `preload`: auto, on, off (PERFVIEW_PRELOAD for a big `.prof`, `perfview.preload`), or
    both: off and on launches alternate, so both meet the same load on a shared machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFVIEW_")}
    env.pop("QT_QPA_PLATFORM", None)  # display() chooses
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    modes = ["off", "on"] if preload == "both" else [preload]
    with display() as screen:
        env.update(screen)
        where = screen.get("DISPLAY") or screen.get("QT_QPA_PLATFORM", "the caller's DISPLAY")
        print(f"start-up of `perfview FILE`, {runs} launches each, display {where}")
        launch_once(files[0], env)  # writes bytecode where allowed; not counted
        for file in files:
            results: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
            for i in range(runs):
                for mode in modes if i % 2 == 0 else modes[::-1]:
                    extra = {"PERFVIEW_PRELOAD": PRELOAD_ENV[mode]} if mode in PRELOAD_ENV else {}
                    results[mode].append(launch_once(file, {**env, **extra}))
            for mode in modes:
                label = file.name if preload == "auto" else f"{file.name} (preload {mode})"
                _report(label, results[mode], verbose)


def _report(label: str, results: list[dict[str, float]], verbose: bool) -> None:
    parts = []
    for event in EVENTS if verbose else ("window_shown", "first_page_drawn"):
        values = [r[event] for r in results if event in r]
        if values:
            parts.append(
                f"{event} {statistics.median(values):.3f} s "
                f"({min(values):.2f}-{max(values):.2f}, n={len(values)})"
            )
    print(f"  {label}: " + "; ".join(parts), flush=True)
    cpu = {
        event: statistics.median(r[f"{event}_cpu"] for r in results)
        for event in EVENTS
        if all(f"{event}_cpu" in r for r in results)
    }
    shown = ", ".join(f"{k} {v:.3f}" for k, v in cpu.items())
    print(f"    process CPU s (median): {shown}")


if __name__ == "__main__":  # a module of another benchmark: running it only answers --help
    import argparse

    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
