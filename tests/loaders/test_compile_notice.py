"""First use after an install (issue 20): numba compiles the trace scanner once (~15 s), and
neither the CLI nor the window may wait for it silently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from perfview.loaders import LOADERS, LoadOptions, service, trace
from perfview.loaders.base import Capabilities
from perfview.loaders.service import COMPILE_MESSAGE, FRESH, load

ROOT = Path(__file__).resolve().parents[2]
TINY = '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}'


def test_a_load_that_would_compile_says_so_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load reports COMPILE_MESSAGE before it parses a trace the scanner would read
    while the scanner's code is not on disk (faked here: compiling for real takes 15 s)."""
    from perfview.loaders.trace.scan import parallel

    path = tmp_path / "t.json"
    path.write_text(TINY)
    messages: list[str] = []
    scanned = LoadOptions(read_cache=False, write_cache=False, compiled=True)
    monkeypatch.setattr(parallel, "compiled", lambda: False)
    load(path, progress=lambda _f, m: messages.append(m), options=scanned)
    assert messages[0] == COMPILE_MESSAGE == trace.SCANNER.message
    messages.clear()
    load(path, progress=lambda _f, m: messages.append(m), options=FRESH)  # small: no scanner
    assert COMPILE_MESSAGE not in messages
    monkeypatch.setattr(parallel, "compiled", lambda: True)
    load(path, progress=lambda _f, m: messages.append(m), options=scanned)
    assert COMPILE_MESSAGE not in messages


def test_only_traces_the_scanner_reads_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.loaders.trace.scan import parallel

    path = tmp_path / "t.json"
    path.write_text(TINY)
    monkeypatch.setattr(parallel, "compiled", lambda: False)
    assert not trace.SCANNER.used_for(path)  # small: the general path, no compiled code
    assert not service.compile_pending(path)
    assert trace.SCANNER.used_for(path, True)  # a load's explicit choice wins over the size
    assert service.compile_pending(path, True)
    assert not trace.SCANNER.used_for(path, False)
    assert not service.compile_pending(tmp_path / "absent.json")


def test_each_loader_declares_what_the_service_may_do() -> None:
    """The service decides by capabilities: only traces go to a child (their columns
    round-trip through the cache's entry format); three formats have a compiled reader."""
    assert all(isinstance(loader.CAPABILITIES, Capabilities) for loader in LOADERS)
    assert [loader.NAME for loader in LOADERS if loader.CAPABILITIES.child] == ["trace"]
    readers = [loader.CAPABILITIES.compiled for loader in LOADERS]
    assert [r.what for r in readers if r is not None] == [
        "the trace scanner",
        "the CUDA snapshot walker",
        "memray's record replay",
    ]
    assert service.compiled_readers() == [r for r in readers if r is not None]


@pytest.mark.slow
def test_cli_says_it_compiles_with_a_cold_numba_cache(tmp_path: Path) -> None:
    """With NUMBA_CACHE_DIR empty, `perfview summary` prints one line on stderr before the
    compile (the only real compile in the tests); a second run finds the code and is quiet."""
    path = tmp_path / "t.json"
    event = '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}'
    copies = trace.SCANNER.min_bytes // len(event) + 1  # big enough for the scanner
    path.write_text('{"traceEvents":[' + ",".join([event] * copies) + "]}")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "PERFVIEW_CACHE_MAX_MB": "0",
    }
    command = [sys.executable, "-m", "perfview", "summary", str(path)]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines() == [f"perfview: {COMPILE_MESSAGE}"]
    assert "a" in first.stdout
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert second.stderr == ""


class _FakeProcess:
    """Records what `compile_ahead` would start, without spawning (a real compile: ~40 s)."""

    started: ClassVar[list[object]] = []

    def __init__(self, target: object, name: str, daemon: bool) -> None:
        self.target = target
        self.alive = False

    def start(self) -> None:
        self.alive = True
        _FakeProcess.started.append(self.target)

    def is_alive(self) -> bool:
        return self.alive


class _FakeContext:
    Process = _FakeProcess


def test_compile_ahead_covers_the_snapshot_walker_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's compile-ahead child also compiles the CUDA snapshot walker and memray's
    replay (~12-20 s holding the GIL each, once after an install); with everything on disk it
    starts nothing."""
    from perfview.loaders.cuda_snapshot import fast as cuda_snapshot_fast
    from perfview.loaders.memray.stream import warm
    from perfview.loaders.trace.scan import parallel

    monkeypatch.setattr(service.multiprocessing, "get_context", lambda _kind: _FakeContext)
    monkeypatch.setattr(service, "_compiling_what", ())  # restored after: what compile_ahead sets
    from perfview.core.layout import layout_kernels

    monkeypatch.setattr(parallel, "compiled", lambda: True)
    monkeypatch.setattr(layout_kernels, "compiled", lambda: True)  # its own test: elsewhere
    for part in (cuda_snapshot_fast, warm):
        monkeypatch.setattr(service, "_compiler", None)
        monkeypatch.setattr(cuda_snapshot_fast, "compiled", lambda: True)
        monkeypatch.setattr(warm, "compiled", lambda: True)
        _FakeProcess.started.clear()
        assert not service.compile_ahead()
        assert _FakeProcess.started == []
        monkeypatch.setattr(part, "compiled", lambda: False)
        assert service.compile_ahead()
        assert _FakeProcess.started == [service._compile_all]
        # the window's notice names what compiles: not the scanner, which is on disk
        assert "trace scanner" not in service.compile_message()
        assert service.compile_message().startswith("compiling ")
        assert service.compile_ahead()  # running already: not a second child
        assert len(_FakeProcess.started) == 1
        assert not trace.SCANNER.pending()  # the scanner is on disk: traces need not wait


def test_memray_warm_up_reads_its_shipped_captures() -> None:
    """The two tiny captures ship as package data and compile (or load) every replay kernel,
    so `compiled()` is true afterwards; inlined helpers are not counted (no code of their own)."""
    from perfview.loaders.memray.stream import warm

    warm.warm()
    assert warm.compiled()
    names = {k.py_func.__name__ for k in warm.kernels()}
    assert {"run", "unmap"} <= names
    assert "varint" not in names  # inlined
