"""The parsed-column cache: a reopened trace equals a fresh parse, stale and corrupt entries
are never served, and the size bound evicts the least recently used entry."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from perfview.core.model import Bundle
from perfview.loaders import load, trace
from perfview.store import cache_bound, parsed_columns, write_gates
from tests.loaders.cache_setup import sample_copy, use_cache_dir

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
NCCL = "kineto_gpu/hta_nccl_data.json.gz"
TABLES = ("events", "lanes", "instants", "counters", "flows", "memory")


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_cache_dir(tmp_path, monkeypatch, max_mb=100)


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
    path = sample_copy(RESNET, tmp_path)
    first = load(path)
    parsed_columns.flush()
    entries = list(cache_env.iterdir())
    assert len(entries) == 1
    assert not list(tmp_path.glob("*.npy"))  # never beside the input
    again = load(path)
    assert_same(first, again)
    assert again.counts["events"] == 75718
    assert again.timeline is not None
    row = int(np.flatnonzero(again.timeline.events["ext_id"].to_numpy() >= 0)[0])
    assert again.timeline.args.get(row) == first.timeline.args.get(row)  # type: ignore[union-attr]


def test_work_beside_a_put_runs_while_it_writes_and_changes_nothing_stored(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`put(beside=…)` (the helper process makes the pages' entries so, while the disk takes
    the columns): the work starts once the columns to write are taken, runs on a thread of
    its own while the parts are written, and has ended when `put` returns; a column it adds
    to the events table is not stored."""
    from perfview.store import artifacts

    path = sample_copy(RESNET, tmp_path)
    bundle = trace.load(path)
    tl = bundle.timeline
    assert tl is not None
    steps: list[str] = []
    monkeypatch.setattr(artifacts, "checkpoint", steps.append)
    seen: list[str] = []

    def beside() -> None:
        seen.append(threading.current_thread().name)
        tl.events["beside"] = 1  # a page's own column, once the columns were taken
        seen.append("end")

    assert parsed_columns.put(path, bundle, beside=beside) is not None
    assert seen == ["perfview-cache-beside", "end"]
    assert "published" in steps  # the entry is whole once put returns
    again = parsed_columns.get(path)
    assert again is not None
    assert again.timeline is not None
    assert "beside" not in again.timeline.events
    tl.events.pop("beside")
    assert_same(bundle, again)


def test_changed_file_misses(tmp_path: Path, cache_env: Path) -> None:
    path = sample_copy(NCCL, tmp_path)
    load(path)
    parsed_columns.flush()
    old_key = parsed_columns.key(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert parsed_columns.key(path) != old_key
    assert parsed_columns.get(path) is None


def test_corrupt_entry_is_dropped_and_rebuilt(tmp_path: Path, cache_env: Path) -> None:
    path = sample_copy(NCCL, tmp_path)
    fresh = load(path)
    parsed_columns.flush()
    entry = cache_env / parsed_columns.key(path)
    (entry / "events.ts").write_bytes(b"garbage")
    assert parsed_columns.get(path) is None
    assert not entry.exists()
    again = load(path)
    note = f"{parsed_columns.DAMAGED} (column events/ts); perfview re-read the file"
    assert again.warnings[-1] == note  # the re-parse says why it was needed
    again.warnings.remove(note)
    assert_same(fresh, again)
    parsed_columns.flush()
    assert entry.exists()
    assert_same(fresh, load(path))  # the rebuilt entry does not carry the note


def test_lru_eviction_keeps_the_bound(tmp_path: Path, cache_env: Path) -> None:
    a, b = sample_copy(NCCL, tmp_path), sample_copy(RESNET, tmp_path)
    parsed_columns.put(a, trace.load(a))
    parsed_columns.put(b, trace.load(b))
    sizes = {p.name: sum(f.stat().st_size for f in p.iterdir()) for p in cache_env.iterdir()}
    assert len(sizes) == 2
    os.utime(cache_env / parsed_columns.key(a) / "manifest.json", (1, 1))  # a is the oldest used
    cache_bound.evict(limit=max(sizes.values()) + 1)
    assert not (cache_env / parsed_columns.key(a)).exists()
    assert (cache_env / parsed_columns.key(b)).exists()


def test_disabled_and_non_trace_files_are_not_cached(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sample_copy(NCCL, tmp_path)
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    load(path)
    parsed_columns.flush()
    assert not cache_env.exists() or not list(cache_env.iterdir())


def test_cache_writes_from_daemon_threads_finish_before_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GUI loads on Qt pool threads, which Python treats as daemons; the write they start
    must not inherit that, or the interpreter's exit cuts the entry off half-written."""
    started: list[threading.Thread] = []
    monkeypatch.setattr(
        parsed_columns, "put", lambda path, bundle: started.append(threading.current_thread())
    )
    path = sample_copy(NCCL, tmp_path)
    bundle = trace.load(path)
    loader = threading.Thread(target=parsed_columns.put_later, args=(path, bundle), daemon=True)
    loader.start()
    loader.join()
    parsed_columns.flush()
    assert len(started) == 1
    assert not started[0].daemon


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_cache_writes_wait_for_their_gate_at_normal_priority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window holds the write back until its new tab is drawn (it opens the gate); the
    writer keeps its normal CPU priority (niced, it was preempted while holding the GIL on a
    busy machine, and the GUI thread froze waiting for it)."""
    seen: list[int] = []
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # this thread's niceness (Linux: per thread)
    monkeypatch.setattr(
        parsed_columns,
        "put",
        lambda _path, _bundle: seen.append(os.getpriority(os.PRIO_PROCESS, 0)),
    )
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}')
    gate = write_gates.WriteGate(cap_s=None)
    parsed_columns.put_later(path, trace.load(path), gate)
    writer = next(t for t in threading.enumerate() if t.name == "perfview-cache-put")
    writer.join(0.2)
    assert writer.is_alive()  # waiting for the gate
    assert seen == []
    gate.open()
    writer.join(10)
    assert seen == [ours]
    parsed_columns.flush()


def test_flush_opens_the_gates_of_the_writes_it_waits_for() -> None:
    """A test, a benchmark or a CLI that flushes gets its entries written now, not after
    the window's cap."""
    done: list[str] = []
    gate = write_gates.WriteGate(cap_s=None)
    write_gates.start("perfview-test-put", done.append, "written", gate=gate)
    write_gates.flush()
    assert gate.is_open()
    assert done == ["written"]


def test_write_gates_open_now_or_by_themselves_after_their_cap() -> None:
    assert write_gates.NOW.is_open()
    assert write_gates.WriteGate().is_open()  # cap 0: the CLI's, open from the start
    capped = write_gates.WriteGate(cap_s=0.01)
    assert not capped.is_open()
    capped.wait()  # returns after the cap although nobody opened it
    assert not capped.is_open()
    capped.open()
    assert capped.is_open()
