"""The parsed-column cache: a reopened trace equals a fresh parse, stale and corrupt entries
are never served, the size bound evicts the least recently used entry, and the child-process
parse used by background loads hands back the same Bundle."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.errors import LoadError
from perfview.core.model import Bundle
from perfview.loaders import cache, isolate, load, trace
from tests.conftest import sample

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
NCCL = "kineto_gpu/hta_nccl_data.json.gz"
TABLES = ("events", "lanes", "instants", "counters", "flows", "memory")


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(root))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")  # cache even the small samples
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "100")
    return root


def _copy(rel: str, tmp_path: Path) -> Path:
    src = sample(rel)
    dst = tmp_path / src.name
    dst.write_bytes(src.read_bytes())
    return dst


def assert_same(a: Bundle, b: Bundle) -> None:
    assert a.timeline is not None
    assert b.timeline is not None
    for name in TABLES:
        left, right = getattr(a.timeline, name), getattr(b.timeline, name)
        assert left.equals(right), name
        assert list(left.dtypes) == list(right.dtypes), name
    assert bytes(a.timeline.args.blob[:]) == bytes(b.timeline.args.blob[:])
    assert np.array_equal(a.timeline.args.starts, b.timeline.args.starts)
    assert np.array_equal(a.timeline.args.lens, b.timeline.args.lens)
    assert a.timeline.meta == b.timeline.meta
    assert (a.timeline.origin_ns, a.timeline.duration_ns) == (
        b.timeline.origin_ns,
        b.timeline.duration_ns,
    )
    assert (a.counts, a.warnings, a.duration_ns, a.format) == (
        b.counts,
        b.warnings,
        b.duration_ns,
        b.format,
    )


def test_reopen_comes_from_cache_and_equals_parse(tmp_path: Path, cache_env: Path) -> None:
    path = _copy(RESNET, tmp_path)
    first = load(path)
    cache.flush()
    entries = list(cache_env.iterdir())
    assert len(entries) == 1
    assert not list(tmp_path.glob("*.npy"))  # never beside the input
    again = load(path)
    assert_same(first, again)
    assert again.counts["events"] == 75718
    assert again.timeline is not None
    row = int(np.flatnonzero(again.timeline.events["ext_id"].to_numpy() >= 0)[0])
    assert again.timeline.args.get(row) == first.timeline.args.get(row)  # type: ignore[union-attr]


def test_changed_file_misses(tmp_path: Path, cache_env: Path) -> None:
    path = _copy(NCCL, tmp_path)
    load(path)
    cache.flush()
    old_key = cache.key(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert cache.key(path) != old_key
    assert cache.get(path) is None


def test_corrupt_entry_is_dropped_and_rebuilt(tmp_path: Path, cache_env: Path) -> None:
    path = _copy(NCCL, tmp_path)
    fresh = load(path)
    cache.flush()
    entry = cache_env / cache.key(path)
    (entry / "events.ts.npy").write_bytes(b"garbage")
    assert cache.get(path) is None
    assert not entry.exists()
    assert_same(fresh, load(path))
    cache.flush()
    assert entry.exists()


def test_lru_eviction_keeps_the_bound(tmp_path: Path, cache_env: Path) -> None:
    a, b = _copy(NCCL, tmp_path), _copy(RESNET, tmp_path)
    cache.put(a, trace.load(a))
    cache.put(b, trace.load(b))
    sizes = {p.name: sum(f.stat().st_size for f in p.iterdir()) for p in cache_env.iterdir()}
    assert len(sizes) == 2
    os.utime(cache_env / cache.key(a) / "meta.json", (1, 1))  # a is the oldest used
    cache.evict(limit=max(sizes.values()) + 1)
    assert not (cache_env / cache.key(a)).exists()
    assert (cache_env / cache.key(b)).exists()


def test_disabled_and_non_trace_files_are_not_cached(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _copy(NCCL, tmp_path)
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    load(path)
    cache.flush()
    assert not cache_env.exists() or not list(cache_env.iterdir())


def test_child_process_parse_equals_in_process(tmp_path: Path, cache_env: Path) -> None:
    path = _copy(NCCL, tmp_path)
    seen: list[float] = []
    bundle = isolate.load(path, lambda f, m: seen.append(f))
    assert bundle is not None
    assert_same(trace.load(path), bundle)
    assert seen
    assert seen == sorted(seen)


def test_background_load_uses_child_and_reports_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFVIEW_ISOLATE_MIN_MB", "0")
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": []}')
    out: dict[str, object] = {}

    def run() -> None:
        try:
            load(bad)
        except LoadError as exc:
            out["error"] = str(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert "no events" in str(out["error"])


def _in_thread(fn: Any) -> Any:
    out: dict[str, Any] = {}

    def run() -> None:
        out["value"] = fn()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out["value"]


def test_background_load_scans_in_process_and_isolates_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled scanner leaves the GIL free, so a background load uses it in-process;
    only files it refuses (odd values) go to a child for the general path. Until its code is
    compiled (right after an install), every big trace goes to the child."""
    from perfview.loaders.trace.scan import parallel as trace_parallel

    trace_parallel.warm()  # compiles it on a fresh clone: CI's first test may get here first
    assert trace_parallel.compiled()
    monkeypatch.setenv("PERFVIEW_ISOLATE_MIN_MB", "0")
    children: list[Path] = []
    real = isolate.load

    def child(path: Path, progress: Any) -> Bundle | None:
        children.append(path)
        return real(path, progress)

    monkeypatch.setattr(isolate, "load", child)
    plain = tmp_path / "plain.json"
    plain.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}')
    bundle = _in_thread(lambda: load(plain))
    assert bundle.counts["slices"] == 1
    assert children == []
    odd = tmp_path / "odd.json"
    odd.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":"1","dur":2}]}')
    bundle = _in_thread(lambda: load(odd))
    assert bundle.counts["slices"] == 1
    assert children == [odd]
    monkeypatch.setattr(trace_parallel, "compiled", lambda: False)
    fresh = tmp_path / "fresh.json"
    fresh.write_bytes(plain.read_bytes())
    bundle = _in_thread(lambda: load(fresh))
    assert bundle.counts["slices"] == 1
    assert children == [odd, fresh]


def test_cache_writes_from_daemon_threads_finish_before_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GUI loads on Qt pool threads, which Python treats as daemons; the write they start
    must not inherit that, or the interpreter's exit cuts the entry off half-written."""
    started: list[threading.Thread] = []
    monkeypatch.setattr(
        cache, "put", lambda path, bundle: started.append(threading.current_thread())
    )
    path = _copy(NCCL, tmp_path)
    bundle = trace.load(path)
    loader = threading.Thread(target=cache.put_later, args=(path, bundle), daemon=True)
    loader.start()
    loader.join()
    cache.flush()
    assert len(started) == 1
    assert not started[0].daemon


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_cache_writes_run_at_the_lowest_cpu_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write competes with building the tab on a 2-core machine: it yields the CPU."""
    seen: list[int] = []
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # this thread's niceness (Linux: per thread)
    monkeypatch.setattr(
        cache, "put", lambda path, bundle: seen.append(os.getpriority(os.PRIO_PROCESS, 0))
    )
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}')
    cache.put_later(path, trace.load(path))
    cache.flush()
    assert seen == [19]
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours  # the rest of the process is untouched
